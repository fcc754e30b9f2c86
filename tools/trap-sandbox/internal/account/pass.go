package account

import (
	"crypto/sha256"
	"sync"
)

// Passes are the gateway's own bearer tokens for callers it makes itself: opencode's MCP
// connection for one computer's conversations (the agent module) calls the gateway's /mcp
// with that computer's pass, and the pass opens a Caller of the computer's account limited to
// that computer (Caller.Only). A pass never reaches a computer (the gateway writes it only
// into its own files, mode 0600), is never logged, and is held here only by its SHA-256.
// Passes live in memory: a pass opens something only while the process that granted it runs
// and has granted it.
type Passes struct {
	mu sync.RWMutex
	by map[[sha256.Size]byte]Caller
}

// NewPasses returns an empty set of passes.
func NewPasses() *Passes { return &Passes{by: map[[sha256.Size]byte]Caller{}} }

// NewPass returns a fresh pass (tsp_…, 160 random bits), granted nothing yet.
func NewPass() string {
	plain, _, _ := newSecret(KindPass)
	return plain
}

// IsPass reports whether s has the shape of a pass (one read back from a file may not).
func IsPass(s string) bool {
	_, _, err := parseSecret(KindPass, s)
	return err == nil
}

// Grant makes pass open c, in place of what it opened before.
func (p *Passes) Grant(pass string, c Caller) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.by[sha256.Sum256([]byte(pass))] = c
}

// Revoke makes pass open nothing.
func (p *Passes) Revoke(pass string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.by, sha256.Sum256([]byte(pass)))
}

// Caller returns the caller pass opens, if any. The lookup is by the pass's SHA-256, so its
// timing tells nothing useful about the pass itself.
func (p *Passes) Caller(pass string) (Caller, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	c, ok := p.by[sha256.Sum256([]byte(pass))]
	return c, ok
}
