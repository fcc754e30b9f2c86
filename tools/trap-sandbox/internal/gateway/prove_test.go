package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/argon2"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// testNonce is a prove's nonce as a computer makes it: 32 lower-case hex digits.
const testNonce = "0123456789abcdef0123456789abcdef"

// expectedProof computes a proof from its definition in docs/protocol.md, apart from the
// gateway's code: hex(HMAC-SHA256(SHA-256(secret), context "\n" nonce "\n" which)).
func expectedProof(secret, nonce, which string) string {
	key := sha256.Sum256([]byte(secret))
	mac := hmac.New(sha256.New, key[:])
	mac.Write([]byte("trap-sandbox gateway proof v1\n" + nonce + "\n" + which))
	return hex.EncodeToString(mac.Sum(nil))
}

// expectedSlowKey computes the password's slow proof key from its definition in
// docs/protocol.md, apart from the gateway's code: argon2id (4 passes, 8 MiB, 1 thread, 32
// bytes) of the password, salted with the purpose's name.
func expectedSlowKey(password string) []byte {
	return argon2.IDKey([]byte(password), []byte("trap-sandbox gateway proof key v2"), 4, 8*1024, 1, 32)
}

// expectedProofV2 computes the password's version 2 proof from its definition in
// docs/protocol.md: hex(HMAC-SHA256(S, "trap-sandbox gateway proof v2\n" nonce "\npassword")).
func expectedProofV2(password, nonce string) string {
	mac := hmac.New(sha256.New, expectedSlowKey(password))
	mac.Write([]byte("trap-sandbox gateway proof v2\n" + nonce + "\npassword"))
	return hex.EncodeToString(mac.Sum(nil))
}

// helloProofKey is hello's answer's proofKey, "" when absent.
func helloProofKey(t *testing.T, resp protocol.Frame) string {
	t.Helper()
	require.True(t, resp.OK, "%+v", resp.Error)
	var ans struct {
		ProofKey string `json:"proofKey"`
	}
	require.NoError(t, json.Unmarshal(resp.Payload, &ans))
	return ans.ProofKey
}

// prove sends a prove with payload and returns its answer.
func (c *computer) prove(payload map[string]any) protocol.Frame {
	c.t.Helper()
	c.request("prove-1", TypeProve, payload)
	resp := c.read()
	require.Equal(c.t, protocol.EventGatewayResponse, resp.Event)
	require.Equal(c.t, "prove-1", resp.MessageID)
	require.Equal(c.t, TypeProve, resp.Type)
	return resp
}

// proveRefusal sends a prove with payload and returns its refusal's error as it came on the
// wire: code, message and proof (protocol.DecodeFrame keeps no proof: a computer's errors
// carry none).
func (c *computer) proveRefusal(payload map[string]any) map[string]any {
	c.t.Helper()
	c.request("prove-1", TypeProve, payload)
	text, err := c.readText()
	require.NoError(c.t, err)
	var frame struct {
		OK    bool           `json:"ok"`
		Error map[string]any `json:"error"`
	}
	require.NoError(c.t, json.Unmarshal([]byte(text), &frame), text)
	require.False(c.t, frame.OK, text)
	return frame.Error
}

// proofIn is the proof of a good prove answer.
func proofIn(t *testing.T, resp protocol.Frame) string {
	t.Helper()
	require.True(t, resp.OK, "%+v", resp.Error)
	var ans map[string]any
	require.NoError(t, json.Unmarshal(resp.Payload, &ans))
	require.Len(t, ans, 1, "the answer holds the proof alone: %s", resp.Payload)
	proof, ok := ans["proof"].(string)
	require.True(t, ok, "%s", resp.Payload)
	return proof
}

// aliceWithCredential is an account store in memory holding the user account alice and one
// credential she issued (tsc_…), not yet linked to any computer.
func aliceWithCredential(t *testing.T) (*account.Accounts, string) {
	t.Helper()
	accounts := account.New(account.NewMemory(), clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	credential, _, err := accounts.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)
	return accounts, credential
}

// credentialParts splits a credential tsc_<selector>_<secret>.
func credentialParts(t *testing.T, credential string) (selector, secret string) {
	t.Helper()
	parts := strings.Split(credential, "_")
	require.Len(t, parts, 3)
	return parts[1], parts[2]
}

