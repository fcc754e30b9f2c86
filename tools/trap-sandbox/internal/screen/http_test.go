package screen

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit/daemonfake"
)

// event reads one server-sent event: its name and data.
func event(t *testing.T, r *bufio.Reader) (string, string) {
	t.Helper()
	var name, data string
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			return name, data
		case strings.HasPrefix(line, "event: "):
			name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		}
	}
}

func stream(t *testing.T, ctx context.Context, url string, token ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	for _, tok := range token {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}

// TestTheStreamSendsFramesAndStopsTheWatchWhenTheViewerLeaves: the host API's stream sends
// each frame as an event; when its viewer goes away the module unwatches the computer.
func TestTheStreamSendsFramesAndStopsTheWatchWhenTheViewerLeaves(t *testing.T) {
	m, d := standIn(t)
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, m).Handler())
	defer srv.Close()

	ctx, leave := context.WithCancel(t.Context())
	resp := stream(t, ctx, srv.URL+"/trapos/computers/7:/screen")
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	_, err := m.handleUpdate(t.Context(), from, frame(1, map[string]string{"1": "hé "}, true))
	require.NoError(t, err)
	name, data := event(t, bufio.NewReader(resp.Body))
	assert.Equal(t, "frame", name)
	var f FrameJSON
	require.NoError(t, json.Unmarshal([]byte(data), &f))
	assert.Equal(t, 1, f.Seq)
	assert.Equal(t, "hé ", f.Rows[0].Text)
	assert.Equal(t, 3, f.Width)

	leave()
	require.Eventually(t, func() bool { return slices.Contains(d.Types(), protocol.TypeScreenUnwatch) }, testWait, testTick,
		"the viewer went away: the watch stops")
	_, err = m.handleUpdate(t.Context(), from, frame(2, nil, false))
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err))
}

// TestTheStreamCarriesNoRawCSIOfTheScreen: a row with CC's byte 0x9B (a 2×3 block on the
// screen) is U+009B, a terminal's CSI, which the stream's JSON carried raw to a viewer reading
// it with curl; it carries it as \u009b, the same text once decoded.
func TestTheStreamCarriesNoRawCSIOfTheScreen(t *testing.T) {
	m, _ := standIn(t)
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, m).Handler())
	defer srv.Close()
	resp := stream(t, t.Context(), srv.URL+"/trapos/computers/7:/screen")
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err := m.handleUpdate(t.Context(), from, frame(1, map[string]string{"1": "\u009b2J"}, true))
	require.NoError(t, err)
	_, data := event(t, bufio.NewReader(resp.Body))
	assert.NotContains(t, data, "\u009b", "no raw CSI in the stream")
	assert.Contains(t, data, `\u009b2J`)
	var f FrameJSON
	require.NoError(t, json.Unmarshal([]byte(data), &f))
	assert.Equal(t, "\u009b2J", f.Rows[0].Text)
}

// smallBuffers is a listener whose connections keep a small send buffer, so that a viewer who
// reads nothing blocks the stream's writes after a few frames, not megabytes.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// A viewer that opens the stream and reads nothing (or whose connection vanished without a
// close) blocked its writes forever once the kernel's buffers were full: the server gives an
// event stream no deadline, so the watch and its goroutine lived as long as the gateway. Each
// write has StreamWriteTimeout now; past it the stream ends, and the computer is unwatched.
func TestAViewerThatReadsNothingIsDropped(t *testing.T) {
	m, d := standIn(t)
	m.writeTimeout = 50 * time.Millisecond
	srv := httptest.NewUnstartedServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, m).Handler())
	srv.Listener = smallBuffers{srv.Listener}
	srv.Start()
	defer srv.Close()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(4096))
	_, err = io.WriteString(conn, "GET /trapos/computers/7:/screen HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return slices.Contains(d.Types(), protocol.TypeScreenWatch) }, testWait, testTick, "the stream watches")

	// A screen that changes all the time, whose frames nobody reads.
	row := strings.Repeat("x", 255)
	seq := 0
	unwatched := func() bool {
		seq++
		rows := map[string]string{}
		for y := 1; y <= 20; y++ {
			rows[strconv.Itoa(y)] = row[:255-seq%2]
		}
		_, _ = m.handleUpdate(t.Context(), from, bigFrame(seq, rows))
		return slices.Contains(d.Types(), protocol.TypeScreenUnwatch)
	}
	require.Eventually(t, unwatched, testWait, testTick, "the stream ends, and the watch with it")
}

