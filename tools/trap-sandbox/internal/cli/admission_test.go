package cli

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/testkit"
)

// admissionEnv are the variables of AdmissionFlags, unset by clearEnv.
var admissionEnv = []string{"SANDBOX_MAX_UNAUTHENTICATED", "SANDBOX_MAX_UNAUTHENTICATED_PER_ADDRESS",
	"SANDBOX_PRESSURE_HELLO_TIMEOUT", "SANDBOX_FAILED_HELLO_RATE", "SANDBOX_FAILED_HELLO_BURST",
	"SANDBOX_FAILED_HELLO_GLOBAL_RATE", "SANDBOX_FAILED_HELLO_GLOBAL_BURST"}

// admissionDefaults are the gateway's defaults: the flags have no others.
var admissionDefaults = AdmissionFlags{
	MaxUnauthenticated:           gateway.DefaultMaxUnauthenticated,
	MaxUnauthenticatedPerAddress: gateway.DefaultMaxUnauthenticatedPerAddress,
	PressureHelloTimeout:         gateway.DefaultPressureHelloTimeout,
	FailedHelloRate:              gateway.DefaultFailedHelloRate,
	FailedHelloBurst:             gateway.DefaultFailedHelloBurst,
	FailedHelloGlobalRate:        gateway.DefaultFailedHelloGlobalRate,
	FailedHelloGlobalBurst:       gateway.DefaultFailedHelloGlobalBurst,
}

func unsetEnv(t *testing.T, names []string) {
	for _, name := range names {
		t.Setenv(name, "") // registers the restore of the original value
		require.NoError(t, os.Unsetenv(name))
	}
}

func TestAdmissionFlags(t *testing.T) {
	clearEnv(t)
	root, _ := parse(t, "--max-unauthenticated", "9", "--max-unauthenticated-per-address", "3",
		"--pressure-hello-timeout", "1s", "--failed-hello-rate", "0.5", "--failed-hello-burst", "2",
		"--failed-hello-global-rate", "4", "--failed-hello-global-burst", "8")
	want := AdmissionFlags{MaxUnauthenticated: 9, MaxUnauthenticatedPerAddress: 3, PressureHelloTimeout: time.Second,
		FailedHelloRate: 0.5, FailedHelloBurst: 2, FailedHelloGlobalRate: 4, FailedHelloGlobalBurst: 8}
	assert.Equal(t, want, root.Serve.AdmissionFlags)

	for i, v := range []string{"9", "3", "1s", "0.5", "2", "4", "8"} {
		t.Setenv(admissionEnv[i], v)
	}
	root, _ = parse(t)
	assert.Equal(t, want, root.Serve.AdmissionFlags)

	var cfg gateway.Config
	want.apply(&cfg)
	assert.Equal(t, gateway.Config{MaxUnauthenticated: 9, MaxUnauthenticatedPerAddress: 3, PressureHelloTimeout: time.Second,
		FailedHelloRate: 0.5, FailedHelloBurst: 2, FailedHelloGlobalRate: 4, FailedHelloGlobalBurst: 8}, cfg)
}

func TestAdmissionFlagsMustBePositive(t *testing.T) {
	require.NoError(t, admissionDefaults.check())
	for _, spoil := range []func(*AdmissionFlags){
		func(f *AdmissionFlags) { f.MaxUnauthenticated = 0 },
		func(f *AdmissionFlags) { f.MaxUnauthenticatedPerAddress = -1 },
		func(f *AdmissionFlags) { f.PressureHelloTimeout = 0 },
		func(f *AdmissionFlags) { f.FailedHelloRate = 0 },
		func(f *AdmissionFlags) { f.FailedHelloBurst = 0 },
		func(f *AdmissionFlags) { f.FailedHelloGlobalRate = -1 },
		func(f *AdmissionFlags) { f.FailedHelloGlobalBurst = 0 },
	} {
		f := admissionDefaults
		spoil(&f)
		assert.ErrorContains(t, f.check(), "must be positive")
	}
}

func TestAShortPasswordIsWarnedAbout(t *testing.T) {
	for pw, warned := range map[string]bool{"hunter2": true, "éééééééééééééé15": false, strings.Repeat("x", 15): true, strings.Repeat("x", 16): false} {
		var logs testkit.SyncBuffer
		warnIfPasswordShort(slog.New(slog.NewTextHandler(&logs, nil)), pw, false)
		if !warned {
			assert.Empty(t, logs.String(), pw)
			continue
		}
		assert.Contains(t, logs.String(), "SANDBOX_PASSWORD is short", pw)
		assert.NotContains(t, logs.String(), pw, "never the password itself")
	}

	clearEnv(t)
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--password", "hunter2")
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Regexp(t, `level=WARN msg="SANDBOX_PASSWORD is short.*use at least 16 random characters.*characters=7 recommended=16`, logs.String(),
		"the number is in the sentence, not a name an operator takes for a placeholder")
	// The first reason is the proof any socket gets before its hello: one answer lets a
	// guesser test passwords offline, where the wrong-secret budgets bound none of it.
	assert.Regexp(t, `SANDBOX_PASSWORD is short: anyone who can open a socket here gets the gateway's fast proof of itself \(v1\), made with it, and tests guesses against that offline.*--password-proofs v2 turns it off`, logs.String())

	// With the fast proof off, what is left is said: the slow proof's guessing.
	root, _ = parse(t, "--listen", "127.0.0.1:0", "--password", "hunter2", "--password-proofs", "v2")
	_, logs, stop = startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Regexp(t, `SANDBOX_PASSWORD is short: anyone who can open a socket here gets the gateway's slow proof of itself \(v2\)`, logs.String())
	assert.NotContains(t, logs.String(), "fast proof")
}

