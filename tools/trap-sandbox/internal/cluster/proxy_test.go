package cluster

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// cuttableProxy forwards TCP to a NATS server until it is cut: then it drops every
// connection and refuses new ones, as a network partition between one replica and NATS would,
// until it is restored.
type cuttableProxy struct {
	l        net.Listener
	upstream string
	wg       sync.WaitGroup

	mu    sync.Mutex // guards cut and conns
	cut   bool
	conns map[net.Conn]struct{}
}

func newCuttableProxy(t *testing.T, upstream string) *cuttableProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cuttableProxy{l: l, upstream: upstream, conns: map[net.Conn]struct{}{}}
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
			_, _ = io.Copy(dst, src)
			_ = dst.Close()
			_ = src.Close()
		}
		p.wg.Go(func() { pipe(up, down) })
		p.wg.Go(func() { pipe(down, up) })
	}
}

// setCut cuts (true) or restores (false) the link.
func (p *cuttableProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
		}
		clear(p.conns)
	}
}
