package httpapi

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// TestFinalHeaderBlock: the recorded block is the first final response's, skipping interim
// 1xx ones (101 is final), with "\r\n" or bare "\n" line ends; incomplete is -1.
func TestFinalHeaderBlock(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"plain", "HTTP/1.1 200 OK\r\na: 1\r\n\r\nbody", "HTTP/1.1 200 OK\r\na: 1\r\n\r\n"},
		{"bare newlines", "HTTP/1.1 200 OK\na: 1\n\nbody", "HTTP/1.1 200 OK\na: 1\n\n"},
		{"interim skipped", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nb: 2\r\n\r\nHTTP/1.1 404 Not Found\r\nc: 3\r\n\r\n", "HTTP/1.1 404 Not Found\r\nc: 3\r\n\r\n"},
		{"switching protocols is final", "HTTP/1.1 101 Switching Protocols\r\nu: 1\r\n\r\n", "HTTP/1.1 101 Switching Protocols\r\nu: 1\r\n\r\n"},
		{"incomplete", "HTTP/1.1 200 OK\r\na: 1\r\n", ""},
		{"only an interim so far", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 2", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start, end := finalHeaderBlock([]byte(tc.data))
			got := ""
			if end >= 0 {
				got = tc.data[start:end]
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestParseHeaderBlock: names as sent, a name's repeated values joined with "," (names
// differing in case are different names, as in CC's map), values trimmed, folded lines
// joined to the value before.
func TestParseHeaderBlock(t *testing.T) {
	got := parseHeaderBlock([]byte("HTTP/1.1 200 OK\r\ncontent-type:  text/plain \r\nX-A: 1\r\nX-A: 2\r\nx-a: 3\r\nX-Fold: one\r\n  two\r\nno colon\r\n\r\n"))
	assert.Equal(t, map[string]string{"content-type": "text/plain", "X-A": "1,2", "x-a": "3", "X-Fold": "one two"}, got)
}

// TestHTTPSRefusesAnUntrustedCertificate: with its own TLS dialer the client still checks
// the server's certificate and answers CC's message.
func TestHTTPSRefusesAnUntrustedCertificate(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `local h, err = http.get(...) return tostring(h), err`, srv.URL)
	assert.Equal(t, []lua.LValue{lua.LString("nil"), lua.LString(msgNoSecureConnection)}, out)
}

// TestEveryHopPassesTheAddressRules: with the default rules, a redirect from a public
// name to a private address is refused with CC's message, over plain HTTP and over TLS
// (where the certificate is still checked for the public name), while a redirect to a
// public name is followed. The public name resolves to a public address that the test's
// dialer takes to the loopback server.
func TestEveryHopPassesTheAddressRules(t *testing.T) {
	const public = "93.184.216.34"
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		_, port, _ := net.SplitHostPort(r.Host)
		switch r.URL.Path {
		case "/to-public":
			http.Redirect(w, r, scheme+"://example.com:"+port+"/final", http.StatusFound)
		case "/to-private":
			http.Redirect(w, r, scheme+"://127.0.0.1:"+port+"/final", http.StatusFound)
		default:
			_, _ = io.WriteString(w, "final")
		}
	})
	plain := httptest.NewServer(handler)
	t.Cleanup(plain.Close)
	secure := httptest.NewTLSServer(handler) // its certificate names example.com
	t.Cleanup(secure.Close)
	var dialer net.Dialer
	c := newComputer(t, Options{
		Resolver:  fakeResolver{"example.com": public},
		TLSConfig: secure.Client().Transport.(*http.Transport).TLSClientConfig,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(address)
			if err != nil || host != public {
				return nil, fmt.Errorf("test dialer reached %s", address)
			}
			return dialer.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
		},
	})
	for _, srv := range []*httptest.Server{plain, secure} {
		u, err := url.Parse(srv.URL)
		require.NoError(t, err)
		base := u.Scheme + "://example.com:" + u.Port()
		out := c.run(t, `
			local base = ...
			local h, err = http.get(base .. "/to-public")
			local body = h and h.readAll()
			local h2, err2 = http.get(base .. "/to-private")
			return tostring(body), tostring(err), tostring(h2), err2
		`, base)
		assert.Equal(t, []lua.LValue{lua.LString("final"), lua.LString("nil"), lua.LString("nil"),
			lua.LString(msgDomainNotPermitted)}, out, base)
	}
}

// TestHTTPSFailedHandshakeIsASecureConnectionError: a handshake that fails for another
// reason than the certificate (here no TLS version in common) answers CC's TLS message
// too, as http.websocket does.
func TestHTTPSFailedHandshakeIsASecureConnectionError(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS13}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cfg := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.MaxVersion = tls.VersionTLS12
	c := newComputer(t, Options{AllowPrivate: true, TLSConfig: cfg})
	out := c.run(t, `local h, err = http.get(...) return tostring(h), err`, srv.URL)
	assert.Equal(t, []lua.LValue{lua.LString("nil"), lua.LString(msgNoSecureConnection)}, out)
}

// TestOversizedHeaderBlockFallsBackToCanonicalNames: past maxWireHeader the connection
// keeps no block, and the names are Go's canonical ones, values still joined with ",".
func TestOversizedHeaderBlockFallsBackToCanonicalNames(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["x-big"] = []string{strings.Repeat("b", maxWireHeader)}
		w.Header()["x-dup"] = []string{"a", "b"}
	}))
	t.Cleanup(srv.Close)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local h = assert(http.get(...))
		local headers = h.getResponseHeaders()
		return #(headers["X-Big"] or ""), tostring(headers["x-big"]), headers["X-Dup"]
	`, srv.URL)
	assert.Equal(t, []lua.LValue{lua.LNumber(maxWireHeader), lua.LString("nil"), lua.LString("a,b")}, out)
}