// helloProves reports hello's answer's proves.
func helloProves(t *testing.T, resp protocol.Frame) bool {
	t.Helper()
	require.True(t, resp.OK, "%+v", resp.Error)
	var ans struct {
		Proves *bool `json:"proves"`
	}
	require.NoError(t, json.Unmarshal(resp.Payload, &ans))
	return ans.Proves != nil && *ans.Proves
}

// TestProveWithThePassword: a computer that says hello with SANDBOX_PASSWORD gets a proof
// under the password's key before its hello, then its hello as ever, whose answer says the
// gateway proves itself.
func TestProveWithThePassword(t *testing.T) {
	h := newHarness(t, Config{Password: "pw"}, nil)
	c := h.dial(t, "7:kitchen")
	assert.Equal(t, expectedProof("pw", testNonce, "password"), proofIn(t, c.prove(map[string]any{"nonce": testNonce})))
	resp := c.hello("pw")
	assert.True(t, helloProves(t, resp))
	assert.JSONEq(t, `{"accountId":"local","livenessMs":70000,"proves":true,"proofKey":"`+hex.EncodeToString(expectedSlowKey("pw"))+`"}`, string(resp.Payload))

	// Another nonce, another proof: an old one is no answer to a fresh nonce.
	other := strings.Repeat("f", 32)
	d := h.dial(t, "8:")
	assert.Equal(t, expectedProof("pw", other, "password"), proofIn(t, d.prove(map[string]any{"nonce": other, "credential": nil})))
}

// TestAProveVouchesForNoHello: a good prove is no credential: the hello after it is checked
// as any hello (a wrong secret, a secret of another key than the one proved, a payload that
// is no hello's) and a wrong secret counts in the wrong-secret budget, past which its answer
// waits; the socket of a refused hello takes no request of the host's.
func TestAProveVouchesForNoHello(t *testing.T) {
	m := newMetrics()
	accounts, alice := aliceWithCredential(t)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts, HelloTimeout: time.Hour, Metrics: m,
		FailedHelloBurst: 1, FailedHelloRate: 0.001, FailedHelloGlobalBurst: 1000, FailedHelloGlobalRate: 1000}, nil)
	selector, _ := credentialParts(t, alice)

	garbage := h.dial(t, "7:")
	proofIn(t, garbage.prove(map[string]any{"nonce": testNonce, "credential": selector}))
	garbage.request("h", TypeHello, []any{"7:", alice})
	bad := garbage.read()
	require.False(t, bad.OK)
	assert.Equal(t, protocol.CodeNotAuthenticated, bad.Error.Code, "%+v", bad.Error)
	assert.Contains(t, bad.Error.Message, "hello needs a traposId")

	wrong := h.dial(t, "8:")
	proofIn(t, wrong.prove(map[string]any{"nonce": testNonce, "credential": selector}))
	resp := wrong.hello("tsc_" + selector + "_notitssecret")
	require.False(t, resp.OK)
	assert.Equal(t, protocol.CodeUnauthorized, resp.Error.Code)
	wrong.expectClose(CloseUnauthorized, "unauthorized")

	// The second wrong secret is past the address's burst of 1: held back, as without a prove.
	again := h.dial(t, "9:")
	proofIn(t, again.prove(map[string]any{"nonce": testNonce}))
	again.request("h", TypeHello, map[string]any{"traposId": "9:", "secret": "not the password"})
	require.Eventually(t, func() bool { return testutil.ToFloat64(m.limits.WithLabelValues(limitFailedHellos)) == 1 },
		waitLimit, testkit.Poll, "the second wrong secret after a good prove is held back")
	assert.Empty(t, h.gw.Computers(), "no computer is connected")
}

// TestProveWithACredential: a computer with its own credential names its id; the proof is
// under the SHA-256 of the credential's secret part, which the gateway's store keeps, and is
// not the password's.
func TestProveWithACredential(t *testing.T) {
	h, _, alice, _ := accountsHarness(t)
	selector, secret := credentialParts(t, alice)
	c := h.dial(t, "7:")
	proof := proofIn(t, c.prove(map[string]any{"nonce": testNonce, "credential": selector}))
	assert.Equal(t, expectedProof(secret, testNonce, "credential:"+selector), proof)
	assert.True(t, helloProves(t, c.hello(alice)))
}

