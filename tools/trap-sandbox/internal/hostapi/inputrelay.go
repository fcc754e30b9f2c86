package hostapi

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"time"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// With several replicas (docs/scale-out.md) a computer's input turn is taken where its
// socket is. An input to a computer whose socket another replica holds (a whole input, or a
// single screen.input request) is relayed to that replica, which types it under its own turn
// of the computer: so one caller's input through replica a and another's through replica b
// queue for the one turn, and neither lands between the other's parts. Held on the replica
// each caller asked, the turns of two replicas let b type a key between a's parts.

// InputRelayModule names the relayed messages of the input turn between the replicas.
const InputRelayModule = "input"

// InputRelay is the in-process transport's link to the other replicas' (the cluster's Peer).
type InputRelay interface {
	// Send sends msg to the module on replica about computer (accountID, traposID) and returns
	// its answer (RelayedInput's there), waiting at most timeout.
	Send(ctx context.Context, replica, accountID, traposID string, msg json.RawMessage, timeout time.Duration) (json.RawMessage, error)
	// Holder names the live replica other than this one that holds the computer's socket
	// ("" when none does), and a context for as long as it does; stop releases it.
	Holder(accountID, traposID string) (replica string, held context.Context, stop context.CancelFunc)
	// NotHandled reports whether err is a replica's answer that it relays nothing for the
	// module: an older replica, which types the input part by part as it always did.
	NotHandled(err error) bool
}

// Messages of the input relay (inputMsg.Op).
const (
	opType    = "type"    // type Events whole (computer.Client.TypeInput there)
	opRequest = "request" // send the screen.input request Payload (CC's bytes) under the turn
	// opStill asks the caller's replica, from the holder, whether the caller of the input of
	// Check.ID still may type (stillcheck.go); its answer is inputAnswer.Still.
	opStill = "still"
)

// inputMsg is a relayed input, to the replica holding the computer's socket.
type inputMsg struct {
	Op        string                `json:"op"`
	Events    []computer.InputEvent `json:"events,omitempty"`
	Payload   json.RawMessage       `json:"payload,omitempty"`
	TimeoutMs int64                 `json:"timeoutMs"`
	// TokenID is the id (selector, never the secret: nothing secret crosses the bus) of the
	// account API token the caller came with, which the holder checks before each part after
	// the first, as the caller's replica checks its caller's credentials on a gateway alone.
	// Empty: a caller whose credentials no command revokes (the gateway's own token, a
	// loopback call, a gateway pass), or a replica of a trap-sandbox from before it.
	TokenID string `json:"tokenId,omitempty"`
	// Check names the check that the caller's replica answers for a caller without a token
	// whose credentials can end all the same (a gateway pass), which the holder asks before
	// each part after the first (stillcheck.go); of an opStill question, the check asked about.
	Check *stillCheck `json:"check,omitempty"`
	// Nonce is an opStill question's, which the answer's signature covers.
	Nonce []byte `json:"nonce,omitempty"`
}

// inputAnswer is the holder's answer to an inputMsg: the outcome, an error among it, so that
// what NATS does not carry of an error (the computer's words, how much was typed) comes back.
type inputAnswer struct {
	Queued   int                  `json:"queued,omitempty"`
	Warnings []cctext.Replacement `json:"warnings,omitempty"`
	Payload  json.RawMessage      `json:"payload,omitempty"`
	Error    *protocol.Error      `json:"error,omitempty"`
	// ByComputer: Error is the computer's refusal (its words, with the host's HostWords).
	ByComputer bool `json:"byComputer,omitempty"`
	// Partly: the input failed after the computer took Queued events of it.
	Partly bool `json:"partly,omitempty"`
	// Still is the answer to an opStill question.
	Still *stillAnswer `json:"still,omitempty"`
}

// relaySlack is how much longer than the input's own time the asking replica waits for the
// holder's answer: the holder ends the input within its time and then answers.
const relaySlack = 10 * time.Second

// relayedKey marks the context of an input relayed here: it is typed here, never relayed on.
type relayedKey struct{}