// bigFrame is a whole screen.update of a 255×20 screen with rows.
func bigFrame(seq int, rows map[string]string) json.RawMessage {
	rs := map[string]any{}
	for y, text := range rows {
		rs[y] = map[string]any{"text": text, "fg": strings.Repeat("0", len(text)), "bg": strings.Repeat("f", len(text))}
	}
	b, _ := json.Marshal(map[string]any{"watchId": 1, "seq": seq, "width": 255, "height": 20, "colour": true,
		"cursor": map[string]any{"x": 1, "y": 1, "blink": true}, "rows": rs,
		"palette": []string{"#f0f0f0"}, "fg": 1, "bg": 32768})
	return b
}

func TestTheStreamEndsWhenTheComputerGoesAway(t *testing.T) {
	m, _ := standIn(t)
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, m).Handler())
	defer srv.Close()
	resp := stream(t, t.Context(), srv.URL+"/trapos/computers/7:/screen")
	defer resp.Body.Close()
	socket, closeSocket := context.WithCancel(t.Context())
	_, err := m.handleUpdate(socket, from, frame(1, map[string]string{"1": "hi "}, true))
	require.NoError(t, err)
	r := bufio.NewReader(resp.Body)
	name, _ := event(t, r)
	assert.Equal(t, "frame", name)
	closeSocket()
	name, data := event(t, r)
	assert.Equal(t, "end", name)
	assert.JSONEq(t, `{"ok":false,"error":{"code":"not_connected","message":"computer 7: disconnected","left":true}}`, data,
		"the unlabelled computer's traposId, with no doubled colon; marked left, which a client reads (the stdio MCP bridge), never the words")
}

// TestTheStreamSaysTheGatewayIsShuttingDown: a socket the gateway closed with a reason
// (its context's cause: gateway.ErrShuttingDown at shutdown) ends the stream with that reason,
// not with "the computer disconnected": the viewer can tell the gateway stopping from the
// computer leaving, by its mark (stopping), which the CLI's view reads, never its words.
func TestTheStreamSaysTheGatewayIsShuttingDown(t *testing.T) {
	m, _ := standIn(t)
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, m).Handler())
	defer srv.Close()
	resp := stream(t, t.Context(), srv.URL+"/trapos/computers/7:/screen")
	defer resp.Body.Close()
	socket, closeSocket := context.WithCancelCause(t.Context())
	_, err := m.handleUpdate(socket, from, frame(1, map[string]string{"1": "hi "}, true))
	require.NoError(t, err)
	r := bufio.NewReader(resp.Body)
	name, _ := event(t, r)
	assert.Equal(t, "frame", name)
	closeSocket(gateway.ErrShuttingDown)
	name, data := event(t, r)
	assert.Equal(t, "end", name)
	assert.JSONEq(t, `{"ok":false,"error":{"code":"not_connected","message":"the gateway is shutting down","stopping":true}}`, data)
}

func TestTheStreamOfAComputerThatRefusesIsAnError(t *testing.T) {
	m, _ := standIn(t)
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, m).Handler())
	defer srv.Close()
	resp := stream(t, t.Context(), srv.URL+"/trapos/computers/9:/screen")
	defer resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	var a server.Answer
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
	assert.Equal(t, protocol.CodeNotConnected, a.Error.Code)
}

// TestTheStreamOfAComputerThatWentBeforeItAnsweredSaysToAskAgain: a stream asked for as its
// computer went away (or was replaced by a newer socket) before it answered the watch is a
// read's refusal: a read changes nothing, ask again once it is back, with the API's way to see
// it back, and without the word to ask again for a caller that waits by itself (the web
// console's view), where it said the gateway's "it may have done what it was asked all the
// same: check before you ask again".
func TestTheStreamOfAComputerThatWentBeforeItAnsweredSaysToAskAgain(t *testing.T) {
	for _, replaced := range []bool{false, true} {
		m, d := standIn(t)
		d.Before = func(_ context.Context, _ int, typ string) error {
			if typ == protocol.TypeScreenWatch {
				return computer.LeftBeforeAnswer(d.TraposID(), replaced)
			}
			return nil
		}
		srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, m).Handler())
		resp := stream(t, t.Context(), srv.URL+"/trapos/computers/7:/screen")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		var a server.Answer
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
		require.NoError(t, resp.Body.Close())
		srv.Close()
		require.NotNil(t, a.Error)
		went := "computer 7: disconnected before it answered"
		if replaced {
			went = "computer 7: was replaced by a newer connection before it answered"
		}
		assert.Equal(t, went+"; a read changes nothing: ask again once it is back (GET /trapos/computers lists it then)", a.Error.Message)
		assert.Equal(t, went, a.Error.WaitingMessage)
		assert.True(t, a.Error.Left)
	}
}