// TestHelloSaysWhetherTheGatewayProves: proves is absent where the gateway cannot prove
// itself: without a password, a hello with any secret but a credential of its own.
func TestHelloSaysWhetherTheGatewayProves(t *testing.T) {
	accounts, alice := aliceWithCredential(t)
	h := newHarness(t, Config{Accounts: accounts}, nil)
	c := h.dial(t, "7:")
	resp := c.prove(map[string]any{"nonce": testNonce})
	require.False(t, resp.OK)
	assert.Equal(t, protocol.CodeUnauthorized, resp.Error.Code, "the computer's player reads why")
	assert.Equal(t, proveNoPassword, resp.Error.Message)
	resp = c.hello("anything")
	assert.False(t, helloProves(t, resp))
	assert.JSONEq(t, `{"accountId":"local","livenessMs":70000}`, string(resp.Payload))

	// A credential's proof is its own (version 1): no proofKey.
	resp = h.dial(t, "8:").hello(alice)
	assert.True(t, helloProves(t, resp))
	assert.Empty(t, helloProofKey(t, resp), "a credential's hello is given no proofKey")

	// A password shaped like a credential would have its computer ask for a credential's
	// proof: the gateway does not say it proves itself to it, nor gives a key.
	shaped := newHarness(t, Config{Password: "tsc_abc_def"}, nil)
	resp = shaped.dial(t, "7:").hello("tsc_abc_def")
	assert.False(t, helloProves(t, resp))
	assert.Empty(t, helloProofKey(t, resp))

	// A gateway with a password and accounts gives the key to the password's hello only.
	both := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)
	assert.Equal(t, hex.EncodeToString(expectedSlowKey("pw")), helloProofKey(t, both.dial(t, "9:").hello("pw")))
	resp = both.dial(t, "10:").hello(alice)
	assert.True(t, helloProves(t, resp))
	assert.Empty(t, helloProofKey(t, resp))
}

// TestProveV2WithTheSlowKey: a computer that learnt the slow key from its hello's answer asks
// for version 2 and gets the HMAC under that key, which a fast guess of the password does not
// reach; the fast proof is another. Each proof given is counted by kind.
func TestProveV2WithTheSlowKey(t *testing.T) {
	m := newMetrics()
	accounts, alice := aliceWithCredential(t)
	selector, _ := credentialParts(t, alice)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts, Metrics: m}, nil)

	c := h.dial(t, "7:kitchen")
	proof := proofIn(t, c.prove(map[string]any{"nonce": testNonce, "version": 2}))
	assert.Equal(t, expectedProofV2("pw", testNonce), proof)
	assert.NotEqual(t, expectedProof("pw", testNonce, "password"), proof)
	assert.Equal(t, hex.EncodeToString(expectedSlowKey("pw")), helloProofKey(t, c.hello("pw")))

	proofIn(t, h.dial(t, "8:").prove(map[string]any{"nonce": testNonce, "version": 1}))
	proofIn(t, h.dial(t, "9:").prove(map[string]any{"nonce": testNonce, "version": nil}))
	proofIn(t, h.dial(t, "10:").prove(map[string]any{"nonce": testNonce, "credential": selector}))
	assert.InDelta(t, 1, testutil.ToFloat64(m.proofs.WithLabelValues(proofPasswordV2)), 0)
	assert.InDelta(t, 2, testutil.ToFloat64(m.proofs.WithLabelValues(proofPasswordV1)), 0)
	assert.InDelta(t, 1, testutil.ToFloat64(m.proofs.WithLabelValues(proofCredential)), 0)

	// Without a password, version 2 is refused as version 1 is.
	none := newHarness(t, Config{Accounts: accounts}, nil)
	resp := none.dial(t, "7:").prove(map[string]any{"nonce": testNonce, "version": 2})
	require.False(t, resp.OK)
	assert.Equal(t, protocol.CodeUnauthorized, resp.Error.Code)
	assert.Equal(t, proveNoPassword, resp.Error.Message)
}

