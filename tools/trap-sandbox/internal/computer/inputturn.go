package computer

import (
	"context"
	"sync"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
)

// inputTurns hands out each computer's input turn: one caller's input of several
// screen.input requests (a long send_text) is typed whole, never interleaved with another
// caller's input to the same computer (another agent's, the web console's keys). A caller
// waits for the turn at most its own call's time, and holds it at most its own call's time
// (bounded by MaxTimeout), so a hung caller delays others, never blocks them for good.
type inputTurns struct {
	mu    sync.Mutex
	turns map[string]*inputTurn
}

type inputTurn struct {
	ch    chan struct{} // holds one token while a caller has the turn
	users int           // callers holding or waiting for it: the entry goes at 0
}

// turnKey marks a context whose caller holds the input turn of a computer; its value is the
// *turnState.
type turnKey struct{ traposID string }

// turnState counts the screen.input requests sent in a turn: each after the first asks
// StillAuthorized first.
type turnState struct{ sent int }

// InputTurn waits for computer traposID's input turn and returns a context holding it (its
// SendInput calls take no turn of their own) and the release to call once the caller's input
// is all sent. The wait ends with ctx: then the error is timeout (busy with another caller's
// input). Give the caller's whole call's deadline to ctx first: the turn is held at most that
// long.
func (c *Client) InputTurn(ctx context.Context, traposID string) (context.Context, func(), error) {
	if ctx.Value(turnKey{traposID}) != nil {
		return ctx, func() {}, nil // held already
	}
	t := &c.inputs
	t.mu.Lock()
	if t.turns == nil {
		t.turns = map[string]*inputTurn{}
	}
	turn := t.turns[traposID]
	if turn == nil {
		turn = &inputTurn{ch: make(chan struct{}, 1)}
		t.turns[traposID] = turn
	}
	turn.users++
	t.mu.Unlock()
	done := func() {
		t.mu.Lock()
		turn.users--
		if turn.users == 0 {
			delete(t.turns, traposID)
		}
		t.mu.Unlock()
	}
	select {
	case turn.ch <- struct{}{}:
	case <-ctx.Done():
		done()
		return ctx, nil, protocol.Errorf(protocol.CodeTimeout, "computer %s was still typing another caller's input (a long send_text, or the screen's keys) when this call's time ran out: send it again", cctext.ShowTraposID(traposID))
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			<-turn.ch
			done()
		})
	}
	return context.WithValue(ctx, turnKey{traposID}, &turnState{}), release, nil
}

// heldTurn is the state of computer traposID's input turn held by ctx, or nil.
func heldTurn(ctx context.Context, traposID string) *turnState {
	s, _ := ctx.Value(turnKey{traposID}).(*turnState)
	return s
}
