package gateway

import "sync"

// sendQueue is a socket's outbound queue, bounded in bytes rather than frames: a frame may be
// anything from 100 bytes to 128 KiB, so a count says nothing about the memory it holds.
type sendQueue struct {
	mu     sync.Mutex
	frames [][]byte
	bytes  int
	limit  int
	peak   int // the most bytes ever queued, for tests and logs
	// ready holds one token while frames wait, so the writer can select on it.
	ready chan struct{}
}

func newSendQueue(limit int) *sendQueue {
	return &sendQueue{limit: limit, ready: make(chan struct{}, 1)}
}

// push queues frame unless that would take the queue past its byte budget; false means it
// was refused.
func (q *sendQueue) push(frame []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.bytes+len(frame) > q.limit {
		return false
	}
	q.frames = append(q.frames, frame)
	q.bytes += len(frame)
	q.peak = max(q.peak, q.bytes)
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// pop takes the oldest frame; false means the queue is empty.
func (q *sendQueue) pop() ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.frames) == 0 {
		return nil, false
	}
	frame := q.frames[0]
	q.frames[0] = nil
	q.frames = q.frames[1:]
	if len(q.frames) == 0 {
		q.frames = nil // let the backing array go: an idle computer holds none
	}
	q.bytes -= len(frame)
	return frame, true
}

// setLimit changes the byte budget (a socket gets the larger one once its hello succeeds).
func (q *sendQueue) setLimit(limit int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.limit = limit
}

// queued is how many bytes wait.
func (q *sendQueue) queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bytes
}

// peakBytes is the most bytes that ever waited at once.
func (q *sendQueue) peakBytes() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.peak
}