// TestPasswordProofV1Off: with --password-proofs v2 the password's fast proof is refused,
// not_authenticated, in words that name the player's fix; version 2 and a credential's proof
// are given as before, and the refusal counts as no proof given. Each refusal is counted and
// logged, naming the computer: it says no hello after it, so nothing else shows the operator
// the computers left behind (played on two replicas, one with v2: a 0.5.33 computer that
// reached it was in no list and in no line).
func TestPasswordProofV1Off(t *testing.T) {
	m := newMetrics()
	accounts, alice := aliceWithCredential(t)
	selector, secret := credentialParts(t, alice)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts, Metrics: m, PasswordProofV1Off: true}, nil)

	for _, payload := range []map[string]any{{"nonce": testNonce}, {"nonce": testNonce, "version": 1}} {
		c := h.dial(t, "7:")
		resp := c.prove(payload)
		require.False(t, resp.OK)
		assert.Equal(t, protocol.CodeNotAuthenticated, resp.Error.Code)
		assert.Equal(t, proveV1Off, resp.Error.Message)
		assert.Contains(t, resp.Error.Message, "install line")
		assert.Contains(t, resp.Error.Message, "sandbox setup")
		// The socket stays open for its hello, which gets the key to ask with next time.
		assert.Equal(t, hex.EncodeToString(expectedSlowKey("pw")), helloProofKey(t, c.hello("pw")))
	}
	assert.Equal(t, expectedProofV2("pw", testNonce), proofIn(t, h.dial(t, "8:").prove(map[string]any{"nonce": testNonce, "version": 2})))
	assert.Equal(t, expectedProof(secret, testNonce, "credential:"+selector),
		proofIn(t, h.dial(t, "9:").prove(map[string]any{"nonce": testNonce, "credential": selector})))
	assert.Zero(t, testutil.ToFloat64(m.proofs.WithLabelValues(proofPasswordV1)))
	assert.InDelta(t, 1, testutil.ToFloat64(m.proofs.WithLabelValues(proofPasswordV2)), 0)
	assert.InDelta(t, 2, testutil.ToFloat64(m.proofsRefused), 0)
	assert.Contains(t, h.logs.String(), `level=WARN msg="prove refused: the computer asked for the password's first-version proof, which --password-proofs v2 turns off`)
	assert.Contains(t, h.logs.String(), "traposId=7:")
}

// TestSlowProofKeyIsDerivedOnce: the slow key is derived once a process for a password, at
// its first hello or version 2 prove, and kept: every later prove and hello of every gateway
// with that password takes the same key (BenchmarkProveAnswerV2: microseconds).
func TestSlowProofKeyIsDerivedOnce(t *testing.T) {
	password := fmt.Sprintf("a password of run %d", time.Now().UnixNano()) // -count=2 derives it again
	derived := func() *proofKeyV2 {
		proofKeysV2.mu.Lock()
		defer proofKeysV2.mu.Unlock()
		return proofKeysV2.of[password]
	}
	require.Nil(t, derived(), "no gateway derives its key before it is asked for")
	h := newHarness(t, Config{Password: password}, nil)
	require.Nil(t, derived(), "a gateway derives no key at its start")
	c := h.dial(t, "7:")
	c.hello(password)
	first := derived()
	require.NotNil(t, first, "the first hello derived it")
	first.once.Do(func() { t.Fatal("derived again") })

	other := newHarness(t, Config{Password: password}, nil)
	proofIn(t, other.dial(t, "8:").prove(map[string]any{"nonce": testNonce, "version": 2}))
	other.dial(t, "9:").hello(password)
	assert.Same(t, first, derived(), "another gateway of the password took the same key")
	a, b := PasswordProofKeyV2(password), PasswordProofKeyV2(password)
	assert.Same(t, &a[0], &b[0])
}

