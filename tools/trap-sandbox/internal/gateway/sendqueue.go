package gateway

import "sync"

// sendQueue is a socket's outbound queue, bounded in bytes rather than frames: a frame may be
// anything from 100 bytes to 128 KiB, so a count says nothing about the memory it holds.
//
// The budget is whose fault a full queue is. A host's request counts against everything
// queued (past it the host's caller gets busy); an answer to the computer's own request
// counts against the answers queued alone (past it the computer does not read what it asked
// for: 1013). So the host's frames, which a slow link delivers slowly, never crowd out the
// computer's answers, and the queue holds at most twice its budget.
//
// It also hands out the socket's one writer role: the push that finds no writer running makes
// its caller the writer, which drains the queue and gives the role back when the queue is
// empty (session.go). So a writer goroutine exists only while there is something to write: an
// idle computer holds none.
type sendQueue struct {
	mu     sync.Mutex
	frames []queuedFrame
	bytes  int
	// answerBytes is the part of bytes that answers the computer's own requests.
	answerBytes int
	limit       int
	peak        int // the most bytes ever queued, for tests and logs
	// writing is set while a writer holds the role; writerDone is closed when it gives the
	// role back (made only when someone waits for that: seal).
	writing    bool
	writerDone chan struct{}
	// sealed is set once the session closes: no frame is queued after it and nobody else
	// becomes the writer (finishWrites writes the last frames).
	sealed bool
}

// queuedFrame is a frame that waits, and whether it answers the computer (frameAnswer).
type queuedFrame struct {
	data []byte
	kind frameKind
}

// frameKind says whose a queued frame is, for the budget: the host's request (the gateway's
// own idle probe counts as one) or the answer to one of the computer's requests.
type frameKind bool

const (
	frameRequest frameKind = false
	frameAnswer  frameKind = true
)

func newSendQueue(limit int) *sendQueue {
	return &sendQueue{limit: limit}
}

// pushResult is what push did with a frame.
type pushResult int

const (
	pushQueued pushResult = iota // queued; a writer is running and will write it
	pushWriter                   // queued, and the caller is now the writer: it must drain
	pushFull                     // refused: over the byte budget
	pushSealed                   // refused: the session is closing
)

// push queues frame unless that would take the queue past its byte budget (for kind: see
// sendQueue) or the session is closing.
func (q *sendQueue) push(frame []byte, kind frameKind) pushResult {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.sealed:
		return pushSealed
	case kind == frameAnswer && q.answerBytes+len(frame) > q.limit:
		return pushFull
	case kind == frameRequest && q.bytes+len(frame) > q.limit:
		return pushFull
	}
	q.frames = append(q.frames, queuedFrame{data: frame, kind: kind})
	q.bytes += len(frame)
	if kind == frameAnswer {
		q.answerBytes += len(frame)
	}
	q.peak = max(q.peak, q.bytes)
	if q.writing {
		return pushQueued
	}
	q.writing = true
	return pushWriter
}

// claim makes the caller the writer of frame without queueing it: when the queue is empty, no
// writer runs and frame fits the byte budget, the caller writes frame at once (and then
// drains what was queued meanwhile, as any writer), so passing it through the queue would
// only cost a copy. False: push it instead.
func (q *sendQueue) claim(frame []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.sealed || q.writing || len(q.frames) > 0 || len(frame) > q.limit {
		return false
	}
	q.writing = true
	return true
}

// next takes the oldest frame for the writer; when the queue is empty it gives the writer
// role back in the same step (so a frame pushed meanwhile finds no writer and makes a new
// one) and returns false.
func (q *sendQueue) next() ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if frame, ok := q.popLocked(); ok {
		return frame, true
	}
	q.releaseLocked()
	return nil, false
}

// keepIfQueued ends a claimed write (claim): true when frames were queued meanwhile, the
// caller keeping the writer role for a writer that drains them; false, the role given back.
func (q *sendQueue) keepIfQueued() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.frames) > 0 {
		return true
	}
	q.releaseLocked()
	return false
}

// release gives the writer role back without draining (the writer's write failed).
func (q *sendQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.releaseLocked()
}

func (q *sendQueue) releaseLocked() {
	q.writing = false
	if q.writerDone != nil {
		close(q.writerDone)
		q.writerDone = nil
	}
}

// seal refuses every later push and returns a channel closed once no writer runs (at once if
// none does). After it, pop takes what is left.
func (q *sendQueue) seal() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sealed = true
	done := make(chan struct{})
	if !q.writing {
		close(done)
		return done
	}
	if q.writerDone == nil {
		q.writerDone = make(chan struct{})
	}
	return q.writerDone
}

// pop takes the oldest frame; false means the queue is empty. Only finishWrites calls it,
// after seal's channel closed.
func (q *sendQueue) pop() ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.popLocked()
}

func (q *sendQueue) popLocked() ([]byte, bool) {
	if len(q.frames) == 0 {
		return nil, false
	}
	frame := q.frames[0]
	q.frames[0] = queuedFrame{}
	q.frames = q.frames[1:]
	if len(q.frames) == 0 {
		q.frames = nil // let the backing array go: an idle computer holds none
	}
	q.bytes -= len(frame.data)
	if frame.kind == frameAnswer {
		q.answerBytes -= len(frame.data)
	}
	return frame.data, true
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

// writerRunning reports whether a writer holds the role now (for tests that must know the
// next frame finds none).
func (q *sendQueue) writerRunning() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.writing
}