// TestTheStreamTakesARawByteOfTheTraposIdAsItself: 7:k%FCche (a Latin-1 terminal's byte) is
// the computer 7:küche, by the text rule; it was not connected.
func TestTheStreamTakesARawByteOfTheTraposIdAsItself(t *testing.T) {
	m, d := standIn(t)
	d.Label = "küche"
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, m).Handler())
	defer srv.Close()
	resp := stream(t, t.Context(), srv.URL+"/trapos/computers/7:k%FCche/screen")
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestTheStreamEndsWhenItsTokenIsRevokedOrExpires: a stream opened with an account's token
// sends no frame once that token is revoked or has expired (it is refused from the next request
// on; a stream is one request that lasts): it ends with the refusal, as a new request would get.
func TestTheStreamEndsWhenItsTokenIsRevokedOrExpires(t *testing.T) {
	ctx := t.Context()
	clk := clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	accounts := account.New(account.NewMemory(), clk)
	_, err := accounts.AddAccount(ctx, "root", account.RoleAdmin, "first")
	require.NoError(t, err)
	for _, ends := range []string{"revoked", "expired"} {
		t.Run(ends, func(t *testing.T) {
			m, _ := standIn(t)
			srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{Accounts: accounts}, m).Handler())
			defer srv.Close()
			plain, tok, err := accounts.IssueToken(ctx, "root", "viewer-"+ends, time.Hour)
			require.NoError(t, err)
			resp := stream(t, ctx, srv.URL+"/trapos/computers/7:/screen", plain)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			_, err = m.handleUpdate(ctx, from, frame(1, map[string]string{"1": "hi "}, true))
			require.NoError(t, err)
			r := bufio.NewReader(resp.Body)
			name, _ := event(t, r)
			require.Equal(t, "frame", name, "the token opens the stream")

			if ends == "revoked" {
				_, err = accounts.RevokeToken(ctx, "root", tok.Selector)
				require.NoError(t, err)
			} else {
				clk.Advance(time.Hour)
			}
			_, err = m.handleUpdate(ctx, from, frame(2, map[string]string{"1": "PIN"}, false))
			require.NoError(t, err)
			name, data := event(t, r)
			assert.Equal(t, "end", name, "no frame for a token that no longer opens the API: %s", data)
			assert.Contains(t, data, `"code":"unauthorized"`)
			assert.Contains(t, data, ends)
			assert.NotContains(t, data, "PIN")
		})
	}
}

// TestAStillStreamKeepsAliveAndEndsWhenItsTokenIsRevoked: while the screen stays still the
// stream sends a comment every keepAlive (a proxy keeps it open, and a viewer whose connection
// vanished is noticed at the write), and checks its token then: a revoked token's stream ends
// without waiting for the screen to change (the soak: still open 20 s after the revocation).
func TestAStillStreamKeepsAliveAndEndsWhenItsTokenIsRevoked(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), testWait) // bounds a failure only
	defer cancel()
	accounts := account.New(account.NewMemory(), clock.Real{})
	_, err := accounts.AddAccount(ctx, "root", account.RoleAdmin, "first")
	require.NoError(t, err)
	m, _ := standIn(t)
	m.keepAlive = time.Millisecond
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{Accounts: accounts}, m).Handler())
	defer srv.Close()
	plain, tok, err := accounts.IssueToken(ctx, "root", "viewer", time.Hour)
	require.NoError(t, err)
	resp := stream(t, ctx, srv.URL+"/trapos/computers/7:/screen", plain)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = m.handleUpdate(ctx, from, frame(1, map[string]string{"1": "hi "}, true))
	require.NoError(t, err)
	r := bufio.NewReader(resp.Body)
	name, _ := event(t, r)
	for name == "" { // keep-alives sent before the first frame
		name, _ = event(t, r)
	}
	require.Equal(t, "frame", name)

	line, err := r.ReadString('\n')
	require.NoError(t, err, "the screen stays still: the stream still sends something")
	assert.Equal(t, ": keepalive\n", line)

	_, err = accounts.RevokeToken(ctx, "root", tok.Selector)
	require.NoError(t, err)
	var data string
	for name, data = event(t, r); name == ""; name, data = event(t, r) {
		// a keep-alive sent before the revocation
	}
	assert.Equal(t, "end", name, "the revoked token's still stream ends: %s", data)
	assert.Contains(t, data, `"code":"unauthorized"`)
	assert.Contains(t, data, "revoked")
}

