package gateway

import (
	"sync"

	"trap-sandbox/internal/protocol"
)

// result is what a pending gateway→computer request receives: the computer's response, or
// the error that ended the wait. It holds the Response rather than the whole frame: the
// channel's buffer is allocated and the value copied for every request.
type result struct {
	resp Response
	err  error
}

// pendingTable holds a socket's gateway→computer requests that await a computer_response,
// by messageId. Once failAll has run it refuses new entries, so no request can wait on a
// socket that will never answer.
type pendingTable struct {
	mu     sync.Mutex
	byID   map[string]chan result
	max    int   // entries allowed at once
	failed error // set by failAll
}

func newPendingTable(max int) *pendingTable {
	return &pendingTable{byID: make(map[string]chan result), max: max}
}

// add registers messageID and returns the channel its result arrives on (buffered, one
// value). After failAll it returns failAll's error instead; with max entries waiting it
// returns a busy error (the host's burst, not the computer's fault).
func (p *pendingTable) add(messageID string) (chan result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed != nil {
		return nil, p.failed
	}
	if len(p.byID) >= p.max {
		return nil, protocol.Errorf(protocol.CodeBusy,
			"the computer already has %d gateway requests in flight (the limit); retry shortly", p.max)
	}
	ch := make(chan result, 1)
	p.byID[messageID] = ch
	return ch, nil
}

// take removes and returns the entry for messageID, or nil if there is none (a late or
// unknown answer).
func (p *pendingTable) take(messageID string) chan result {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch := p.byID[messageID]
	delete(p.byID, messageID)
	return ch
}

// failAll ends every waiting request with err and makes later adds fail with it too. Only
// the first call has an effect.
func (p *pendingTable) failAll(err error) {
	p.mu.Lock()
	if p.failed != nil {
		p.mu.Unlock()
		return
	}
	p.failed = err
	waiting := p.byID
	p.byID = nil
	p.mu.Unlock()
	for _, ch := range waiting {
		ch <- result{err: err} // buffered, one send per channel
	}
}

// len is how many requests are waiting.
func (p *pendingTable) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byID)
}