// TestNoGuessDerivesASlowKey: the slow key is only ever the gateway's own password's, so a
// flood of hellos with wrong passwords, of version 2 proves, of checks and of a password shaped
// like a credential derives no other key (each would be argon2id's 34 ms of CPU and 8 MiB) and
// neither fills nor empties the process's keys: every answer that gives a key gives the one
// derived at the first. A refused hello's answer names no key. Against the real gateway: 2000
// version 2 proves on fresh sockets took 0.23 s of its CPU in all, 300 wrong-password hellos
// 0.9 s, one derivation.
func TestNoGuessDerivesASlowKey(t *testing.T) {
	password := fmt.Sprintf("the password of run %d", time.Now().UnixNano())
	h := newHarness(t, Config{Password: password, HelloTimeout: time.Hour,
		FailedHelloBurst: 1000, FailedHelloRate: 1000, FailedHelloGlobalBurst: 1000, FailedHelloGlobalRate: 1000}, nil)
	derivedFor := func(p string) *proofKeyV2 {
		proofKeysV2.mu.Lock()
		defer proofKeysV2.mu.Unlock()
		return proofKeysV2.of[p]
	}
	proofIn(t, h.dial(t, "0:").prove(map[string]any{"nonce": testNonce, "version": 2}))
	key := derivedFor(password)
	require.NotNil(t, key, "the gateway's own key, derived at the first prove")
	var guesses []string
	for i := range 2 * maxProofKeysV2 {
		guess := fmt.Sprintf("%s guess %d", password, i)
		guesses = append(guesses, guess)
		c := h.dial(t, fmt.Sprintf("%d:", 1+i))
		resp := c.hello(guess)
		require.False(t, resp.OK)
		assert.Equal(t, protocol.CodeUnauthorized, resp.Error.Code)
		assert.NotContains(t, string(resp.Payload), "proofKey")
		c.expectClose(CloseUnauthorized, "unauthorized")
	}
	check := h.dial(t, "99:")
	check.request("h", TypeHello, map[string]any{"traposId": "99:", "secret": "tsc_abc_def", "check": true})
	assert.False(t, check.read().OK)
	for i := range 2 * maxProofKeysV2 {
		proofIn(t, h.dial(t, fmt.Sprintf("%d:", 100+i)).prove(map[string]any{"nonce": testNonce, "version": 2}))
	}
	for _, guess := range guesses {
		assert.Nil(t, derivedFor(guess), "a key derived for a wrong password")
	}
	assert.Equal(t, hex.EncodeToString(key.key), helloProofKey(t, h.dial(t, "200:").hello(password)))
	assert.Same(t, key, derivedFor(password), "the key was derived once and kept, never pushed out by guesses")
}

// countingStore counts the account store's reads of credentials.
type countingStore struct {
	*account.Memory
	reads *atomic.Int64
}

func (s countingStore) Credential(ctx context.Context, selector string) (account.Credential, error) {
	s.reads.Add(1)
	return s.Memory.Credential(ctx, selector)
}

// TestProveForACredentialTheGatewayLacksSaysWhy: a computer that waits for a proof sends no
// hello to be refused, so a prove naming a revoked credential, or one the store does not hold
// (a restored backup, another data directory), is refused in that hello's words and closed as
// it would be: its player reads the fix (link again), where a made-up proof read as another
// program on the gateway's port. Each costs one store read, and the operator reads which
// credential was asked for.
func TestProveForACredentialTheGatewayLacksSaysWhy(t *testing.T) {
	reads := &atomic.Int64{}
	accounts := account.New(countingStore{Memory: account.NewMemory(), reads: reads}, clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	revoked, _, err := accounts.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)
	revokedSelector, _ := credentialParts(t, revoked)
	_, err = accounts.RevokeCredential(t.Context(), "alice", revokedSelector)
	require.NoError(t, err)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)

	refused := func(selector string) (protocol.Frame, *computer) {
		before := reads.Load()
		c := h.dial(t, "7:kitchen")
		resp := c.prove(map[string]any{"nonce": testNonce, "credential": selector})
		assert.Equal(t, int64(1), reads.Load()-before, "one store read for %s", selector)
		require.False(t, resp.OK, "no proof for %s", selector)
		assert.Equal(t, protocol.CodeUnauthorized, resp.Error.Code)
		return resp, c
	}
	resp, c := refused(revokedSelector)
	assert.Equal(t, "this computer's credential was revoked (link it again with: sandbox link, or set a new credential with: sandbox setup)", resp.Error.Message)
	c.expectClose(CloseRevoked, "revoked")
	assert.Contains(t, h.logs.String(), `msg="prove refused: the computer's credential is revoked"`)
	assert.Contains(t, h.logs.String(), "credentialId="+revokedSelector)

	resp, c = refused("aaaaaaaaaaaaa")
	assert.Equal(t, "not a computer credential of this gateway (check the computer's sandbox.password against trap-sandbox credentials list, or link it again: sandbox link)", resp.Error.Message)
	c.expectClose(CloseUnauthorized, "unauthorized")
	assert.Contains(t, h.logs.String(), `msg="prove rejected: a computer credential the account store does not hold`)
	assert.Contains(t, h.logs.String(), "credentialId=aaaaaaaaaaaaa")

	// Without an account store no credential is the gateway's: refused alike, with no line
	// (no store to have lost it).
	bare := newHarness(t, Config{Password: "pw"}, nil)
	d := bare.dial(t, "7:")
	resp = d.prove(map[string]any{"nonce": testNonce, "credential": "aaaaaaaaaaaaa"})
	require.False(t, resp.OK)
	assert.Equal(t, protocol.CodeUnauthorized, resp.Error.Code)
	d.expectClose(CloseUnauthorized, "unauthorized")
	assert.NotContains(t, bare.logs.String(), "credentialId=")
}

