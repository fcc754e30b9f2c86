package hostapi

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// A caller whose credentials only its own replica can check (the agent's pass, which lives in
// the memory of the replica that granted it, account.Passes) may type on a computer whose
// socket another replica holds. The holder cannot read such a credential from the account
// bucket, as it reads an API token by its id: before each part after the first it asks the
// caller's replica (opStill), which runs the caller's StillAuthorized check and answers. An
// input stops at a refusal, as it stops on a gateway alone, and at anything that is not the
// caller's replica's answer: the replicas' subjects are open to every client of the NATS
// account (docs/scale-out.md, Security), so an answer counts only when signed with the key the
// caller's replica made for that one input, whose public half came with the input (a client of
// the bus that never saw the private half cannot say "still good"), over a nonce the holder
// chose for that one question (an answer seen on the bus says nothing of the next).

// stillCheck names, in an input relayed to the holder, the check its caller's replica answers
// (Key, the public half of the key that signs its answers); in an opStill question, the check
// asked about (ID alone).
type stillCheck struct {
	ID  string `json:"id"`
	Key []byte `json:"key,omitempty"`
}

// stillAnswer is the caller's replica's answer to an opStill question: Refusal, the error a
// new request with the caller's credentials would get (null: they still open the API), and
// Sig, the signature of stillSigned over it.
type stillAnswer struct {
	Refusal json.RawMessage `json:"refusal,omitempty"`
	Sig     []byte          `json:"sig"`
}

// stillNonceSize is the size of the holder's nonce; a question with a longer one is refused.
const stillNonceSize = 16

// stillAskTimeout bounds the holder's wait for the answer of the caller's replica: a replica
// that does not answer by then stops the input.
const stillAskTimeout = 5 * time.Second

// stillSigned is what the caller's replica signs for check id asked with nonce: the words of
// the answer (refusal, empty when the caller's credentials still open the API), in a message
// no other signature of the gateway's could be taken for.
func stillSigned(id string, nonce []byte, refusal json.RawMessage) []byte {
	msg := fmt.Appendf(nil, "trap-sandbox relayed input still authorized\x00%s\x00%x\x00", id, nonce)
	return append(msg, refusal...)
}

// stillChecks are the checks this replica answers for the inputs it relays, by id.
type stillChecks struct {
	mu sync.Mutex
	by map[string]pendingCheck
}

// pendingCheck is one relayed input's check: its caller's StillAuthorized check, and the key
// that signs its answers.
type pendingCheck struct {
	still func(context.Context) *protocol.Error
	key   ed25519.PrivateKey
}

func newStillChecks() *stillChecks { return &stillChecks{by: map[string]pendingCheck{}} }

// open makes the check of an input relayed for the caller whose StillAuthorized check is still,
// answered until done is called; it returns what the input names it by.
func (s *stillChecks) open(still func(context.Context) *protocol.Error) (stillCheck, func(), error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return stillCheck{}, nil, err
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails
	id := hex.EncodeToString(raw[:])
	s.mu.Lock()
	s.by[id] = pendingCheck{still: still, key: priv}
	s.mu.Unlock()
	return stillCheck{ID: id, Key: pub}, func() {
		s.mu.Lock()
		delete(s.by, id)
		s.mu.Unlock()
	}, nil
}

// answer answers the question of check id with nonce: the caller's check run now, signed; an
// error when this replica relays no input of that id (it has ended) or the question is not one.
func (s *stillChecks) answer(ctx context.Context, id string, nonce []byte) (*stillAnswer, error) {
	if len(nonce) != stillNonceSize {
		return nil, protocol.Errorf(protocol.CodeBadPayload, "a question about a relayed input's caller needs a nonce of %d bytes, got %d", stillNonceSize, len(nonce))
	}
	s.mu.Lock()
	c, ok := s.by[id]
	s.mu.Unlock()
	if !ok {
		return nil, protocol.Errorf(protocol.CodeNotFound, "this replica relays no input whose caller it is asked about (it has ended)")
	}
	var refusal json.RawMessage
	if pe := c.still(ctx); pe != nil {
		var err error
		if refusal, err = json.Marshal(pe); err != nil {
			return nil, protocol.Errorf(protocol.CodeInternal, "encode the refusal: %v", err)
		}
	}
	return &stillAnswer{Refusal: refusal, Sig: ed25519.Sign(c.key, stillSigned(id, nonce, refusal))}, nil
}

// askStill is the StillAuthorized check, on the holder, of an input relayed by replica from
// whose caller from checks itself (check): it asks from before each part after the first, and
// lets the input go on only when from's signed answer says the caller's credentials still open
// the API. A refusal is from's words, as a gateway alone gives them; no answer, or one not
// signed with check's key (of another client of the bus), stops the input too, naming from.
func (t Gateway) askStill(from, accountID, traposID string, check stillCheck) func(context.Context) *protocol.Error {
	return func(ctx context.Context) *protocol.Error {
		unconfirmed := func(why string) *protocol.Error {
			return protocol.Errorf(protocol.CodeUnauthorized, "replica %s, where the caller's credentials were checked, did not confirm that they still open the API: %s", from, why)
		}
		nonce := make([]byte, stillNonceSize)
		_, _ = rand.Read(nonce)
		body, err := json.Marshal(inputMsg{Op: opStill, Check: &stillCheck{ID: check.ID}, Nonce: nonce})
		if err != nil {
			return unconfirmed(err.Error())
		}
		raw, err := t.relay.Send(ctx, from, accountID, traposID, body, stillAskTimeout)
		if err != nil {
			return unconfirmed(err.Error())
		}
		var ans inputAnswer
		if err := json.Unmarshal(raw, &ans); err != nil || ans.Still == nil {
			return unconfirmed("its answer is not one")
		}
		if !ed25519.Verify(ed25519.PublicKey(check.Key), stillSigned(check.ID, nonce, ans.Still.Refusal), ans.Still.Sig) {
			return unconfirmed("an answer came that it did not sign (another client of the NATS bus?)")
		}
		if len(ans.Still.Refusal) == 0 {
			return nil
		}
		var pe protocol.Error
		if err := json.Unmarshal(ans.Still.Refusal, &pe); err != nil {
			return unconfirmed("its refusal cannot be read")
		}
		return &pe
	}
}

// relayedCheck is the check that an input relayed to another replica names for its caller,
// and done, to call when the input has ended: the caller's token by its id (TokenID, which the
// holder reads from the account bucket), or a check this replica answers (stillCheck) for a
// caller with another credential that can end (a gateway pass); neither for a caller whose
// credentials nothing revokes.
func (t Gateway) relayedCheck(ctx context.Context, msg *inputMsg) (done func(), err error) {
	if msg.TokenID != "" || t.checks == nil {
		return func() {}, nil
	}
	still := server.StillAuthorizedCheck(ctx)
	if still == nil {
		return func() {}, nil
	}
	check, done, err := t.checks.open(still)
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeInternal, "cannot relay the input: %v", err)
	}
	msg.Check = &check
	return done, nil
}