// OnReplica makes t relay each input to a computer whose socket another replica holds to that
// replica (relay), and returns t. The replica's handler of relay's messages is RelayedInput.
func (t Gateway) OnReplica(relay InputRelay) Gateway {
	t.relay = relay
	t.checks = newStillChecks()
	return t
}

// holderOf names the replica to relay an input to computer traposID of accountID: "" when it
// is typed here (held here, by no replica, relayed here already, or a gateway alone).
func (t Gateway) holderOf(ctx context.Context, accountID, traposID string) string {
	if t.relay == nil || ctx.Value(relayedKey{}) != nil {
		return ""
	}
	holder, _, stop := t.relay.Holder(accountID, traposID)
	if stop != nil {
		stop()
	}
	return holder
}

var _ computer.InputTyper = Gateway{}

// TypeInput implements computer.InputTyper: an input to a computer held by another replica
// is typed there, under the turn of the computer's socket; any other is typed by the caller's
// Client itself (computer.ErrNoWholeInput).
func (t Gateway) TypeInput(ctx context.Context, traposID string, events []computer.InputEvent, timeout time.Duration) (int, []cctext.Replacement, error) {
	accountID, err := t.accountOf(account.CallerFrom(ctx), traposID)
	if err != nil {
		return 0, nil, err
	}
	holder := t.holderOf(ctx, accountID, traposID)
	if holder == "" {
		return 0, nil, computer.ErrNoWholeInput
	}
	ans, err := t.relayInput(ctx, holder, accountID, traposID, inputMsg{Op: opType, Events: events, TimeoutMs: max(timeout.Milliseconds(), 1)}, timeout)
	if err != nil {
		if t.relay.NotHandled(err) {
			return 0, nil, computer.ErrNoWholeInput
		}
		return 0, nil, err
	}
	if err := ans.err(); err != nil {
		return 0, ans.Warnings, err
	}
	return ans.Queued, ans.Warnings, nil
}

// relayedRequest sends a screen.input request to a computer held by another replica through
// it, under the turn there; handled false: typed here (not held elsewhere, or an older holder).
func (t Gateway) relayedRequest(ctx context.Context, accountID, traposID string, payload json.RawMessage, timeout time.Duration) (answer json.RawMessage, handled bool, err error) {
	holder := t.holderOf(ctx, accountID, traposID)
	if holder == "" {
		return nil, false, nil
	}
	ans, err := t.relayInput(ctx, holder, accountID, traposID, inputMsg{Op: opRequest, Payload: payload, TimeoutMs: max(timeout.Milliseconds(), 1)}, timeout)
	if err != nil {
		if t.relay.NotHandled(err) {
			return nil, false, nil
		}
		return nil, true, err
	}
	if err := ans.err(); err != nil {
		return nil, true, err
	}
	return ans.Payload, true, nil
}

func (t Gateway) relayInput(ctx context.Context, holder, accountID, traposID string, msg inputMsg, timeout time.Duration) (inputAnswer, error) {
	msg.TokenID = account.CallerFrom(ctx).Token
	done, err := t.relayedCheck(ctx, &msg)
	if err != nil {
		return inputAnswer{}, err
	}
	defer done()
	body, err := json.Marshal(msg)
	if err != nil {
		return inputAnswer{}, protocol.Errorf(protocol.CodeInternal, "encode the input: %v", err)
	}
	// The holder ends the input within its time and says how it ended (a turn it waited for in
	// vain, the computer's silence): the caller's own deadline, the same time, must not cut
	// that answer off. Its going away still ends the wait.
	wait, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	defer stop()
	raw, err := t.relay.Send(wait, holder, accountID, traposID, body, timeout+relaySlack)
	if err != nil {
		return inputAnswer{}, err
	}
	var ans inputAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return inputAnswer{}, protocol.Errorf(protocol.CodeInternal, "replica %s answered an input with something else: %v", holder, err)
	}
	return ans, nil
}

// err is the answer's error as the holder had it, nil when it has none.
func (a inputAnswer) err() error {
	if a.Error == nil {
		return nil
	}
	var err error = a.Error
	if a.ByComputer {
		err = a.Error.FromTheAPI()
	}
	if a.Partly {
		err = &computer.PartlyTyped{Err: err, Queued: a.Queued}
	}
	return err
}

