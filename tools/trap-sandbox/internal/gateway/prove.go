package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/protocol"
)

// TypeProve is the request a computer that has seen this gateway prove itself sends before
// its hello: the gateway answers with an HMAC under a key only it and the computer know, so
// that a program holding the gateway's port while it is down (or a server the URL was
// mistyped to) never gets the computer's secret (docs/protocol.md, "The gateway proves itself").
const TypeProve = protocol.TypeProve

// The proof's parts, each also in docs/protocol.md and libsandboxproof.lua: the proof is
// hex(HMAC-SHA256(K, ProofContext + "\n" + nonce + "\n" + which)), with which "password" or
// "credential:" + the credential's selector, and K the SHA-256 of SANDBOX_PASSWORD or of the
// credential's secret part (what the account store keeps).
const (
	// ProofContext starts every proof's message, so a proof is never the HMAC of anything
	// else the key might sign.
	ProofContext = "trap-sandbox gateway proof v1"
	// proofWhichPassword names the shared password's key in the message.
	proofWhichPassword = "password"
	// proofWhichCredential prefixes a credential's selector in the message.
	proofWhichCredential = "credential:"
	// ProofNonceHexDigits is the length of a prove's nonce: 128 bits, as lower-case hex.
	ProofNonceHexDigits = 32
)

// ProofOf is the proof of the gateway that holds key, for a computer's nonce and the key it
// named (which): the one rule, used by the gateway and by tests.
func ProofOf(key []byte, nonce, which string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(ProofContext + "\n" + nonce + "\n" + which))
	return hex.EncodeToString(mac.Sum(nil))
}

// PasswordProofKey is the key of the shared password's proofs.
func PasswordProofKey(password string) []byte {
	k := sha256.Sum256([]byte(password))
	return k[:]
}

// proveRequest is prove's payload; fields are raw so a wrongly typed one is named.
type proveRequest struct {
	Nonce json.RawMessage `json:"nonce"`
	// Credential is the selector of the computer's own credential; absent or null for the
	// shared password.
	Credential json.RawMessage `json:"credential"`
}

// proveAnswer is prove's good answer.
type proveAnswer struct {
	Proof string `json:"proof"`
}

// The refusals of a prove the gateway cannot answer as asked: not_authenticated for a frame the
// socket may not send (the socket stays open for its hello, as after other such frames), which
// is also what a gateway older than prove answers, and unauthorized (proveNoPassword) for a
// computer it cannot prove itself to, whose player reads its words (libsandboxdaemon).
const (
	proveNotFirst    = "prove is answered once on a socket, before its hello: open a new socket to ask again"
	proveBadNonce    = "prove's nonce must be 32 hex digits (0-9, a-f), fresh for each socket"
	proveBadSelector = "prove's credential must be the id of the computer's credential (the part between tsc_ and the next _), at most 64 bytes, or absent for the shared password"
	proveNoPassword  = "this gateway has no SANDBOX_PASSWORD, so it cannot prove itself to a computer that says hello with one: " +
		"link the computer (sandbox link) for a credential of its own, or run sandbox setup"
)

// handleProve answers a prove: the proof under the key the computer named, or why it is
// refused. A credential the store does not hold, or has revoked, is refused in the words its
// hello would be refused with, and its socket closed as that hello's would be: a computer
// that waits for a proof sends no hello to be told why, and its player reads these words
// (framed as the unproven server's) where a proof made up to be wrong read as another program
// on the gateway's port. It runs on the reader (off its stack), which alone reads and writes
// the socket's prove state.
func (s *Session) handleProve(f protocol.Frame) {
	if s.helloSeen || s.proved {
		s.reply(f, nil, protocol.Errorf(protocol.CodeNotAuthenticated, "%s", proveNotFirst))
		return
	}
	s.proved = true
	var p proveRequest
	_ = json.Unmarshal(f.Payload, &p) // the payload is always an object; bad fields stay empty
	var nonce string
	if json.Unmarshal(p.Nonce, &nonce) != nil || !isProofNonce(nonce) {
		s.reply(f, nil, protocol.Errorf(protocol.CodeNotAuthenticated, "%s", proveBadNonce))
		return
	}
	var selector string
	if len(p.Credential) != 0 && string(p.Credential) != "null" {
		if json.Unmarshal(p.Credential, &selector) != nil || selector == "" || len(selector) > maxProveSelectorBytes {
			s.reply(f, nil, protocol.Errorf(protocol.CodeNotAuthenticated, "%s", proveBadSelector))
			return
		}
	}
	if selector == "" {
		if s.gw.cfg.Password == "" {
			s.reply(f, nil, protocol.Errorf(protocol.CodeUnauthorized, "%s", proveNoPassword))
			return
		}
		s.replyProof(f, ProofOf(PasswordProofKey(s.gw.cfg.Password), nonce, proofWhichPassword))
		return
	}
	// Not counted in the hello failures: a computer refused here tries again each minute or
	// so (the refusal is an unproven server's word to it), which would read as guessing.
	var key []byte
	err := account.ErrNotFound
	if s.gw.cfg.Accounts != nil {
		key, err = s.gw.cfg.Accounts.ProofKey(s.ctx, selector)
	}
	switch {
	case errors.Is(err, account.ErrRevoked):
		s.refusedCredentialLine("prove refused: the computer's credential is revoked", selector, f.TraposSenderID)
		s.reply(f, nil, protocol.Errorf(protocol.CodeUnauthorized, "%s", revokedCredentialWords))
		s.closeByGateway(CloseRevoked, "revoked")
	case errors.Is(err, account.ErrNotFound):
		if s.gw.cfg.Accounts != nil {
			s.unknownCredentialLine("prove", selector, f.TraposSenderID)
		}
		s.reply(f, nil, protocol.Errorf(protocol.CodeUnauthorized, "%s", unknownCredentialWords("")))
		s.closeByGateway(CloseUnauthorized, "unauthorized")
	case err != nil:
		s.gw.limits.warns.error("prove: the account store failed", s.remoteAddr, "err", err)
		s.reply(f, nil, protocol.Errorf(protocol.CodeInternal, "the gateway cannot read its account store now; try again later"))
	default:
		s.replyProof(f, ProofOf(key, nonce, proofWhichCredential+selector))
	}
}

// maxProveSelectorBytes bounds prove's credential: no selector issued is longer
// (account.ProofKey refuses longer ones as well, without a store read).
const maxProveSelectorBytes = 64

// isProofNonce reports whether nonce is ProofNonceHexDigits lower-case hex digits.
func isProofNonce(nonce string) bool {
	if len(nonce) != ProofNonceHexDigits {
		return false
	}
	for i := range len(nonce) {
		c := nonce[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// replyProof answers a prove with its proof.
func (s *Session) replyProof(f protocol.Frame, proof string) {
	payload, _ := json.Marshal(proveAnswer{Proof: proof})
	s.reply(f, payload, nil)
}

// proveOffStack runs prove off the reader's stack (offStack): it may read the account store.
//
//go:noinline
func (s *Session) proveOffStack(f protocol.Frame) { offStack(func() { s.handleProve(f) }) }
