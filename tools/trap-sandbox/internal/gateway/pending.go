package gateway

import (
	"sync"
	"time"

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
//
// Of the max entries (what the computer takes), one is kept for the gateway's own request,
// its idle probe: hosts may fill the rest, and however long their requests run, the probe
// still goes out, so the computer still hears from the gateway within livenessMs and a
// crashed daemon is still found. Hosts get max-1.
type pendingTable struct {
	mu   sync.Mutex
	byID map[string]pendingRequest
	max  int // entries allowed at once, the gateway's own included
	// ownID is the messageId of the gateway's own request in flight, "" when none.
	ownID  string
	failed error // set by failAll
	// gaveUp holds the host requests whose caller stopped waiting before the computer
	// answered (abandon), until their late answer comes (take): a run that does not yield
	// holds the computer all the same, and heldBy names it. At most maxGaveUp.
	gaveUp map[string]pendingRequest
}

// pendingRequest is one entry: where its result goes, and what was asked when (heldBy).
type pendingRequest struct {
	ch   chan result
	typ  string
	sent time.Time
	// abandoned is set on a gaveUp entry.
	abandoned bool
}

// maxGaveUp bounds a socket's gaveUp entries: a computer that never answers them would grow
// it without end. Past it, the oldest goes.
const maxGaveUp = 16

// gaveUpHolds is how long after it was sent a request given up on may still hold the
// computer, for heldBy: CC ends code that does not yield after 7 s, with slack. An older one
// the computer never answered is not what holds it.
const gaveUpHolds = 10 * time.Second

// requester says whose request an entry is: a host's (HTTP API, CLI, MCP, a module, another
// replica) or the gateway's own (the idle probe).
type requester bool

const (
	byHost    requester = false
	byGateway requester = true
)

// newPendingTable makes a table of max entries; max must be at least 2 (Config.withDefaults).
func newPendingTable(max int) *pendingTable {
	return &pendingTable{byID: make(map[string]pendingRequest), max: max}
}

// hostLimit is how many host requests may wait at once: max, less the gateway's own slot.
func (p *pendingTable) hostLimit() int { return p.max - 1 }

// add registers messageID, a request of type typ sent at sent, and returns the channel its result arrives on (buffered, one
// value). After failAll it returns failAll's error instead. A host request with hostLimit
// host requests waiting gets a busy error (the host's burst, not the computer's fault), and
// so does a gateway request while another of the gateway's own waits.
func (p *pendingTable) add(messageID string, by requester, typ string, sent time.Time) (chan result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed != nil {
		return nil, p.failed
	}
	if by == byGateway {
		if p.ownID != "" {
			return nil, protocol.Errorf(protocol.CodeBusy, "the gateway's own request to the computer is still in flight")
		}
		p.ownID = messageID
	} else if p.hostsLocked() >= p.hostLimit() {
		return nil, protocol.Errorf(protocol.CodeBusy,
			"the computer already has %d requests in flight (the limit: it takes %d, one kept for the gateway's liveness probe); retry shortly",
			p.hostLimit(), p.max)
	}
	ch := make(chan result, 1)
	p.byID[messageID] = pendingRequest{ch: ch, typ: typ, sent: sent}
	return ch, nil
}

// hostsLocked is how many host requests wait; p.mu must be held.
func (p *pendingTable) hostsLocked() int {
	if p.ownID != "" {
		return len(p.byID) - 1
	}
	return len(p.byID)
}

// take removes and returns the entry for messageID, or nil if there is none (a late or
// unknown answer; a late one's request is no longer given up on).
func (p *pendingTable) take(messageID string) chan result {
	p.mu.Lock()
	defer p.mu.Unlock()
	entry, ok := p.byID[messageID]
	if !ok {
		delete(p.gaveUp, messageID)
		return nil
	}
	delete(p.byID, messageID)
	if messageID == p.ownID {
		p.ownID = ""
	}
	return entry.ch
}

// abandon is take for a request whose caller stopped waiting (its timeout): a host's run
// (lua.exec, shell.run) the computer has not answered is kept in gaveUp until its late answer
// comes, for heldBy.
func (p *pendingTable) abandon(messageID string) chan result {
	p.mu.Lock()
	defer p.mu.Unlock()
	entry, ok := p.byID[messageID]
	if !ok {
		return nil
	}
	delete(p.byID, messageID)
	if messageID == p.ownID {
		p.ownID = ""
		return entry.ch
	}
	if entry.typ != protocol.TypeLuaExec && entry.typ != protocol.TypeShellRun {
		// Only a run is code that may hold the computer; a ping given up on was held itself.
		return entry.ch
	}
	if p.gaveUp == nil {
		p.gaveUp = make(map[string]pendingRequest)
	}
	if len(p.gaveUp) >= maxGaveUp {
		oldest := ""
		for id, e := range p.gaveUp {
			if oldest == "" || e.sent.Before(p.gaveUp[oldest].sent) {
				oldest = id
			}
		}
		delete(p.gaveUp, oldest)
	}
	p.gaveUp[messageID] = pendingRequest{typ: entry.typ, sent: entry.sent, abandoned: true}
	return entry.ch
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
	for _, entry := range waiting {
		entry.ch <- result{err: err} // buffered, one send per channel
	}
}

// len is how many requests are waiting.
func (p *pendingTable) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byID)
}

// heldBy is the oldest host request the computer has not answered that was sent before sent,
// still waited for or given up on (abandon) at most gaveUpHolds before it: what a request that
// timed out waited behind (a run that does not yield holds the whole computer), for its
// timeout to name (busyWith). ok is false when there is none.
func (p *pendingTable) heldBy(sent time.Time) (held pendingRequest, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, entry := range p.byID {
		if id != p.ownID && entry.sent.Before(sent) && (!ok || entry.sent.Before(held.sent)) {
			held, ok = entry, true
		}
	}
	for id, entry := range p.gaveUp {
		if sent.Sub(entry.sent) >= gaveUpHolds {
			delete(p.gaveUp, id) // CC has ended it by now, if it held the computer
			continue
		}
		if entry.sent.Before(sent) && (!ok || entry.sent.Before(held.sent)) {
			held, ok = entry, true
		}
	}
	return held, ok
}