// monitorWatchedAt is a stand-in (standIn) served over HTTP at url, whose computer sends the
// monitor each screen.watch names on asked (as the gateway asked for it, the stream's query
// naming it as the caller typed it) and answers it with watched(that monitor).
func monitorWatchedAt(t *testing.T, watched func(monitor any) (any, *daemonfake.Error)) (m *Module, asked <-chan any, url string) {
	t.Helper()
	m, d := standIn(t)
	monitors := make(chan any, 1)
	d.Exec = func(typ string, p map[string]any) (any, *daemonfake.Error) {
		if typ == protocol.TypeScreenWatch {
			monitors <- p["monitor"]
			return watched(p["monitor"])
		}
		return map[string]any{}, nil
	}
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, m).Handler())
	t.Cleanup(srv.Close)
	return m, monitors, srv.URL
}

// TestTheStreamOfAMonitor: the stream's monitor parameter streams that monitor's screen (the
// computer asked screen.watch {monitor}), each frame naming it with its text scale, and ends
// with the computer's not_found when the monitor is taken off, said to be the computer's own
// end (refused), as the gateway's ends (the computer gone, the gateway stopping) are not.
func TestTheStreamOfAMonitor(t *testing.T) {
	m, asked, url := monitorWatchedAt(t, func(any) (any, *daemonfake.Error) {
		return map[string]any{"watchId": 1}, nil
	})
	resp := stream(t, t.Context(), url+"/trapos/computers/7:/screen?"+MonitorParam+"=monitor_0")
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "monitor_0", <-asked)
	_, err := m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":1,"seq":1,"monitor":"monitor_0","textScale":2,"width":3,"height":1,"colour":false,"cursor":{"x":1,"y":1},"rows":{"1":{"text":"mon","fg":"000","bg":"fff"}}}`))
	require.NoError(t, err)
	body := bufio.NewReader(resp.Body)
	name, data := event(t, body)
	require.Equal(t, "frame", name)
	var f FrameJSON
	require.NoError(t, json.Unmarshal([]byte(data), &f))
	assert.Equal(t, "mon", f.Rows[0].Text)
	assert.Equal(t, "monitor_0", f.Monitor)
	assert.Equal(t, 2.0, f.TextScale)
	_, err = m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":1,"seq":2,"monitor":"monitor_0","ended":{"code":"not_found","message":"the screen watch ended: monitor monitor_0 was taken off the computer"}}`))
	require.NoError(t, err)
	name, data = event(t, body)
	assert.Equal(t, "end", name)
	assert.JSONEq(t, `{"ok":false,"error":{"code":"not_found","message":"computer 7: says the screen watch ended: monitor monitor_0 was taken off the computer","monitor":"monitor_0",`+
		`"refused":true}}`, data, "the computer's own end, said to be")
}

