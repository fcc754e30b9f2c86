// Package testkit is what the repository's Go tests share, so no test package keeps its own
// copy: a goroutine-safe buffer and the poll interval here, a faithful fake opencode in
// opencodefake, and the Go stand-in of a computer's daemon in daemonfake. It sits outside
// internal/ so the tests module (tests/) can import it too; nothing in the gateway's binary
// does.
package testkit

import (
	"bytes"
	"sync"
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
