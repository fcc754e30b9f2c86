// Package testkit is what the repository's Go tests share, so no test package keeps its own
// copy: a goroutine-safe buffer here and a faithful fake opencode in opencodefake. It sits
// outside internal/ so the tests module (tests/) can import it too; nothing in the gateway's
// binary does.
package testkit

import (
	"bytes"
	"sync"
)

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