// RelayedInput answers an input relayed by replica from to computer (accountID, traposID),
// whose socket this replica holds: c types it under the computer's input turn here, as the
// computer's account (the replicas trust each other, docs/scale-out.md, Security; the caller's
// replica checked that its caller reaches the computer). Before each part after the first it
// asks accounts whether the caller's API token (inputMsg.TokenID) still opens the API, as the
// caller's replica would ask of its secret: revoked or expired meanwhile, through any replica,
// the input stops there with the answer it gets on a gateway alone. The id can only stop an
// input: a message without one (of an older replica, or of a caller with no token) is typed
// whole, as every input was before, so one forged on the bus types nothing it could not. An
// input whose caller only its replica can check (inputMsg.Check: a gateway pass) asks that
// replica before each part after the first instead (askStill), and this handler answers such
// questions about the inputs this replica relayed (opStill).
func (t Gateway) RelayedInput(c *computer.Client, accounts *account.Accounts) func(ctx context.Context, from, accountID, traposID string, payload json.RawMessage) (json.RawMessage, error) {
	return func(ctx context.Context, from, accountID, traposID string, payload json.RawMessage) (json.RawMessage, error) {
		var msg inputMsg
		if err := json.Unmarshal(payload, &msg); err != nil {
			return nil, protocol.Errorf(protocol.CodeBadPayload, "an input from replica %s is not one: %v", from, err)
		}
		if msg.Op == opStill {
			if msg.Check == nil {
				return nil, protocol.Errorf(protocol.CodeBadPayload, "a question from replica %s about a relayed input's caller names no input", from)
			}
			still, err := t.checks.answer(ctx, msg.Check.ID, msg.Nonce)
			if err != nil {
				return nil, err
			}
			return json.Marshal(inputAnswer{Still: still})
		}
		ctx = context.WithValue(account.WithCaller(ctx, account.Caller{Account: accountID}), relayedKey{}, true)
		switch {
		case msg.TokenID != "" && accounts != nil:
			ctx = server.WithStillAuthorized(ctx, server.TokenStillAuthorized(accounts, msg.TokenID))
		case msg.Check != nil:
			if len(msg.Check.Key) != ed25519.PublicKeySize {
				return nil, protocol.Errorf(protocol.CodeBadPayload, "an input from replica %s names its caller's check with a key of %d bytes, not %d", from, len(msg.Check.Key), ed25519.PublicKeySize)
			}
			ctx = server.WithStillAuthorized(ctx, t.askStill(from, accountID, traposID, *msg.Check))
		}
		timeout := time.Duration(msg.TimeoutMs) * time.Millisecond
		var ans inputAnswer
		var err error
		switch msg.Op {
		case opType:
			ans.Queued, ans.Warnings, err = c.TypeInput(ctx, traposID, msg.Events, timeout)
		case opRequest:
			ans.Payload, err = t.requestInTurn(ctx, c, traposID, msg.Payload, timeout)
		default:
			return nil, protocol.Errorf(protocol.CodeBadPayload, "an input from replica %s has no known op (%s)", from, cctext.Clip(msg.Op, 40))
		}
		if err != nil {
			pe, ok := errors.AsType[*protocol.Error](err)
			if !ok {
				pe = protocol.Errorf(protocol.CodeInternal, "%v", err)
			}
			ans.ByComputer = pe.ByComputer
			ans.Error = pe.ToTheAPI()
			if partly, ok := errors.AsType[*computer.PartlyTyped](err); ok {
				ans.Partly, ans.Queued = true, partly.Queued
			}
		}
		return json.Marshal(ans)
	}
}

// requestInTurn sends the screen.input request payload (CC's bytes already) to computer
// traposID under its input turn here.
func (t Gateway) requestInTurn(ctx context.Context, c *computer.Client, traposID string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	timeout = min(max(timeout, time.Millisecond), computer.MaxTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ctx, release, err := c.InputTurn(ctx, traposID)
	if err != nil {
		return nil, err
	}
	defer release()
	deadline, _ := ctx.Deadline()
	return t.Request(ctx, traposID, protocol.TypeScreenInput, payload, time.Until(deadline))
}