// TestARevokedCredentialsRefusalIsProved: the refusal of a prove for a revoked credential
// carries the gateway's proof of it (error.proof, under the key the store still holds, for
// "revoked-credential:<id>"), so that the computer tells the gateway's "revoked" from the same
// words said by another program on its port, which would have it linked anew to an account of
// that program's choosing. The daemon's socket is closed 4003 as before; a link session's
// (link:true) stays open, and its link hello is answered there. A credential the store does
// not hold gets no proof: there is no key to make it with.
func TestARevokedCredentialsRefusalIsProved(t *testing.T) {
	accounts, revoked := aliceWithCredential(t)
	selector, secret := credentialParts(t, revoked)
	_, err := accounts.RevokeCredential(t.Context(), "alice", selector)
	require.NoError(t, err)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)

	wanted := expectedProof(secret, testNonce, "revoked-credential:"+selector)

	c := h.dial(t, "7:kitchen")
	refusal := c.proveRefusal(map[string]any{"nonce": testNonce, "credential": selector})
	assert.Equal(t, map[string]any{"code": "unauthorized", "proof": wanted,
		"message": "this computer's credential was revoked (link it again with: sandbox link, or set a new credential with: sandbox setup)"}, refusal)
	assert.NotEqual(t, expectedProof(secret, testNonce, "credential:"+selector), wanted, "a proof of the refusal is no proof to say hello after")
	c.expectClose(CloseRevoked, "revoked")

	link := h.dial(t, "7:kitchen")
	refusal = link.proveRefusal(map[string]any{"nonce": testNonce, "credential": selector, "link": true})
	assert.Equal(t, wanted, refusal["proof"])
	hello := link.linkHello()
	require.True(t, hello.OK, "the link session goes on on the socket that proved itself: %+v", hello.Error)
	assert.Contains(t, string(hello.Payload), `"link":true`)

	unknown := h.dial(t, "8:")
	refusal = unknown.proveRefusal(map[string]any{"nonce": testNonce, "credential": "aaaaaaaaaaaaa", "link": true})
	assert.NotContains(t, refusal, "proof")
	unknown.expectClose(CloseUnauthorized, "unauthorized")
}

// TestProveOnceBeforeHello: a prove comes once, before hello. A second one, or one after
// hello, is refused not_authenticated without a store read, and the socket stays open.
func TestProveOnceBeforeHello(t *testing.T) {
	h := newHarness(t, Config{Password: "pw"}, nil)
	c := h.dial(t, "7:")
	proofIn(t, c.prove(map[string]any{"nonce": testNonce}))
	again := c.prove(map[string]any{"nonce": strings.Repeat("1", 32)})
	require.False(t, again.OK)
	assert.Equal(t, protocol.CodeNotAuthenticated, again.Error.Code)
	assert.Equal(t, proveNotFirst, again.Error.Message)
	require.True(t, c.hello("pw").OK, "the socket stays open for its hello")

	d := h.dial(t, "8:")
	require.True(t, d.hello("pw").OK)
	after := d.prove(map[string]any{"nonce": testNonce})
	require.False(t, after.OK)
	assert.Equal(t, proveNotFirst, after.Error.Message)

	// A hello that failed counts too: the prove is the socket's first frame or none.
	e := h.dial(t, "9:")
	e.request("h", TypeHello, map[string]any{"traposId": ""})
	require.False(t, e.read().OK)
	late := e.prove(map[string]any{"nonce": testNonce})
	require.False(t, late.OK)
	assert.Equal(t, proveNotFirst, late.Error.Message)
}

