package httpapi

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// rawUpgradeServer answers each websocket handshake with the bytes reply makes of the
// request's Sec-WebSocket-Key, then closes the connection: a server speaking HTTP as it
// pleases, not as Go's would. It returns the ws:// URL.
func rawUpgradeServer(t *testing.T, reply func(key string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			req, err := http.ReadRequest(bufio.NewReader(conn))
			if err == nil {
				_, _ = conn.Write([]byte(reply(req.Header.Get("Sec-WebSocket-Key"))))
			}
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	return "ws://" + ln.Addr().String() + "/socket"
}

// A refused or broken upgrade fails with the text CC 1.113.1 gives (read from its source and
// Netty 4.1.97's, which it pins, not seen in game): CC's pipeline reads the answer with
// Netty's HttpClientCodec and an HttpObjectAggregator of 8192 bytes, then
// WebSocketClientHandshaker13.verify checks it, and NetworkUtils.toFriendlyError names the
// exception: a WebSocketHandshakeException by its message (Java's "null" for a missing
// header), an oversized answer (a TooLongFrameException) "Message is too large"; a
// connection closed before any answer is WebsocketHandler's "Connection closed", and a first
// line that is not HTTP's Netty's invalid message, status "999 Unknown".
func TestWebsocketRefusedUpgradeAsCC(t *testing.T) {
	head := func(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n\r\n" }
	upgrade := "Upgrade: websocket"
	connection := "Connection: Upgrade"
	big := strings.Repeat("x", 9000)
	cases := []struct {
		name    string
		reply   func(key string) string
		headers string // Lua table of request headers
		want    func(key string) string
	}{
		{
			name:  "HTTP/1.0 404 with a body and a length, as Python's http.server",
			reply: func(string) string { return head("HTTP/1.0 404 File not found", "Content-Length: 9") + "not here\n" },
			want:  func(string) string { return "Invalid handshake response getStatus: 404 File not found" },
		},
		{
			name:  "HTTP/1.0 404 whose body ends at the close",
			reply: func(string) string { return head("HTTP/1.0 404 Not Found", "Content-Type: text/html") + "<p>gone</p>" },
			want:  func(string) string { return "Invalid handshake response getStatus: 404 Not Found" },
		},
		{
			name:  "a status without a reason",
			reply: func(string) string { return head("HTTP/1.1 403", "Content-Length: 0") },
			want:  func(string) string { return "Invalid handshake response getStatus: 403 " },
		},
		{
			name:  "a page over the aggregator's 8192 bytes, by its length",
			reply: func(string) string { return head("HTTP/1.1 200 OK", "Content-Length: 9000") + big },
			want:  func(string) string { return msgMessageTooLarge },
		},
		{
			name:  "a page over 8192 bytes that ends at the close",
			reply: func(string) string { return head("HTTP/1.0 200 OK") + big },
			want:  func(string) string { return msgMessageTooLarge },
		},
		{
			name: "a chunked page over 8192 bytes",
			reply: func(string) string {
				return head("HTTP/1.1 404 Not Found", "Transfer-Encoding: chunked") +
					"1194\r\n" + big[:4500] + "\r\n1194\r\n" + big[:4500] + "\r\n0\r\n\r\n"
			},
			want: func(string) string { return msgMessageTooLarge },
		},
		{
			name: "a chunked page within 8192 bytes",
			reply: func(string) string {
				return head("HTTP/1.1 404 Not Found", "Transfer-Encoding: chunked") + "4\r\ngone\r\n0\r\n\r\n"
			},
			want: func(string) string { return "Invalid handshake response getStatus: 404 Not Found" },
		},
		{
			name:  "no answer at all",
			reply: func(string) string { return "" },
			want:  func(string) string { return msgConnectionClosed },
		},
		{
			name:  "a first line that is not HTTP",
			reply: func(string) string { return "SSH-2.0-OpenSSH_9.6\r\n" },
			want:  func(string) string { return "Invalid handshake response getStatus: 999 Unknown" },
		},
		{
			name:  "a 101 without Upgrade",
			reply: func(key string) string { return head("HTTP/1.1 101 Switching Protocols", connection) },
			want:  func(string) string { return "Invalid handshake response upgrade: null" },
		},
		{
			name:  "a 101 without Connection",
			reply: func(key string) string { return head("HTTP/1.1 101 Switching Protocols", upgrade) },
			want:  func(string) string { return "Invalid handshake response connection: null" },
		},
		{
			name:  "a 101 without an accept key",
			reply: func(key string) string { return head("HTTP/1.1 101 Switching Protocols", upgrade, connection) },
			want:  func(key string) string { return "Invalid challenge. Actual: null. Expected: " + acceptKey(key) },
		},
		{
			name: "a 101 without the subprotocol asked for",
			reply: func(key string) string {
				return head("HTTP/1.1 101 Switching Protocols", upgrade, connection, "Sec-WebSocket-Accept: "+acceptKey(key))
			},
			headers: `{ ["Sec-WebSocket-Protocol"] = "chat" }`,
			want:    func(string) string { return "Invalid subprotocol. Actual: null. Expected one of: chat" },
		},
		{
			name: "a 101 with a subprotocol nobody asked for",
			reply: func(key string) string {
				return head("HTTP/1.1 101 Switching Protocols", upgrade, connection,
					"Sec-WebSocket-Accept: "+acceptKey(key), "Sec-WebSocket-Protocol: chat")
			},
			want: func(string) string { return "Invalid subprotocol. Actual: chat. Expected one of: null" },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			keys := make(chan string, 2)
			url := rawUpgradeServer(t, func(key string) string {
				keys <- key
				return tc.reply(key)
			})
			headers := tc.headers
			if headers == "" {
				headers = "nil"
			}
			c := newComputer(t, Options{AllowPrivate: true})
			out := c.run(t, `
				local url = ...
				local headers = `+headers+`
				local ok, err = http.websocket(url, headers)
				http.websocketAsync(url, headers)
				local event, eventURL, reason = os.pullEvent("websocket_failure")
				return tostring(ok), err, eventURL == url, reason
			`, url)
			want := lua.LString(tc.want(recv(t, keys)))
			assert.Equal(t, []lua.LValue{lua.LString("false"), want, lua.LTrue, lua.LString(tc.want(recv(t, keys)))}, out)
			assert.Equal(t, 0, c.api.OpenWebsockets())
		})
	}
}