// TestPasswordProofsIsChecked: --password-proofs takes v1,v2 (either order) or v2, and
// refuses anything else at the start, naming both values.
func TestPasswordProofsIsChecked(t *testing.T) {
	for value, off := range map[string]bool{"v1,v2": false, "v2,v1": false, "v1, v2": false, "v2": true} {
		got, err := passwordProofV1Off(value)
		require.NoError(t, err, value)
		assert.Equal(t, off, got, value)
	}
	for _, value := range []string{"", "v1", "v3", "both", "v2,v3"} {
		_, err := passwordProofV1Off(value)
		require.Error(t, err, value)
		assert.Contains(t, err.Error(), "--password-proofs (SANDBOX_PASSWORD_PROOFS) must be v1,v2")
	}
	clearEnv(t)
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--password-proofs", "v1")
	assert.ErrorContains(t, root.Serve.Run(t.Context(), io.Discard), `got "v1"`)
}

// TestAShortAPITokenIsWarnedAbout: SANDBOX_API_TOKEN opens every computer from any address,
// so a short one is named at start as a short SANDBOX_PASSWORD is; never the token itself.
func TestAShortAPITokenIsWarnedAbout(t *testing.T) {
	clearEnv(t)
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password", "--api-token", "tok3n")
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Regexp(t, `level=WARN msg="SANDBOX_API_TOKEN is short.*use at least 16 random characters.*characters=5 recommended=16`, logs.String())
	assert.NotContains(t, logs.String(), "tok3n", "never the token itself")

	root, _ = parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password", "--api-token", strings.Repeat("t", 16))
	_, logs, stop = startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.NotContains(t, logs.String(), "SANDBOX_API_TOKEN is short")
}

// TestAPasswordNoComputerCanTypeIsWarnedAbout: a character above U+00FF in SANDBOX_PASSWORD
// becomes '?' on every computer, so every hello and install was refused without a hint;
// Latin-1 (küche) is fine. The warning names neither the password nor its characters.
func TestAPasswordNoComputerCanTypeIsWarnedAbout(t *testing.T) {
	for pw, warned := range map[string]bool{"küche-long-secret-é": false, "plain-ascii-long-secret": false, "küche-日本-long-secret": true, "long-secret-with-emoji-🔑": true} {
		var logs testkit.SyncBuffer
		warnIfPasswordUntypable(slog.New(slog.NewTextHandler(&logs, nil)), pw)
		if !warned {
			assert.Empty(t, logs.String(), pw)
			continue
		}
		assert.Contains(t, logs.String(), "SANDBOX_PASSWORD has characters outside CC's character set", pw)
		assert.NotContains(t, logs.String(), pw, "never the password itself")
	}

	// The carriage return of a CRLF environment file, or a space copied with the password.
	for pw, want := range map[string]string{
		"long-enough-secret\r":      `level=WARN msg="SANDBOX_PASSWORD holds a control character (a carriage return or line break copied with it, from a CRLF environment file?): no computer can type one, so every hello with the password is refused; remove it"`,
		"long-enough\u0085secret":   "SANDBOX_PASSWORD holds a control character",
		"long-enough-secret ":       `level=WARN msg="SANDBOX_PASSWORD starts or ends with a space (copied with it?): every player must type it too, or their computer's hello is refused"`,
		"long enough secret inside": "",
	} {
		var logs testkit.SyncBuffer
		warnIfPasswordUntypable(slog.New(slog.NewTextHandler(&logs, nil)), pw)
		if want == "" {
			assert.Empty(t, logs.String(), pw)
			continue
		}
		assert.Contains(t, logs.String(), want, pw)
		assert.NotContains(t, logs.String(), "long-enough", "never the password itself")
	}

	clearEnv(t)
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--password", "küche-日本-long-secret")
	_, logs, stop := startServe(t, root.Serve)
	require.NoError(t, stop())
	assert.Regexp(t, `level=WARN msg="SANDBOX_PASSWORD has characters outside CC's character set.*characters=2`, logs.String())
	assert.NotContains(t, logs.String(), "küche")
}