// TestAQueryTheStreamCannotTakeIsRefused: a query parameter other than monitor (a typo,
// another case) and monitor given twice are refused, 400 bad_payload naming what the stream
// takes, the computer not asked: each was ignored, and the viewer that had asked for a monitor
// was shown the computer's own screen, or the first of two monitors, without a word.
func TestAQueryTheStreamCannotTakeIsRefused(t *testing.T) {
	_, asked, url := monitorWatchedAt(t, func(any) (any, *daemonfake.Error) {
		return map[string]any{"watchId": 1}, nil
	})
	for query, want := range map[string]string{
		"montior=top":                     `GET /trapos/computers/7:/screen takes one query parameter, monitor (a monitor attached to the computer: ?monitor=top), not "montior": without it the stream is the computer's own screen`,
		"Monitor=top":                     `GET /trapos/computers/7:/screen takes one query parameter, monitor (a monitor attached to the computer: ?monitor=top), not "Monitor": without it the stream is the computer's own screen`,
		strings.Repeat("m", 600) + "=top": `GET /trapos/computers/7:/screen takes one query parameter, monitor (a monitor attached to the computer: ?monitor=top), not one of 600 bytes: without it the stream is the computer's own screen`,
		"monitor=top&monitor=left":        `the query names monitor 2 times: GET /trapos/computers/7:/screen takes it once (?monitor=top)`,
	} {
		resp := stream(t, t.Context(), url+"/trapos/computers/7:/screen?"+query)
		var a struct{ Error map[string]any }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, query)
		assert.Equal(t, map[string]any{"code": "bad_payload", "message": want}, a.Error, query)
	}
	select {
	case monitor := <-asked:
		t.Fatalf("the computer was asked for %v", monitor)
	default:
	}
}

// TestTheStreamsRefusalNamesItsMonitorAsTheComputerWasAskedForIt: a monitor's stream refused
// names the monitor in the field monitor as the gateway asked the computer for it: ?monitor=Left
// (CC reads a side in any case) is left, on the computer's refusal of one not attached and on
// the gateway's own (not connected), so that a viewer that named it Left names it as the
// computer does; a wired modem's name is as it was typed. A name no monitor can have (longer than
// 64 of CC's bytes) is not echoed, nor is a field set for the computer's own screen; one holding
// a character CC cannot hold is refused by the gateway, the computer not asked. Before,
// the refusal of Left said "left" only in the computer's words, and a not_connected not at all.
// The computer's own refusal says so (refused), the gateway's do not: a viewer backs off from
// the computer's, which it gives again when asked again.
func TestTheStreamsRefusalNamesItsMonitorAsTheComputerWasAskedForIt(t *testing.T) {
	_, asked, url := monitorWatchedAt(t, func(monitor any) (any, *daemonfake.Error) {
		return nil, &daemonfake.Error{Code: "bad_payload", Message: fmt.Sprintf("no monitor named %q: this computer's monitors are top", monitor)}
	})
	refusal := func(path string) (int, map[string]any) {
		t.Helper()
		resp := stream(t, t.Context(), url+path)
		defer resp.Body.Close()
		var a struct{ Error map[string]any }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
		return resp.StatusCode, a.Error
	}

	status, e := refusal("/trapos/computers/7:/screen?" + MonitorParam + "=Left")
	assert.Equal(t, "left", <-asked)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, map[string]any{"code": "bad_payload", "message": `no monitor named "left": this computer's monitors are top`, "monitor": "left",
		"refused": true}, e, "the computer's own refusal, said to be")

	_, e = refusal("/trapos/computers/7:/screen?" + MonitorParam + "=Monitor_0")
	assert.Equal(t, "Monitor_0", <-asked)
	assert.Equal(t, "Monitor_0", e["monitor"], "a wired modem's name, as typed")

	long := strings.Repeat("m", 65)
	_, e = refusal("/trapos/computers/7:/screen?" + MonitorParam + "=" + long)
	assert.Equal(t, long, <-asked)
	assert.Equal(t, "bad_payload", e["code"])
	assert.NotContains(t, e, "monitor", "a name no monitor can have")

	// A character CC cannot hold is refused unsent, named: sent as '?', the computer said
	// 'no monitor named "?"'.
	status, e = refusal("/trapos/computers/7:/screen?" + MonitorParam + "=%E2%82%AC")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, map[string]any{"code": "bad_payload", "message": `"€" (U+20AC) at character 1 of the monitor name is outside CC's character set, so no monitor is named so: ` +
		"name one of the computer's (a side such as top, or a wired modem's monitor_0)"}, e, "the gateway's refusal: not the computer's")
	select {
	case monitor := <-asked:
		t.Fatalf("the computer was asked for %q", monitor)
	default:
	}

	status, e = refusal("/trapos/computers/9:/screen?" + MonitorParam + "=TOP")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "not_connected", e["code"])
	assert.Equal(t, "top", e["monitor"])
	assert.NotContains(t, e, "refused", "the gateway's answer for a computer away")

	_, e = refusal("/trapos/computers/9:/screen")
	assert.Equal(t, "not_connected", e["code"])
	assert.NotContains(t, e, "monitor", "the computer's own screen")
}