// TestProveRefusesMalformedFields: a nonce that is not 32 lower-case hex digits, a credential
// id that is no string or longer than any issued, are refused, naming the field; a refused
// prove was the socket's one prove.
func TestProveRefusesMalformedFields(t *testing.T) {
	reads := &atomic.Int64{}
	accounts := account.New(countingStore{Memory: account.NewMemory(), reads: reads}, clock.Real{})
	h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)
	cases := []struct {
		name    string
		payload map[string]any
		message string
	}{
		{"no nonce", map[string]any{}, proveBadNonce},
		{"short nonce", map[string]any{"nonce": testNonce[:31]}, proveBadNonce},
		{"long nonce", map[string]any{"nonce": testNonce + "0"}, proveBadNonce},
		{"upper-case nonce", map[string]any{"nonce": strings.ToUpper(testNonce)}, proveBadNonce},
		{"nonce of 8 KB", map[string]any{"nonce": strings.Repeat("a", 7000)}, proveBadNonce},
		{"nonce a number", map[string]any{"nonce": 12345}, proveBadNonce},
		{"credential a number", map[string]any{"nonce": testNonce, "credential": 7}, proveBadSelector},
		{"credential empty", map[string]any{"nonce": testNonce, "credential": ""}, proveBadSelector},
		{"credential of 65 bytes", map[string]any{"nonce": testNonce, "credential": strings.Repeat("a", 65)}, proveBadSelector},
		{"credential of 7 KB", map[string]any{"nonce": testNonce, "credential": strings.Repeat("a", 7000)}, proveBadSelector},
		{"version a string", map[string]any{"nonce": testNonce, "version": "2"}, proveBadVersion},
		{"version 3", map[string]any{"nonce": testNonce, "version": 3}, proveBadVersion},
		{"version 0", map[string]any{"nonce": testNonce, "version": 0}, proveBadVersion},
		{"version 2.5", map[string]any{"nonce": testNonce, "version": 2.5}, proveBadVersion},
		{"version 2 of a credential", map[string]any{"nonce": testNonce, "credential": "abc", "version": 2}, proveBadVersion},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := h.dial(t, "7:")
			resp := c.prove(tc.payload)
			require.False(t, resp.OK)
			assert.Equal(t, protocol.CodeNotAuthenticated, resp.Error.Code)
			assert.Equal(t, tc.message, resp.Error.Message)
			again := c.prove(map[string]any{"nonce": testNonce})
			require.False(t, again.OK)
			assert.Equal(t, proveNotFirst, again.Error.Message)
		})
	}
	assert.Zero(t, reads.Load(), "no malformed prove reads the store")

	// Past the read limit before hello the socket closes, as for any frame.
	c := h.dial(t, "7:")
	c.request("p", TypeProve, map[string]any{"nonce": strings.Repeat("a", MaxFrameBytesBeforeHello)})
	c.expectClose(CloseTooBig, tooBigReason)
}

// TestRefusedProvesSpendNoWrongSecretBudget: proves refused in any way (a credential the
// gateway does not hold, a revoked one, a malformed nonce, a second prove), many from one
// address, spend none of the address's wrong-secret budget: a player flooding proves holds
// back no hello of the computers sharing the Minecraft server's address, and a wrong secret
// after them is answered at once, the first of the burst. They ask for no secret, so there is
// nothing to guess; each costs one store read at most, as a hello with a credential does.
func TestRefusedProvesSpendNoWrongSecretBudget(t *testing.T) {
	m := newMetrics()
	accounts, revoked := aliceWithCredential(t)
	revokedSelector, _ := credentialParts(t, revoked)
	_, err := accounts.RevokeCredential(t.Context(), "alice", revokedSelector)
	require.NoError(t, err)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts, HelloTimeout: time.Hour,
		FailedHelloBurst: 1, FailedHelloRate: 0.001, FailedHelloGlobalBurst: 1, FailedHelloGlobalRate: 0.001, Metrics: m}, nil)
	for i := range 20 {
		c := h.dial(t, "7:")
		switch i % 4 {
		case 0:
			require.False(t, c.prove(map[string]any{"nonce": testNonce, "credential": fmt.Sprintf("unknown%d", i)}).OK)
			c.expectClose(CloseUnauthorized, "unauthorized")
		case 1:
			require.False(t, c.prove(map[string]any{"nonce": testNonce, "credential": revokedSelector}).OK)
			c.expectClose(CloseRevoked, "revoked")
		case 2:
			require.False(t, c.prove(map[string]any{"nonce": "not hex"}).OK)
		case 3:
			proofIn(t, c.prove(map[string]any{"nonce": testNonce}))
			require.False(t, c.prove(map[string]any{"nonce": testNonce}).OK)
		}
	}
	assert.Zero(t, testutil.ToFloat64(m.limits.WithLabelValues(limitFailedHellos)))

	// The budget is whole: one wrong secret is answered at once (a second would wait an hour).
	guess := h.dial(t, "8:")
	guess.request("h", TypeHello, map[string]any{"traposId": "8:", "secret": "guess"})
	assert.Equal(t, protocol.CodeUnauthorized, guess.read().Error.Code)
	assert.Zero(t, testutil.ToFloat64(m.limits.WithLabelValues(limitFailedHellos)), "the wrong secret was not held back")
	guess.expectClose(CloseUnauthorized, "unauthorized")

	// And a computer of the same address proves the gateway and says hello at once.
	c := h.dial(t, "9:")
	assert.Equal(t, expectedProof("pw", testNonce, "password"), proofIn(t, c.prove(map[string]any{"nonce": testNonce})))
	require.True(t, c.hello("pw").OK)
}

