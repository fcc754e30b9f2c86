package hostapi

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit/daemonfake"
)

// busRelay is the bus between the holder (b) and the caller's replica (a) for a check's
// questions: each goes to a's handler, and answer, when set, puts another answer in the
// place of a's (a client of the bus that answered first).
type busRelay struct {
	a      Gateway
	answer func(genuine json.RawMessage) json.RawMessage
}

func (r *busRelay) Send(ctx context.Context, replica, accountID, traposID string, msg json.RawMessage, _ time.Duration) (json.RawMessage, error) {
	genuine, err := r.a.RelayedInput(nil, nil)(ctx, "b", accountID, traposID, msg)
	if r.answer != nil {
		return r.answer(genuine), nil
	}
	return genuine, err
}
func (r *busRelay) Holder(string, string) (string, context.Context, context.CancelFunc) {
	return "", nil, nil
}
func (r *busRelay) NotHandled(error) bool { return false }

// TestTheHolderTakesOnlyTheCallersReplicasSignedAnswer: the holder of a computer asks the
// replica that relayed an input whether its caller (a gateway pass, which only that replica
// knows) may still type, before each part after the first. The answer counts only when signed
// with the key that the caller's replica made for that input and sent with it, over the nonce
// of that question: a client of the bus that says "still good" with a key of its own, or
// sends again an answer it saw for an earlier question, or says it without a signature, stops
// the input as a refusal does, and never lets it go on.
func TestTheHolderTakesOnlyTheCallersReplicasSignedAnswer(t *testing.T) {
	ctx := t.Context()
	var ended atomic.Bool
	a := Gateway{checks: newStillChecks()}
	check, done, err := a.checks.open(func(context.Context) *protocol.Error {
		if ended.Load() {
			return protocol.Errorf(protocol.CodeUnauthorized, "unknown gateway pass: …")
		}
		return nil
	})
	require.NoError(t, err)
	bus := &busRelay{a: a}
	b := Gateway{relay: bus}
	still := b.askStill("a", "local", "7:kitchen", check)

	require.Nil(t, still(ctx), "a's answer: the pass still opens the API")

	var seen json.RawMessage
	bus.answer = func(genuine json.RawMessage) json.RawMessage { seen = genuine; return genuine }
	require.Nil(t, still(ctx))
	bus.answer = func(json.RawMessage) json.RawMessage { return seen }
	pe := still(ctx)
	require.NotNil(t, pe, "a's earlier answer, sent again, for another question")
	assert.Equal(t, protocol.CodeUnauthorized, pe.Code)
	assert.Equal(t, "replica a, where the caller's credentials were checked, did not confirm that they still open the API: an answer came that it did not sign (another client of the NATS bus?)", pe.Message)

	_, forger, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	bus.answer = func(json.RawMessage) json.RawMessage {
		// The forger cannot know the question's nonce from the answer it gives: any will do.
		data, _ := json.Marshal(inputAnswer{Still: &stillAnswer{Sig: ed25519.Sign(forger, stillSigned(check.ID, make([]byte, stillNonceSize), nil))}})
		return data
	}
	assert.NotNil(t, still(ctx), "still good, signed with another key")
	bus.answer = func(json.RawMessage) json.RawMessage { return json.RawMessage(`{"still":{}}`) }
	assert.NotNil(t, still(ctx), "still good, unsigned")
	bus.answer = func(json.RawMessage) json.RawMessage { return json.RawMessage(`{}`) }
	assert.NotNil(t, still(ctx), "no answer to the question")

	bus.answer = nil
	ended.Store(true)
	pe = still(ctx)
	require.NotNil(t, pe, "a's answer once the pass ended")
	assert.Equal(t, protocol.CodeUnauthorized, pe.Code)
	assert.Equal(t, "unknown gateway pass: …", pe.Message, "a's own words")

	ended.Store(false)
	done()
	pe = still(ctx)
	require.NotNil(t, pe, "a relays that input no more")
	assert.Contains(t, pe.Message, "replica a, where the caller's credentials were checked, did not confirm")
}

// TestMadeUpQuestionsAndInputsAboutAChecksCallerAreRefused: what a client of the NATS bus can
// send about relayed inputs' checks, made up, is refused with its reason and runs no caller's
// check: a question that names no input, one with a nonce not of stillNonceSize bytes (the
// holder's is; a long one would be signed whole), one about an input this replica does not
// relay (a guessed id); and an input whose check's key is not an Ed25519 public key, refused
// before any part of it is typed (ed25519.Verify panics on such a key at the holder's first
// question: an internal error and a stack in the log, its first part typed).
func TestMadeUpQuestionsAndInputsAboutAChecksCallerAreRefused(t *testing.T) {
	ctx := t.Context()
	var asked atomic.Int64
	a := Gateway{checks: newStillChecks()}
	check, done, err := a.checks.open(func(context.Context) *protocol.Error { asked.Add(1); return nil })
	require.NoError(t, err)
	defer done()
	handle := a.RelayedInput(computer.New(daemonfake.NewLocal(nil)), nil)
	for _, tc := range []struct {
		name string
		msg  inputMsg
		want string
	}{
		{"no input named", inputMsg{Op: opStill, Nonce: make([]byte, stillNonceSize)},
			"bad_payload: a question from replica x about a relayed input's caller names no input"},
		{"a short nonce", inputMsg{Op: opStill, Check: &stillCheck{ID: check.ID}, Nonce: make([]byte, stillNonceSize-1)},
			"bad_payload: a question about a relayed input's caller needs a nonce of 16 bytes, got 15"},
		{"a long nonce", inputMsg{Op: opStill, Check: &stillCheck{ID: check.ID}, Nonce: make([]byte, 1<<20)},
			"bad_payload: a question about a relayed input's caller needs a nonce of 16 bytes, got 1048576"},
		{"a guessed input", inputMsg{Op: opStill, Check: &stillCheck{ID: "00000000000000000000000000000000"}, Nonce: make([]byte, stillNonceSize)},
			"not_found: this replica relays no input whose caller it is asked about (it has ended)"},
		{"an input with a short key", inputMsg{Op: opType, Check: &stillCheck{ID: check.ID, Key: []byte("short")}, Events: []computer.InputEvent{{Type: "char", Text: "a"}}, TimeoutMs: 1000},
			"bad_payload: an input from replica x names its caller's check with a key of 5 bytes, not 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, err := json.Marshal(tc.msg)
			require.NoError(t, err)
			ans, err := handle(ctx, "x", "local", "7:", body)
			require.Error(t, err, "answered %s", ans)
			assert.Equal(t, tc.want, err.Error())
		})
	}
	assert.Zero(t, asked.Load(), "no caller's check was run")
}
