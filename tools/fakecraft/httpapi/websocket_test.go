package httpapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// connectLua opens a websocket to the URL passed as "..." and waits for it, failing loudly.
const connectLua = `
	local url = ...
	local ws, err = http.websocket(url)
	assert(ws, "connect failed: " .. tostring(err))
`

func TestWebsocketAsyncConnectsAndEchoes(t *testing.T) {
	_, url := wsServer(t, websocket.Upgrader{}, echo)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local url = ...
		local ok = http.websocketAsync(url)
		local event, eurl, ws = os.pullEvent("websocket_success")
		ws.send("hello")
		local msg, bin = ws.receive(5)
		ws.close()
		return ok, eurl == url, type(ws.send), type(ws.receive), type(ws.close), msg, bin
	`, url)
	require.Len(t, out, 7)
	assert.Equal(t, lua.LTrue, out[0], "websocketAsync returns true")
	assert.Equal(t, lua.LTrue, out[1], "event URL is the string passed")
	assert.Equal(t, "function", lstr(out[2]))
	assert.Equal(t, "function", lstr(out[3]))
	assert.Equal(t, "function", lstr(out[4]))
	assert.Equal(t, "hello", lstr(out[5]))
	assert.Equal(t, lua.LFalse, out[6])
}

func TestWebsocketMessageEventArguments(t *testing.T) {
	_, url := wsServer(t, websocket.Upgrader{}, func(c *websocket.Conn) {
		_ = c.WriteMessage(websocket.TextMessage, []byte("hi"))
		_, _, _ = c.ReadMessage()
	})
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, connectLua+`
		local event, eurl, contents, binary = os.pullEvent("websocket_message")
		ws.close()
		return eurl, contents, binary
	`, url)
	assert.Equal(t, []lua.LValue{lua.LString(url), lua.LString("hi"), lua.LFalse}, out)
}

func TestWebsocketBinaryFramesBothWays(t *testing.T) {
	got := make(chan []byte, 1)
	_, url := wsServer(t, websocket.Upgrader{}, func(c *websocket.Conn) {
		kind, data, err := c.ReadMessage()
		if err != nil || kind != websocket.BinaryMessage {
			got <- nil
			return
		}
		got <- data
		_ = c.WriteMessage(websocket.BinaryMessage, data)
		_, _, _ = c.ReadMessage()
	})
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, connectLua+`
		ws.send("\0\1\255\254", true)
		local msg, bin = ws.receive(5)
		ws.close()
		return msg, bin
	`, url)
	assert.Equal(t, []byte{0, 1, 255, 254}, recv(t, got))
	assert.Equal(t, []lua.LValue{lua.LString("\x00\x01\xff\xfe"), lua.LTrue}, out)
}

func TestWebsocketRemoteCloseFrame(t *testing.T) {
	cases := []struct {
		name    string
		payload []byte
		reason  lua.LValue
		code    lua.LValue
	}{
		{"code and reason", websocket.FormatCloseMessage(4000, "bye"), lua.LString("bye"), lua.LNumber(4000)},
		{"code only", websocket.FormatCloseMessage(1000, ""), lua.LNil, lua.LNumber(1000)},
		// Netty decodes the reason as UTF-8; CC hands the Java string to Lua a byte per
		// character, '?' past U+00FF.
		{"UTF-8 reason as CC bytes", websocket.FormatCloseMessage(4000, "küche €"), lua.LString("k\xfcche ?"), lua.LNumber(4000)},
		{"empty close frame", nil, lua.LNil, lua.LNil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			echoed := make(chan bool, 1)
			_, url := wsServer(t, websocket.Upgrader{}, func(c *websocket.Conn) {
				_ = c.WriteControl(websocket.CloseMessage, tc.payload, time.Now().Add(time.Second))
				// CC drops the connection without echoing the Close frame.
				_, _, err := c.ReadMessage()
				var ce *websocket.CloseError
				echoed <- errors.As(err, &ce) && ce.Code != websocket.CloseAbnormalClosure
			})
			c := newComputer(t, Options{AllowPrivate: true})
			out := c.run(t, connectLua+`
				local event, eurl, reason, code = os.pullEvent("websocket_closed")
				local ok, err = pcall(ws.send, "late")
				return eurl, reason, code, err
			`, url)
			require.Len(t, out, 4)
			assert.Equal(t, lua.LString(url), out[0])
			assert.Equal(t, tc.reason, out[1])
			assert.Equal(t, tc.code, out[2])
			assert.Contains(t, lstr(out[3]), "attempt to use a closed file")
			assert.False(t, recv(t, echoed), "the client must not echo the Close frame")
			assert.Equal(t, 0, c.api.OpenWebsockets())
		})
	}
}

// TestWebsocketCloseReasonNotUTF8: Netty checks a Close frame's reason as it checks a text
// frame, and a bad one fails the connection as a protocol error (1007).
func TestWebsocketCloseReasonNotUTF8(t *testing.T) {
	code := make(chan int, 1)
	_, url := wsServer(t, websocket.Upgrader{}, func(c *websocket.Conn) {
		_ = c.WriteControl(websocket.CloseMessage, append(websocket.FormatCloseMessage(4000, ""), 0xfc), time.Now().Add(time.Second))
		_, _, err := c.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			code <- ce.Code
		} else {
			code <- -1
		}
	})
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, connectLua+`
		local event, eurl, reason, code = os.pullEvent("websocket_closed")
		return reason, code
	`, url)
	assert.Equal(t, []lua.LValue{lua.LString(msgCouldNotConnect), lua.LNil}, out)
	assert.Equal(t, closeInvalidData, recv(t, code))
}

func TestWebsocketServerKilledGivesConnectionClosed(t *testing.T) {
	_, url := wsServer(t, websocket.Upgrader{}, func(c *websocket.Conn) {
		_, _, _ = c.ReadMessage()
		_ = c.NetConn().Close() // the server dies: no Close frame
	})
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, connectLua+`
		ws.send("die")
		local event, eurl, reason, code = os.pullEvent("websocket_closed")
		return eurl, reason, code
	`, url)
	assert.Equal(t, []lua.LValue{lua.LString(url), lua.LString("Connection closed"), lua.LNil}, out)
	assert.Equal(t, 0, c.api.OpenWebsockets())
}

func TestWebsocketLocalCloseIsSilent(t *testing.T) {
	serverErr := make(chan error, 1)
	_, url := wsServer(t, websocket.Upgrader{}, func(c *websocket.Conn) {
		_, _, err := c.ReadMessage()
		serverErr <- err
	})
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, connectLua+`
		ws.close()
		-- Collect every event until a 0.5 s timer fires: CC queues nothing on close().
		local timer = os.startTimer(0.5)
		local seen = {}
		while true do
			local event, p1 = os.pullEvent()
			if event == "timer" and p1 == timer then break end
			seen[#seen + 1] = event
		end
		local ok, err = pcall(ws.send, "x")
		local ok2, err2 = pcall(ws.receive)
		return #seen, err, err2
	`, url)
	require.Len(t, out, 3)
	assert.Equal(t, lua.LNumber(0), out[0], "close() must queue no event")
	assert.Contains(t, lstr(out[1]), "attempt to use a closed file")
	assert.Contains(t, lstr(out[2]), "attempt to use a closed file")
	assert.Equal(t, 0, c.api.OpenWebsockets())

	select {
	case err := <-serverErr:
		assert.True(t, websocket.IsCloseError(err, websocket.CloseAbnormalClosure),
			"server must see 1006 (no Close frame), got %v", err)
	case <-time.After(testDeadline):
		t.Fatal("server never saw the connection end")
	}
}

// TestWebsocketInboundSizeLimit: a frame over max_websocket_message ends the socket as CC's
// Netty does: its decoder sends a Close frame (1009, "Max frame length of N has been
// exceeded.") and raises an exception CC's toFriendlyError words "Could not connect".
func TestWebsocketInboundSizeLimit(t *testing.T) {
	cases := []struct {
		name      string
		size      int
		want      []lua.LValue
		wantClose string // the Close frame the server reads, "" for none
	}{
		{"at the limit is delivered", DefaultMaxWebsocketMessage, []lua.LValue{lua.LString("websocket_message"), lua.LNumber(DefaultMaxWebsocketMessage)}, ""},
		{"over the limit closes", DefaultMaxWebsocketMessage + 1, []lua.LValue{lua.LString("websocket_closed"), lua.LString("Could not connect"), lua.LNil},
			"websocket: close 1009 (message too big): Max frame length of 131072 has been exceeded."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			serverErr := make(chan error, 1)
			_, url := wsServer(t, websocket.Upgrader{WriteBufferSize: 256 * 1024}, func(c *websocket.Conn) {
				_ = c.WriteMessage(websocket.BinaryMessage, make([]byte, tc.size))
				_, _, err := c.ReadMessage()
				serverErr <- err
			})
			c := newComputer(t, Options{AllowPrivate: true})
			out := c.run(t, connectLua+`
				while true do
					local event, eurl, a, b = os.pullEvent()
					if event == "websocket_message" then ws.close() return event, #a end
					if event == "websocket_closed" then return event, a, b end
				end
			`, url)
			assert.Equal(t, tc.want, out)
			if tc.wantClose == "" {
				return
			}
			select {
			case err := <-serverErr:
				require.Error(t, err)
				assert.Equal(t, tc.wantClose, err.Error())
			case <-time.After(testDeadline):
				t.Fatal("the server never read the Close frame")
			}
		})
	}
}

func TestWebsocketSendErrors(t *testing.T) {
	_, url := wsServer(t, websocket.Upgrader{}, echo)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, connectLua+`
		local r = {}
		local function try(...) local ok, err = pcall(...) r[#r + 1] = ok and "ok" or err end
		try(ws.send, string.rep("a", 131073))
		try(ws.send, string.rep("a", 131073), true)
		try(function() ws:send("x") end)
		try(function() ws:receive() end)
		try(ws.receive, 0/0)
		try(ws.receive, "1")
		try(ws.receive, -1/0)
		ws.close()
		return unpack(r)
	`, url)
	require.Len(t, out, 7)
	assert.True(t, strings.HasSuffix(lstr(out[0]), "Message is too large"), lstr(out[0]))
	assert.True(t, strings.HasSuffix(lstr(out[1]), "Message is too large"), lstr(out[1]))
	assert.True(t, strings.HasSuffix(lstr(out[2]), "bad argument #2 (boolean expected, got string)"), lstr(out[2]))
	assert.True(t, strings.HasSuffix(lstr(out[3]), "bad argument #1 (number expected, got table)"), lstr(out[3]))
	assert.True(t, strings.HasSuffix(lstr(out[4]), "bad argument #1 (number expected, got nan)"), lstr(out[4]))
	assert.True(t, strings.HasSuffix(lstr(out[5]), "bad argument #1 (number expected, got string)"), lstr(out[5]))
	assert.True(t, strings.HasSuffix(lstr(out[6]), "bad argument #1 (number expected, got -inf)"), lstr(out[6]))
}

func TestWebsocketColonCloseWorksAndSendCoerces(t *testing.T) {
	got := make(chan []string, 1)
	_, url := wsServer(t, websocket.Upgrader{}, func(c *websocket.Conn) {
		var msgs []string
		for len(msgs) < 5 {
			kind, data, err := c.ReadMessage()
			if err != nil || kind != websocket.TextMessage {
				break
			}
			msgs = append(msgs, string(data))
		}
		got <- msgs
		_, _, _ = c.ReadMessage()
	})
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, connectLua+`
		local n = select("#", ws.send(nil))
		ws.send(12)
		ws.send(1.5)
		ws.send(1e15)
		ws.send(true)
		ws:close()
		return n, pcall(ws.send, "x")
	`, url)
	assert.Equal(t, []string{"nil", "12", "1.5", "1000000000000000", "true"}, recv(t, got))
	require.Len(t, out, 3)
	assert.Equal(t, lua.LNumber(0), out[0], "send returns nothing")
	assert.Equal(t, lua.LFalse, out[1], "ws:close() works and closes")
}

func TestWebsocketTooManyOpen(t *testing.T) {
	_, url := wsServer(t, websocket.Upgrader{}, echo)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local url = ...
		local socks = {}
		for i = 1, 4 do socks[i] = assert(http.websocket(url)) end
		local ok, err = pcall(http.websocket, url)
		socks[1].close()
		local again = http.websocket(url)
		local ok2, err2 = pcall(http.websocketAsync, url)
		for i = 2, 4 do socks[i].close() end
		again.close()
		return ok, err, type(again), ok2, err2
	`, url)
	require.Len(t, out, 5)
	assert.Equal(t, lua.LFalse, out[0])
	assert.True(t, strings.HasSuffix(lstr(out[1]), "Too many websockets already open"), lstr(out[1]))
	assert.Equal(t, "table", lstr(out[2]), "closing one frees a slot")
	assert.Equal(t, lua.LFalse, out[3])
	assert.True(t, strings.HasSuffix(lstr(out[4]), "Too many websockets already open"), lstr(out[4]))
	assert.Equal(t, 0, c.api.OpenWebsockets())
}

func TestWebsocketOpenCount(t *testing.T) {
	_, url := wsServer(t, websocket.Upgrader{}, echo)
	c := newComputer(t, Options{AllowPrivate: true, MaxWebsockets: 2})
	out := c.run(t, connectLua+`
		local ws2 = assert(http.websocket(url))
		return pcall(http.websocket, url)
	`, url)
	assert.Equal(t, 2, c.api.OpenWebsockets())
	require.Len(t, out, 2)
	assert.Contains(t, lstr(out[1]), "Too many websockets already open")
}

func TestWebsocketLoopbackDeniedAsynchronously(t *testing.T) {
	_, url := wsServer(t, websocket.Upgrader{}, echo)
	c := newComputer(t, Options{})
	for _, u := range []string{url, strings.Replace(url, "127.0.0.1", "localhost", 1)} {
		out := c.run(t, `
			local url = ...
			local ok, err = http.websocketAsync(url)
			local event, eurl, msg = os.pullEvent("websocket_failure")
			local ok2, err2 = http.websocket(url)
			return ok, err, eurl, msg, ok2, err2
		`, u)
		assert.Equal(t, []lua.LValue{lua.LTrue, lua.LNil, lua.LString(u), lua.LString("Domain not permitted"),
			lua.LFalse, lua.LString("Domain not permitted")}, out, u)
	}
	assert.Equal(t, 0, c.api.OpenWebsockets())
}

func TestWebsocketSynchronousURLErrors(t *testing.T) {
	c := newComputer(t, Options{})
	out := c.run(t, `
		local ok, err = http.websocketAsync("http://example.com/")
		local event, eurl, msg = os.pullEvent("websocket_failure")
		local ok2, err2 = http.websocket("HTTP://example.com/")
		local ok3, err3 = http.websocket("ws://[::1")
		return ok, err, eurl, msg, ok2, err2, ok3, err3
	`)
	assert.Equal(t, []lua.LValue{
		lua.LFalse, lua.LString("Invalid scheme 'http'"), lua.LString("http://example.com/"), lua.LString("Invalid scheme 'http'"),
		lua.LFalse, lua.LString("Invalid scheme 'HTTP'"),
		lua.LFalse, lua.LString("URL malformed"),
	}, out)
}

func TestWebsocketArgumentChecks(t *testing.T) {
	c := newComputer(t, Options{})
	out := c.run(t, `
		local r = {}
		local function try(...) local ok, err = pcall(...) r[#r + 1] = ok and "ok" or err end
		try(http.websocket)
		try(http.websocketAsync, 1)
		try(http.websocket, "ws://x", "h")
		try(http.websocket, {})
		try(http.websocket, { url = "ws://example.com", timeout = 61 })
		try(http.websocket, { url = "ws://example.com", timeout = -1 })
		return unpack(r)
	`)
	require.Len(t, out, 6)
	assert.True(t, strings.HasSuffix(lstr(out[0]), "bad argument #1 (string expected, got nil)"), lstr(out[0]))
	assert.True(t, strings.HasSuffix(lstr(out[1]), "bad argument #1 (string expected, got number)"), lstr(out[1]))
	assert.True(t, strings.HasSuffix(lstr(out[2]), "bad argument #2 (table expected, got string)"), lstr(out[2]))
	assert.True(t, strings.HasSuffix(lstr(out[3]), "bad field 'url' (string expected, got nil"), lstr(out[3]))
	assert.True(t, strings.HasSuffix(lstr(out[4]), ": timeout out of range (between 0.0 and 60.0)"), lstr(out[4]))
	assert.True(t, strings.HasSuffix(lstr(out[5]), ": timeout out of range (between 0.0 and 60.0)"), lstr(out[5]))
}

func TestWebsocketWithoutSchemeGetsWS(t *testing.T) {
	_, url := wsServer(t, websocket.Upgrader{}, echo)
	bare := strings.TrimPrefix(url, "ws://") + "/path?q=1"
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local url = ...
		assert(http.websocketAsync(url))
		local event, eurl, ws = os.pullEvent("websocket_success")
		ws.close()
		return eurl
	`, bare)
	assert.Equal(t, []lua.LValue{lua.LString(bare)}, out, "the event carries the URL exactly as passed")
}

func TestWebsocketReceiveSwallowsOtherEvents(t *testing.T) {
	_, url := wsServer(t, websocket.Upgrader{}, echo)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, connectLua+`
		os.queueEvent("other")
		ws.send("ping")
		local msg = ws.receive(5)
		os.queueEvent("marker")
		local event = os.pullEvent()
		ws.close()
		return msg, event
	`, url)
	assert.Equal(t, []lua.LValue{lua.LString("ping"), lua.LString("marker")}, out)
}

func TestWebsocketReceiveTimeoutReturnsNothing(t *testing.T) {
	_, url := wsServer(t, websocket.Upgrader{}, func(c *websocket.Conn) { _, _, _ = c.ReadMessage() })
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, connectLua+`
		local n0 = select("#", ws.receive(0))
		local n1 = select("#", ws.receive(0.2))
		ws.close()
		return n0, n1
	`, url)
	assert.Equal(t, []lua.LValue{lua.LNumber(0), lua.LNumber(0)}, out)
}

func TestWebsocketReceiveReturnsOnRemoteClose(t *testing.T) {
	c := newComputer(t, Options{AllowPrivate: true})
	_, url := wsServer(t, websocket.Upgrader{}, func(conn *websocket.Conn) {
		_, _, _ = conn.ReadMessage()
		// Close once the program waits in receive(): a socket already closed when receive()
		// is called raises instead, in CC as here. It sent "bye" in the resume that goes on
		// into receive(), so the next time it is parked it is there.
		deadline := time.Now().Add(testDeadline)
		for !c.host.parked.Load() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(1001, "away"), time.Now().Add(time.Second))
		_, _, _ = conn.ReadMessage()
	})
	out := c.run(t, connectLua+`
		ws.send("bye")
		return select("#", ws.receive())
	`, url)
	assert.Equal(t, []lua.LValue{lua.LNumber(0)}, out)
}

func TestWebsocketReceiveTerminated(t *testing.T) {
	_, url := wsServer(t, websocket.Upgrader{}, func(c *websocket.Conn) { _, _, _ = c.ReadMessage() })
	c := newComputer(t, Options{AllowPrivate: true})
	// No pcall around receive: stock gopher-lua cannot yield across pcall.
	err := c.runErr(t, connectLua+`
		os.queueEvent("terminate")
		ws.receive()
	`, url)
	require.Error(t, err)
	var apiErr *lua.ApiError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, lua.LString("Terminated"), apiErr.Object, "level 0: no position")
}

func TestWebsocketTextIsSentAsValidUTF8(t *testing.T) {
	got := make(chan []byte, 2)
	_, url := wsServer(t, websocket.Upgrader{}, func(c *websocket.Conn) {
		for i := 0; i < 2; i++ {
			kind, data, err := c.ReadMessage()
			if err != nil || kind != websocket.TextMessage {
				break
			}
			got <- data
		}
		_, _, _ = c.ReadMessage()
	})
	c := newComputer(t, Options{AllowPrivate: true})
	c.run(t, connectLua+`
		ws.send("a\255b")
		ws.send("\226\130A\195\169")
		ws.close()
	`, url)
	assert.Equal(t, "a\uFFFDb", string(recv(t, got)))
	assert.Equal(t, "\uFFFDA\u00e9", string(recv(t, got)))
}

// rawFrameServer accepts one websocket and hands its hijacked connection to fn, so a test
// can see frames exactly as they came off the wire.
func rawFrameServer(t *testing.T, fn func(conn net.Conn, br *wsConn)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hj, ok := w.(http.Hijacker)
		if !ok {
			return
		}
		conn, buf, err := hj.Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Accept: " + acceptKey(r.Header.Get("Sec-WebSocket-Key")) + "\r\n\r\n")
		_ = buf.Flush()
		fn(conn, &wsConn{conn: conn, br: buf.Reader})
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func TestWebsocketEachMessageIsOneFrame(t *testing.T) {
	frames := make(chan frame, 1)
	url := rawFrameServer(t, func(conn net.Conn, r *wsConn) {
		// Client frames are masked; unmask by reading the header ourselves.
		f, err := readMaskedFrame(r)
		if err == nil {
			frames <- f
		}
		_, _ = readMaskedFrame(r)
	})
	c := newComputer(t, Options{AllowPrivate: true})
	c.run(t, connectLua+`
		ws.send(string.rep("x", 100000))
		ws.close()
	`, url)
	select {
	case f := <-frames:
		assert.True(t, f.fin, "single frame has FIN set")
		assert.Equal(t, byte(opText), f.opcode)
		assert.Len(t, f.payload, 100000)
	case <-time.After(testDeadline):
		t.Fatal("no frame")
	}
}

func TestWebsocketFragmentedMessageKeepsFirstFragment(t *testing.T) {
	url := rawFrameServer(t, func(conn net.Conn, r *wsConn) {
		_, _ = conn.Write([]byte{0x01, 3, 'a', 'b', 'c'}) // text, FIN clear
		_, _ = conn.Write([]byte{0x80, 3, 'd', 'e', 'f'}) // continuation, FIN
		_, _ = conn.Write([]byte{0x89, 2, 'p', 'p'})      // ping
		_, _ = conn.Write([]byte{0x81, 3, 'g', 'h', 'i'}) // next message
		f, err := readMaskedFrame(r)
		if err == nil && f.opcode == opPong && string(f.payload) == "pp" {
			_, _ = conn.Write([]byte{0x81, 4, 'p', 'o', 'n', 'g'})
		}
		_, _ = readMaskedFrame(r)
	})
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, connectLua+`
		local a, b, pong = ws.receive(5), ws.receive(5), ws.receive(5)
		ws.close()
		return a, b, pong
	`, url)
	assert.Equal(t, []lua.LValue{lua.LString("abc"), lua.LString("ghi"), lua.LString("pong")}, out,
		"continuations are dropped (CC has no aggregator) and pings are answered with the same payload")
}

// readMaskedFrame reads one client frame and unmasks it.
func readMaskedFrame(r *wsConn) (frame, error) {
	hdr := make([]byte, 2)
	if _, err := ioReadFull(r, hdr); err != nil {
		return frame{}, err
	}
	n := int(hdr[1] & 0x7F)
	switch n {
	case 126:
		ext := make([]byte, 2)
		if _, err := ioReadFull(r, ext); err != nil {
			return frame{}, err
		}
		n = int(ext[0])<<8 | int(ext[1])
	case 127:
		ext := make([]byte, 8)
		if _, err := ioReadFull(r, ext); err != nil {
			return frame{}, err
		}
		n = 0
		for _, b := range ext {
			n = n<<8 | int(b)
		}
	}
	mask := make([]byte, 4)
	if _, err := ioReadFull(r, mask); err != nil {
		return frame{}, err
	}
	payload := make([]byte, n)
	if _, err := ioReadFull(r, payload); err != nil {
		return frame{}, err
	}
	for i := range payload {
		payload[i] ^= mask[i%4]
	}
	return frame{fin: hdr[0]&0x80 != 0, opcode: hdr[0] & 0x0F, payload: payload}, nil
}

func TestWebsocketDropAllAndRefuse(t *testing.T) {
	_, url := wsServer(t, websocket.Upgrader{}, echo)
	c := newComputer(t, Options{AllowPrivate: true})
	c.host.L.SetGlobal("dropAll", c.host.L.NewFunction(func(*lua.LState) int { c.api.DropAll(); return 0 }))
	c.host.L.SetGlobal("refuse", c.host.L.NewFunction(func(L *lua.LState) int { c.api.Refuse(L.ToBool(1)); return 0 }))
	out := c.run(t, connectLua+`
		local ws2 = assert(http.websocket(url .. "/2"))
		dropAll()
		local closed = {}
		while #closed < 2 do
			local event, eurl, reason, code = os.pullEvent()
			if event == "websocket_closed" then closed[#closed + 1] = reason .. "|" .. tostring(code) end
		end
		local pending = pcall(ws.send, "x")
		refuse(true)
		local ok, err = http.websocket(url)
		refuse(false)
		local ws3 = http.websocket(url)
		ws3.close()
		return closed[1], closed[2], pending, ok, err, type(ws3)
	`, url)
	assert.Equal(t, []lua.LValue{lua.LString("Connection closed|nil"), lua.LString("Connection closed|nil"), lua.LFalse,
		lua.LFalse, lua.LString("Could not connect"), lua.LString("table")}, out)
	assert.Equal(t, 0, c.api.OpenWebsockets())
}

func TestWebsocketDelayHook(t *testing.T) {
	_, url := wsServer(t, websocket.Upgrader{}, echo)
	c := newComputer(t, Options{AllowPrivate: true})
	c.api.SetDelay(100 * time.Millisecond)
	start := time.Now()
	out := c.run(t, connectLua+`
		ws.send("x")
		local m = ws.receive()
		ws.close()
		return m
	`, url)
	assert.Equal(t, []lua.LValue{lua.LString("x")}, out)
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond, "connection result and message are each delayed")
}

func TestWebsocketSendThenCloseDeliversMessages(t *testing.T) {
	got := make(chan string, 1)
	_, url := wsServer(t, websocket.Upgrader{}, func(c *websocket.Conn) {
		var all []string
		for {
			_, data, err := c.ReadMessage()
			if err != nil {
				break
			}
			all = append(all, string(data))
		}
		got <- strings.Join(all, ",")
	})
	c := newComputer(t, Options{AllowPrivate: true})
	c.run(t, connectLua+`
		for i = 1, 20 do ws.send(tostring(i)) end
		ws.close()
	`, url)
	assert.Equal(t, "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20", recv(t, got))
}

func TestWebsocketHandshakeHeaders(t *testing.T) {
	got := make(chan http.Header, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		c, err := (&websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		_, _, _ = c.ReadMessage()
	}))
	t.Cleanup(srv.Close)
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	c := newComputer(t, Options{AllowPrivate: true})
	c.run(t, `
		local url = ...
		local ws = assert(http.websocket(url, { ["X-Token"] = "abc", [1] = "skip", ["X-Num"] = 5 }))
		ws.close()
		ws = assert(http.websocket({ url = url, headers = { ["User-Agent"] = "mine", Origin = "http://o" } }))
		ws.close()
	`, url)
	first := recv(t, got)
	assert.Equal(t, "abc", first.Get("X-Token"))
	assert.Empty(t, first.Values("X-Num"), "non-string values are skipped")
	assert.Equal(t, DefaultUserAgent, first.Get("User-Agent"))
	assert.Empty(t, first.Values("Origin"), "no Origin unless given")
	second := recv(t, got)
	assert.Equal(t, "mine", second.Get("User-Agent"))
	assert.Equal(t, "http://o", second.Get("Origin"))
}

func TestWebsocketDisabled(t *testing.T) {
	c := newComputer(t, Options{WebsocketsDisabled: true})
	out := c.run(t, `return pcall(http.websocket, "ws://example.com")`)
	require.Len(t, out, 2)
	assert.Contains(t, lstr(out[1]), "Websocket connections are disabled")
	// CC refuses before it reads the headers and the timeout.
	out = c.run(t, `return pcall(http.websocketAsync, { url = "ws://example.com", headers = { [""] = "v" }, timeout = -1 })`)
	require.Len(t, out, 2)
	assert.Contains(t, lstr(out[1]), "Websocket connections are disabled")

	off := newComputer(t, Options{Disabled: true})
	assert.Equal(t, []lua.LValue{lua.LString("nil")}, off.run(t, `return type(http)`))
}

func ioReadFull(r *wsConn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.br.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func TestWebsocketFailures(t *testing.T) {
	hanging, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			conn, err := hanging.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- conn // never answers the handshake
		}
	}()
	t.Cleanup(func() {
		_ = hanging.Close()
		for conn := range accepted {
			_ = conn.Close()
		}
	})
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)

	c := newComputer(t, Options{AllowPrivate: true, Resolver: fakeResolver{"known.test": "127.0.0.1"}})
	out := c.run(t, `
		local hang, missing = ...
		local r = {}
		local function try(...) local ok, err = http.websocket(...) r[#r + 1] = tostring(ok) .. "|" .. tostring(err) end
		try({ url = hang, timeout = 0.2 })
		try(missing)
		try("ws://nowhere.test/")
		return unpack(r)
	`, "ws://"+hanging.Addr().String(), "ws"+strings.TrimPrefix(notFound.URL, "http"))
	assert.Equal(t, []lua.LValue{
		lua.LString("false|Timed out"),
		lua.LString("false|Invalid handshake response getStatus: 404 Not Found"),
		lua.LString("false|Unknown host"),
	}, out)
	assert.Equal(t, 0, c.api.OpenWebsockets())
}

// A websocket URL's bytes past ASCII go out in the handshake as CC sends them (UTF-8 of
// each byte's character), and the events keep the URL as given.
func TestWebsocketURLBytesAsCCSendsThem(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up := websocket.Upgrader{}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		_ = conn.WriteMessage(websocket.TextMessage, []byte(r.RequestURI))
		_, _, _ = conn.ReadMessage() // until the client goes
	}))
	t.Cleanup(srv.Close)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local base = ...
		local url = base .. "/k\252che?q=k\252che"
		local ws = assert(http.websocket(url))
		local _, eventURL, msg = os.pullEvent("websocket_message")
		ws.close()
		return msg, eventURL == url
	`, "ws"+strings.TrimPrefix(srv.URL, "http"))
	assert.Equal(t, []lua.LValue{lua.LString("/k\u00fcche?q=k\u00fcche"), lua.LTrue}, out)
}

// fakeResolver maps names to one address; anything else is unknown.
type fakeResolver map[string]string

func (f fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if ip, ok := f[host]; ok {
		return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}