// TestProveKeepsTheHelloDeadline: a prove does not extend the socket's time to say hello.
func TestProveKeepsTheHelloDeadline(t *testing.T) {
	fc := newFakeClock()
	h := newHarness(t, Config{Password: "pw", Clock: fc, HelloTimeout: helloTimeoutForProveTest}, nil)
	c := h.dial(t, "7:")
	require.True(t, fc.WaitArmed(1, t.Context().Done()))
	proofIn(t, c.prove(map[string]any{"nonce": testNonce}))
	fc.Advance(helloTimeoutForProveTest)
	c.expectClose(CloseNoHello, "no hello in time")
}

// helloTimeoutForProveTest is TestProveKeepsTheHelloDeadline's hello deadline (a fake clock's).
const helloTimeoutForProveTest = 100 * time.Millisecond

// BenchmarkProveAnswer measures what a prove costs the gateway beyond reading its frame and
// the one store read of a credential's: the proof (one HMAC) and the answer's encoding.
func BenchmarkProveAnswer(b *testing.B) {
	key := PasswordProofKey("pw")
	for b.Loop() {
		_, _ = json.Marshal(proveAnswer{Proof: ProofOf(key, testNonce, proofWhichPassword)})
	}
}

// BenchmarkProveAnswerV2 is BenchmarkProveAnswer for the password's version 2 proof: its slow
// key is derived once, not at each prove.
func BenchmarkProveAnswerV2(b *testing.B) {
	for b.Loop() {
		_, _ = json.Marshal(proveAnswer{Proof: PasswordProofV2(PasswordProofKeyV2("pw"), testNonce)})
	}
}

// TestALinkSessionsRevokedRefusalGivesNoMoreTime: a prove with link:true for a revoked
// credential keeps its socket open after the proved refusal, and that is all it gains. The
// socket's hello deadline runs from its opening, not from the prove (4008 when a silent
// socket's comes); a second prove on it is refused without a second proof (one proof a socket,
// so a hostile computer collects no more proofs than the sockets it may open); and a hello
// with the revoked credential on it is refused as on any socket.
func TestALinkSessionsRevokedRefusalGivesNoMoreTime(t *testing.T) {
	accounts, revoked := aliceWithCredential(t)
	selector, _ := credentialParts(t, revoked)
	_, err := accounts.RevokeCredential(t.Context(), "alice", selector)
	require.NoError(t, err)
	fc := newFakeClock()
	h := newHarness(t, Config{Password: "pw", Accounts: accounts, Clock: fc, HelloTimeout: 100 * time.Millisecond}, nil)

	linkProve := func(nonce string) map[string]any {
		return map[string]any{"nonce": nonce, "credential": selector, "link": true}
	}

	c := h.dial(t, "7:kitchen")
	require.True(t, fc.WaitArmed(1, t.Context().Done()), "the socket's hello deadline is armed at its opening")
	fc.Advance(60 * time.Millisecond)
	require.NotEmpty(t, c.proveRefusal(linkProve(testNonce))["proof"])
	again := c.proveRefusal(linkProve("ffffffffffffffffffffffffffffffff"))
	assert.Equal(t, string(protocol.CodeNotAuthenticated), again["code"])
	assert.Empty(t, again["proof"], "a socket gives one proof")

	fc.Advance(40 * time.Millisecond) // 100 ms since the socket opened, 40 since the prove
	c.expectClose(CloseNoHello, "no hello in time")

	hello := h.dial(t, "7:kitchen")
	require.NotEmpty(t, hello.proveRefusal(linkProve(testNonce))["proof"])
	answer := hello.hello(revoked)
	require.False(t, answer.OK)
	assert.Equal(t, protocol.CodeUnauthorized, answer.Error.Code)
	hello.expectClose(CloseRevoked, "revoked")
	assert.Empty(t, h.gw.Computers())
}
