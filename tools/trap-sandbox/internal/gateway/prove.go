package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/slowhash"
)

// TypeProve is the request a computer that has seen this gateway prove itself sends before
// its hello: the gateway answers with an HMAC under a key only it and the computer know, so
// that a program holding the gateway's port while it is down (or a server the URL was
// mistyped to) never gets the computer's secret (docs/protocol.md, "The gateway proves itself").
const TypeProve = protocol.TypeProve

// The proof's parts, each also in docs/protocol.md and libsandboxproof.lua: the proof is
// hex(HMAC-SHA256(K, ProofContext + "\n" + nonce + "\n" + which)), with which "password" or
// "credential:" + the credential's selector, and K the SHA-256 of SANDBOX_PASSWORD or of the
// credential's secret part (what the account store keeps). The password's version 2 proof is
// hex(HMAC-SHA256(S, ProofContextV2 + "\n" + nonce + "\n" + "password")), S its slow key
// (PasswordProofKeyV2), which a computer learns from its hello's answer (proofKey).
const (
	// ProofContext starts every proof's message, so a proof is never the HMAC of anything
	// else the key might sign.
	ProofContext = "trap-sandbox gateway proof v1"
	// ProofContextV2 starts the password's version 2 proofs.
	ProofContextV2 = "trap-sandbox gateway proof v2"
	// proofWhichPassword names the shared password's key in the message.
	proofWhichPassword = "password"
	// proofWhichCredential prefixes a credential's selector in the message.
	proofWhichCredential = "credential:"
	// proofWhichRevoked prefixes a revoked credential's selector in the message of the proof
	// its refusal carries: a proof that the gateway refuses it, never one that it says hello.
	proofWhichRevoked = "revoked-credential:"
	// ProofNonceHexDigits is the length of a prove's nonce: 128 bits, as lower-case hex.
	ProofNonceHexDigits = 32
)

// ProofOf is the proof of the gateway that holds key, for a computer's nonce and the key it
// named (which): the one rule, used by the gateway and by tests.
func ProofOf(key []byte, nonce, which string) string {
	return proofUnder(ProofContext, key, nonce, which)
}

// PasswordProofV2 is the password's version 2 proof for a computer's nonce, slowKey being
// PasswordProofKeyV2 of the password.
func PasswordProofV2(slowKey []byte, nonce string) string {
	return proofUnder(ProofContextV2, slowKey, nonce, proofWhichPassword)
}

// proofUnder is a proof of one version (its context).
func proofUnder(context string, key []byte, nonce, which string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(context + "\n" + nonce + "\n" + which))
	return hex.EncodeToString(mac.Sum(nil))
}

// PasswordProofKey is the key of the shared password's version 1 proofs: a fast hash, so that
// one proof lets whoever asked test guesses of the password offline at SHA-256's speed
// (Config.PasswordProofV1Off turns these proofs off).
func PasswordProofKey(password string) []byte {
	k := sha256.Sum256([]byte(password))
	return k[:]
}

// proofKeyV2Purpose is the salt of the password's slow proof key: it differs from the
// replicas' heartbeat tags' (cluster.PasswordTag), which NATS carries to all its clients.
const proofKeyV2Purpose = "trap-sandbox gateway proof key v2"

// PasswordProofKeyV2 is the key of the shared password's version 2 proofs, S: the slow hash of
// the password (slowhash.Sum, 32 bytes), so that a guess of the password tested against a
// proof costs argon2id's time and memory. Every replica derives the same S. It is derived once
// a process for a password (tens of milliseconds, more under the race detector), at the first
// hello with it or the first prove that asks for it, then kept: a prove is answered in
// microseconds, and the tests' many gateways of one password derive it once.
func PasswordProofKeyV2(password string) []byte {
	proofKeysV2.mu.Lock()
	e, ok := proofKeysV2.of[password]
	if !ok {
		if len(proofKeysV2.of) >= maxProofKeysV2 {
			clear(proofKeysV2.of) // a process holds one password; only tests hold more
		}
		e = &proofKeyV2{}
		proofKeysV2.of[password] = e
	}
	proofKeysV2.mu.Unlock()
	e.once.Do(func() { e.key = slowhash.Sum(password, proofKeyV2Purpose, proofKeyV2Bytes) })
	return e.key
}

// proofKeyV2Bytes is S's size: 64 hex digits in the hello's answer.
const proofKeyV2Bytes = 32

// maxProofKeysV2 bounds the passwords whose S a process keeps.
const maxProofKeysV2 = 16

// proofKeyV2 is one password's S, derived once however many ask for it at a time.
type proofKeyV2 struct {
	once sync.Once
	key  []byte
}

// proofKeysV2 are the S a process derived, by password.
var proofKeysV2 = struct {
	mu sync.Mutex
	of map[string]*proofKeyV2
}{of: make(map[string]*proofKeyV2)}

