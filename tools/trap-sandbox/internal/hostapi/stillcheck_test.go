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

	"trap-sandbox/internal/protocol"
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
