package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

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

// newDecoyKey is the gateway's key for decoy proofs, random per process (Gateway.decoyKey).
func newDecoyKey() []byte {
	k := make([]byte, sha256.Size)
	rand.Read(k) // crypto/rand.Read never fails (Go 1.24+)
	return k
}

// The refusals of a prove, each not_authenticated: the socket stays open for its hello, as
// after other frames a socket before hello may not send.
const (
	proveNotFirst    = "prove is answered once on a socket, before its hello: open a new socket to ask again"
	proveBadNonce    = "prove's nonce must be 32 hex digits (0-9, a-f), fresh for each socket"
	proveBadSelector = "prove's credential must be the id of the computer's credential (the part between tsc_ and the next _), at most 64 bytes, or absent for the shared password"
	proveNoPassword  = "this gateway has no SANDBOX_PASSWORD, so it cannot prove itself to a computer that says hello with one: " +
		"link the computer (sandbox link) for a credential of its own, or run sandbox setup"
)

// handleProve answers a prove: the proof under the key the computer named, a decoy for a
// credential the store does not hold (unknown or revoked, indistinguishable from a real one to
// whoever does not know the key), or why it is refused. It runs on the reader (off its stack),
// which alone reads and writes the socket's prove state.
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
			s.reply(f, nil, protocol.Errorf(protocol.CodeNotAuthenticated, "%s", proveNoPassword))
			return
		}
		s.replyProof(f, ProofOf(PasswordProofKey(s.gw.cfg.Password), nonce, proofWhichPassword))
		return
	}
	which := proofWhichCredential + selector
	key, ok := []byte(nil), false
	if s.gw.cfg.Accounts != nil {
		var err error
		key, ok, err = s.gw.cfg.Accounts.ProofKey(s.ctx, selector)
		if err != nil {
			s.gw.limits.warns.error("prove: the account store failed", s.remoteAddr, "err", err)
			s.reply(f, nil, protocol.Errorf(protocol.CodeInternal, "the gateway cannot read its account store now; try again later"))
			return
		}
	}
	if !ok {
		// A key of its own for each selector, as a real credential has, made from the
		// process's random key: the same answer for the same nonce, like a real one.
		key = decoyProofKey(s.gw.decoyKey, which)
		if s.gw.cfg.Accounts != nil {
			// The computer sends no hello after the decoy, so this is the operator's one line
			// about it (the computer gets none: the answer must not tell).
			s.gw.limits.warns.warnEach(proveUnknownCredentialMsg, s.remoteAddr, selector,
				"traposId", clip(f.TraposSenderID), "credentialId", clip(selector))
		}
	}
	s.replyProof(f, ProofOf(key, nonce, which))
}

// proveUnknownCredentialMsg is the operator's line for a prove that named a credential the
// store does not hold: a computer that saw this gateway prove itself refuses it from now on.
const proveUnknownCredentialMsg = "prove for a computer credential the account store does not hold or has revoked (made on another gateway or data directory, " +
	"after the backup it was restored from, revoked, or its account removed): the computer gets a decoy and refuses this gateway; " +
	"its player runs sandbox setup, then sandbox link"

// decoyProofKey is the key of the decoy proofs for which: derived from the process's random
// key, so it is the same for every prove of which (as a real credential's key is) and
// unknown to anyone outside the process.
func decoyProofKey(decoyKey []byte, which string) []byte {
	mac := hmac.New(sha256.New, decoyKey)
	mac.Write([]byte("decoy " + which))
	return mac.Sum(nil)
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