// proveRequest is prove's payload; fields are raw so a wrongly typed one is named.
type proveRequest struct {
	Nonce json.RawMessage `json:"nonce"`
	// Credential is the selector of the computer's own credential; absent or null for the
	// shared password.
	Credential json.RawMessage `json:"credential"`
	// Version is the password's proof asked for: 2, under its slow key (the hello's answer's
	// proofKey); absent, null or 1, under its fast one (0.5.32 and 0.5.33 computers).
	Version json.RawMessage `json:"version"`
	// Link (true; client 0.5.36) says the socket is a link session's (sandbox link): after a
	// revoked credential's proved refusal it stays open for the link hello, so the link goes on
	// through the gateway that proved itself, not a new socket that proved nothing.
	Link json.RawMessage `json:"link"`
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
	proveBadVersion = "prove's version must be 2 (the password's proof under the hello answer's proofKey), or absent or 1 (the first proof, a credential's always)"
	// proveV1Off refuses a version 1 prove of the password (--password-proofs v2): its
	// computer is older than 0.5.34, or recorded the gateway before it gave proofKeys. The
	// player reads these words as the unproven server's (libsandboxdaemon).
	proveV1Off = "this gateway proves itself only to computers of client 0.5.34 or newer that learnt its proof key (--password-proofs v2): " +
		"run the gateway's install line on this computer, then sandbox setup"
	// proveV1OffLine is the operator's line of a proveV1Off refusal (WARN, once a minute per
	// address and computer).
	proveV1OffLine = "prove refused: the computer asked for the password's first-version proof, which --password-proofs v2 turns off " +
		"(its client is older than 0.5.34, or has not learnt this gateway's proof key): it says no hello, and its daemon's every retry is refused alike; " +
		"its player runs the install line, then sandbox setup (or give the gateway --password-proofs v1,v2 until every computer is upgraded)"
)

// handleProve answers a prove: the proof under the key the computer named, or why it is
// refused. A credential the store does not hold, or has revoked, is refused in the words its
// hello would be refused with, and its socket closed as that hello's would be: a computer
// that waits for a proof sends no hello to be told why, and its player reads these words
// where a proof made up to be wrong read as another program on the gateway's port. A revoked
// one's refusal carries a proof of it (error.proof), which the store's key still makes: the
// computer then knows the gateway said it, and a link session's (link:true) stays open for
// its link hello. It runs on the reader (off its stack), which alone reads and writes the
// socket's prove state.
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
	version, ok := proveVersion(p.Version)
	if !ok || (version == 2 && selector != "") {
		s.reply(f, nil, protocol.Errorf(protocol.CodeNotAuthenticated, "%s", proveBadVersion))
		return
	}
	if selector == "" {
		switch {
		case s.gw.cfg.Password == "":
			s.reply(f, nil, protocol.Errorf(protocol.CodeUnauthorized, "%s", proveNoPassword))
		case version == 2:
			s.gw.cfg.Metrics.proofGiven(proofPasswordV2)
			s.replyProof(f, PasswordProofV2(PasswordProofKeyV2(s.gw.cfg.Password), nonce))
		case s.gw.cfg.PasswordProofV1Off:
			// Said here: the computer sends no hello after the refusal, so nothing else the
			// operator reads (the list, the hello failures) shows it.
			s.gw.cfg.Metrics.proofRefusedV1Off()
			s.gw.limits.warns.warnEach(proveV1OffLine, s.remoteAddr, f.TraposSenderID, "traposId", clip(f.TraposSenderID))
			s.reply(f, nil, protocol.Errorf(protocol.CodeNotAuthenticated, "%s", proveV1Off))
		default:
			s.gw.cfg.Metrics.proofGiven(proofPasswordV1)
			s.replyProof(f, ProofOf(PasswordProofKey(s.gw.cfg.Password), nonce, proofWhichPassword))
		}
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
		refusal := protocol.Errorf(protocol.CodeUnauthorized, "%s", revokedCredentialWords)
		if len(key) != 0 {
			// Proved, so the computer (0.5.36 on) reads the refusal as the gateway's, where
			// another program on the port could say the same words to have it linked anew.
			refusal.Proof = ProofOf(key, nonce, proofWhichRevoked+selector)
		}
		s.reply(f, nil, refusal)
		if string(p.Link) != "true" {
			s.closeByGateway(CloseRevoked, "revoked")
		}
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
		s.gw.cfg.Metrics.proofGiven(proofCredential)
		s.replyProof(f, ProofOf(key, nonce, proofWhichCredential+selector))
	}
}

// proveVersion reads prove's version: 1 when absent or null.
func proveVersion(raw json.RawMessage) (int, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return 1, true
	}
	var v int
	if json.Unmarshal(raw, &v) != nil || (v != 1 && v != 2) {
		return 0, false
	}
	return v, true
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
