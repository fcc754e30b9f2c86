// Package testkit is what the repository's Go tests share, so no test package keeps its own
// copy: a goroutine-safe buffer, the poll interval and a child process's environment here, a
// faithful fake opencode in opencodefake, the Go stand-in of a computer's daemon in
// daemonfake, the older of two replicas of one name in twinfake, and in inputcases the table
// of input events that holds the web console's counts to the gateway's. It sits outside
// internal/ so the tests module (tests/) can import it too; nothing in the gateway's binary
// does.
package testkit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Poll is how often the tests' require.Eventually conditions are checked: soon enough that a
// wait ends just after its condition holds, seldom enough that a condition asking a gateway
// over HTTP does not load it.
const Poll = 10 * time.Millisecond

// SyncBuffer is a bytes.Buffer that other goroutines may write (a logger, a server's output)
// while the test reads it. The zero value is empty and ready to use.
type SyncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// FixturesDir is where the fixtures that the Go tests and the Lua specs both read live,
// relative to the repository root (the directory holding go.work).
const FixturesDir = "trapos/tests/fixtures"

// ReadFixture decodes the JSON fixture name (e.g. "wire_frames.json"), failing the test when
// it cannot. The fixtures are found from the test's working directory upward.
func ReadFixture[T any](t testing.TB, name string) T {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("read fixture %s: %v", name, err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("read fixture %s: no go.work above the test's directory", name)
		}
		dir = parent
	}
	data, err := os.ReadFile(filepath.Join(dir, FixturesDir, name))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decode fixture %s: %v", name, err)
	}
	return v
}

// WrongSecret is secret (a token, a pass, a link key) with its last letter changed to another
// one: the right selector with a wrong secret. The letter is never a fixed one, which would be
// the secret itself whenever the secret already ends with it (one run in about 30).
func WrongSecret(secret string) string {
	if secret[len(secret)-1] == 'a' {
		return secret[:len(secret)-1] + "b"
	}
	return secret[:len(secret)-1] + "a"
}

// ChildEnv is the environment of a child process a test starts (its own test binary again,
// for a limit or a user that is the whole process's): this process's, then vars. The race
// detector's options (GORACE) gain atexit_sleep_ms=0: a test binary built with -race sleeps a
// second as it exits (for other goroutines' reports, where a race is reported as it is
// found), and the test waited that second out for each child.
func ChildEnv(vars ...string) []string {
	race := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	return append(append(os.Environ(), "GORACE="+race), vars...)
}
