package httpapi

import (
	"bytes"
	"context"
	"net"
	"sync"
	"time"
)

// maxWireHeader bounds how much of a response's header block a connection keeps; past it
// the names fall back to Go's canonical case.
const maxWireHeader = 64 << 10

// wireConn is a connection that keeps the header block of the first final (non-1xx)
// response read over it, so getResponseHeaders can hand the names over in the case the
// server sent, as CC's Netty does: Go's client canonicalises them as it reads. A request
// uses one connection per hop (keep-alives are off), so that block is the hop's response.
//
// idle, when not zero, is CC's read timeout (Netty's ReadTimeoutHandler): each read must
// bring data within it, however long the whole response takes.
type wireConn struct {
	net.Conn
	idle  time.Duration
	mu    sync.Mutex
	block []byte
	done  bool
}

func (c *wireConn) Read(p []byte) (int, error) {
	if c.idle > 0 {
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.idle))
	}
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	if !c.done {
		c.block = append(c.block, p[:n]...)
		if start, end := finalHeaderBlock(c.block); end >= 0 {
			c.block, c.done = c.block[start:end], true
		} else if len(c.block) > maxWireHeader {
			c.block, c.done = nil, true
		}
	}
	c.mu.Unlock()
	return n, err
}

// headers is the recorded header block as CC's table: each name as sent, the values of a
// name sent more than once joined with ","; nil when no whole block was recorded.
func (c *wireConn) headers() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done || c.block == nil {
		return nil
	}
	return parseHeaderBlock(c.block)
}

// parseHeaderBlock reads a response's header block (its status line first) into CC's table.
func parseHeaderBlock(block []byte) map[string]string {
	out := map[string]string{}
	lines := bytes.Split(block, []byte{'\n'})
	last := ""
	for _, line := range lines[1:] { // lines[0] is the status line
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' { // an obsolete folded continuation
			if last != "" {
				out[last] += " " + string(bytes.TrimSpace(line))
			}
			continue
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		last = string(bytes.TrimSpace(name))
		v := string(bytes.TrimSpace(value))
		if old, seen := out[last]; seen {
			v = old + "," + v
		}
		out[last] = v
	}
	return out
}

// finalHeaderBlock is where in data the header block of its first response that is not
// an interim 1xx one starts and ends; end is -1 while that block is incomplete.
func finalHeaderBlock(data []byte) (start, end int) {
	for {
		n := blockEnd(data[start:])
		if n < 0 {
			return start, -1
		}
		if !interim(data[start:]) {
			return start, start + n
		}
		start += n
	}
}

// blockEnd is the length up to and including the empty line ending the header block at
// the start of data (lines end in "\n", optionally "\r\n"), or -1.
func blockEnd(data []byte) int {
	for i, first := 0, true; ; first = false {
		nl := bytes.IndexByte(data[i:], '\n')
		if nl < 0 {
			return -1
		}
		line := bytes.TrimSuffix(data[i:i+nl], []byte{'\r'})
		i += nl + 1
		if len(line) == 0 && !first {
			return i
		}
	}
}

// interim reports whether the response starting data is an interim one (1xx other than
// 101, which Go's client hands over as the response).
func interim(data []byte) bool {
	_, rest, ok := bytes.Cut(data, []byte{' '})
	return ok && len(rest) >= 3 && rest[0] == '1' && !bytes.HasPrefix(rest, []byte("101"))
}

// dialWire is the transport's plain dialer: checkedDial, recording the header block.
func (a *API) dialWire(ctx context.Context, network, address string) (net.Conn, error) {
	idle := requestTimeout(ctx)
	ctx, cancel := connectContext(ctx, idle)
	defer cancel()
	conn, err := a.checkedDial(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &wireConn{Conn: conn, idle: idle}, nil
}

// requestTimeoutKey carries a request's timeout in the context its dials get.
type requestTimeoutKey struct{}

// withRequestTimeout is ctx carrying the timeout of an http.request: CC uses it as the
// connect and TLS handshake timeout and as a read timeout, never for the whole request;
// zero means none.
func withRequestTimeout(ctx context.Context, timeout time.Duration) context.Context {
	return context.WithValue(ctx, requestTimeoutKey{}, timeout)
}

func requestTimeout(ctx context.Context) time.Duration {
	timeout, _ := ctx.Value(requestTimeoutKey{}).(time.Duration)
	return timeout
}

// connectContext bounds a dial and its TLS handshake by timeout, if not zero.
func connectContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout)
	}
	return context.WithCancel(ctx)
}

// dialWireTLS is the transport's TLS dialer: checkedDial, the handshake with the API's TLS
// settings, then recording the header block of the decrypted stream. Like CC, it speaks
// HTTP/1.1 only.
func (a *API) dialWireTLS(ctx context.Context, network, address string) (net.Conn, error) {
	idle := requestTimeout(ctx)
	ctx, cancel := connectContext(ctx, idle)
	defer cancel()
	conn, err := a.checkedDial(ctx, network, address)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(address)
	tc, err := a.handshakeTLS(ctx, conn, host, []string{"http/1.1"})
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	return &wireConn{Conn: tc, idle: idle}, nil
}
