package cluster

import (
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// cuttableProxy forwards TCP to a NATS server until it is cut: then it drops every
// connection and refuses new ones, as a network partition between one replica and NATS would,
// until it is restored. Frozen, it keeps its connections open but forwards nothing, as a
// replica that hangs looks to NATS.
type cuttableProxy struct {
	l        net.Listener
	upstream string
	wg       sync.WaitGroup

	mu     sync.Mutex // guards cut, frozen and conns
	thawed *sync.Cond // on mu; broadcast when frozen or cut changes
	cut    bool
	frozen bool
	conns  map[net.Conn]struct{}
}

func newCuttableProxy(t testing.TB, upstream string) *cuttableProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cuttableProxy{l: l, upstream: upstream, conns: map[net.Conn]struct{}{}}
	p.thawed = sync.NewCond(&p.mu)
	p.wg.Go(p.serve)
	t.Cleanup(func() {
		_ = l.Close()
		p.setCut(true)
		p.wg.Wait()
	})
	return p
}

func (p *cuttableProxy) url() string { return "nats://" + p.l.Addr().String() }

func (p *cuttableProxy) serve() {
	for {
		down, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			_ = down.Close()
			continue
		}
		up, err := net.Dial("tcp", p.upstream)
		if err != nil {
			_ = down.Close()
			continue
		}
		p.mu.Lock()
		p.conns[down], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			buf := make([]byte, 32<<10)
			for {
				n, err := src.Read(buf)
				p.waitThawed()
				if n > 0 {
					if _, werr := dst.Write(buf[:n]); werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			_ = dst.Close()
			_ = src.Close()
		}
		p.wg.Go(func() { pipe(up, down) })
		p.wg.Go(func() { pipe(down, up) })
	}
}

// waitThawed returns once the proxy is not frozen, or is cut.
func (p *cuttableProxy) waitThawed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.frozen && !p.cut {
		p.thawed.Wait()
	}
}

// setFrozen freezes (true) or thaws (false) the link.
func (p *cuttableProxy) setFrozen(frozen bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = frozen
	p.thawed.Broadcast()
}

// setCut cuts (true) or restores (false) the link.
func (p *cuttableProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.thawed.Broadcast()
	p.cut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
		}
		clear(p.conns)
	}
}
