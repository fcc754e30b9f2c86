package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
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
