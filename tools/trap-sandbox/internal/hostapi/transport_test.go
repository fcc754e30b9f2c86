package hostapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit"
	"trap-sandbox/testkit/daemonfake"
)

// testTimeout bounds every wait of these tests; only a broken test reaches it.
const testTimeout = 10 * time.Second

// gatewayWithAPI serves a real gateway and the host API on it, as the binary does.
func gatewayWithAPI(t *testing.T, token string) (*gateway.Gateway, *httptest.Server) {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	gw := gateway.New(gateway.Config{}, logger, nil)
	srv := httptest.NewServer(server.New(logger, server.Config{APIToken: token},
		gw, hostapi.New(computer.New(hostapi.NewGateway(gw)))).Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		assert.NoError(t, gw.Shutdown(ctx))
		srv.Close()
	})
	return gw, srv
}

// connectComputer connects the stand-in daemon d to the gateway until the test ends.
func connectComputer(t *testing.T, srv *httptest.Server, d *daemonfake.Daemon) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	stop, err := d.Connect(ctx, srv.URL+gateway.WebSocketPath, "")
	require.NoError(t, err)
	t.Cleanup(stop)
}

// TestALatin1BodyTooLargeForAFrameIsTooLarge: 70 000 bytes of Latin-1 ü pass the route's own
// check of the frame's size, but each is two bytes of UTF-8 once it is the computer's byte on
// the wire; the frame is refused as the route refuses one, 413, and nothing reaches the
// computer (sent, the bytes as they came closed its socket: 1007).
func TestALatin1BodyTooLargeForAFrameIsTooLarge(t *testing.T) {
	_, srv := gatewayWithAPI(t, "")
	d := &daemonfake.Daemon{ID: 7}
	connectComputer(t, srv, d)
	body := `{"type":"fs.write","payload":{"path":"/x","data":"` + strings.Repeat("\xfc", 70000) + `"}}`
	resp, err := http.Post(srv.URL+"/trapos/computers/7:/requests", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "%s", answer)
	assert.Contains(t, string(answer), protocol.FrameTooLargeMessage)
	_, written := d.File("/x")
	assert.False(t, written, "nothing reached the computer")
	assert.Zero(t, d.Writes())
}

// TestBothTransportsReachARealGateway: the in-process Transport and the HTTP one give the
// same answers, errors and computer records through the real gateway.
func TestBothTransportsReachARealGateway(t *testing.T) {
	gw, srv := gatewayWithAPI(t, "tok")
	connectComputer(t, srv, &daemonfake.Daemon{ID: 7, Label: "a/b c"})
	for name, tr := range map[string]computer.Transport{
		"in-process": hostapi.NewGateway(gw),
		"http":       hostapi.HTTP{URL: srv.URL, Token: "tok"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := account.WithCaller(t.Context(), account.LocalAdmin) // the in-process Transport serves the caller in ctx
			c := computer.New(tr)
			cs, err := c.Computers(ctx)
			require.NoError(t, err)
			require.Len(t, cs, 1)
			assert.Equal(t, "7:a/b c", cs[0].TraposID)
			assert.Equal(t, gateway.LocalAccount, cs[0].AccountID)
			assert.False(t, cs[0].ConnectedSince.IsZero())

			p, err := c.Ping(ctx, "7:a/b c", 0)
			require.NoError(t, err, "a traposId with a slash and a space is path-escaped")
			assert.Equal(t, "7:a/b c", p.TraposID)

			_, _, err = c.Request(ctx, "7:a/b c", "dance", nil, 0)
			var pe *protocol.Error
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, protocol.CodeUnknownType, pe.Code)
			assert.True(t, pe.ByComputer, "the computer's ok:false is marked as the computer's")

			_, err = c.Ping(ctx, "7", 0)
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, protocol.CodeNotConnected, pe.Code)
			assert.False(t, pe.ByComputer)
			assert.Equal(t, `computer 7 is not connected; did you mean "7:a/b c"?`, pe.Message, "one hint, not two")

			huge := json.RawMessage(`{"code":"` + strings.Repeat("x", protocol.MaxFrameBytes) + `"}`)
			_, _, err = c.Request(ctx, "7:a/b c", protocol.TypeLuaExec, huge, 0)
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, protocol.CodeBadPayload, pe.Code, "a payload too large for a frame is the caller's to fix, on both")
			assert.Equal(t, "the gateway_request frame would exceed 131072 bytes (128 KiB, CC: Tweaked's limit); send a smaller payload", pe.Message)
			_, err = c.Exec(ctx, "7:a/b c", "return #[["+strings.Repeat("x", protocol.MaxFrameBytes)+"]]", 0)
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, protocol.CodeBadPayload, pe.Code)
			assert.Equal(t, "the gateway_request frame would exceed 131072 bytes (128 KiB, CC: Tweaked's limit): code that long does not fit one request; "+
				"write it to a file on the computer and run that file instead", pe.Message,
				"run_lua, exec: the refusal names the way round it, on both, and no other fix (send a smaller payload: of the code?)")
		})
	}

	err := hostapi.HTTP{URL: srv.URL, Token: "wrong"}.Check(t.Context())
	assert.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(err))
	assert.ErrorContains(t, err, "missing or wrong API token")
	assert.NotContains(t, err.Error(), "(give the API token", "a token was given: the gateway's words say what is wrong with it")
	assert.ErrorContains(t, err, "(the token refused is the one given with --api-token or SANDBOX_API_TOKEN)")
	err = hostapi.HTTP{URL: srv.URL}.Check(t.Context())
	assert.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(err))
	assert.ErrorContains(t, err, "(give the API token with --api-token or SANDBOX_API_TOKEN)")
	err = hostapi.HTTP{URL: "http://127.0.0.1:1"}.Check(t.Context())
	assert.EqualError(t, err, "no gateway is listening at http://127.0.0.1:1 (connection refused): start it (trap-sandbox), or give its URL with --url or SANDBOX_URL")

	// A password written into --url (a proxy's Basic Auth) is never repeated in a message.
	err = hostapi.HTTP{URL: "http://u:hunter2@127.0.0.1:1"}.Check(t.Context())
	assert.EqualError(t, err, "no gateway is listening at http://u:xxxxx@127.0.0.1:1 (connection refused): start it (trap-sandbox), or give its URL with --url or SANDBOX_URL")
	for _, raw := range []string{"http://u:hunter2@127.0.0.1:abc", "ftp://u:hunter2@127.0.0.1:1", "u:hunter2@127.0.0.1:4444", "ws://u:hunter2@127.0.0.1:1"} {
		err = hostapi.HTTP{URL: raw}.Check(t.Context())
		require.Error(t, err, raw)
		assert.NotContains(t, err.Error(), "hunter2", raw)
	}
}

// TestAnOlderClientsFSErrorsReadAsCCWordsThem: on CC a client before 0.5.3 put its library's
// line in front of an fs_error ("...is/libsandboxfiles.lua:59: File exists"). Through the real
// gateway the host's checks of CC's words hold for it as for a current client: 0.4.0 (older than
// fs.move's overwrite) has its old file replaced by a write, and 0.5.2's fs.move refusals name
// their path, on both transports.
func TestAnOlderClientsFSErrorsReadAsCCWordsThem(t *testing.T) {
	gw, srv := gatewayWithAPI(t, "tok")
	beforeOverwrite := &daemonfake.Daemon{ID: 4, AllowFiles: daemonfake.AllowFilesWrite, OldClient: true,
		ClientVersion: "0.4.0", FSErrorPosition: "...is/libsandboxfiles.lua:55: "}
	beforeOverwrite.PutFile("/f.lua", []byte("old contents"))
	connectComputer(t, srv, beforeOverwrite)
	placing := &daemonfake.Daemon{ID: 5, AllowFiles: daemonfake.AllowFilesWrite,
		ClientVersion: "0.5.2", FSErrorPosition: "...is/libsandboxfiles.lua:59: "}
	placing.PutFile("/here.lua", []byte("x"))
	placing.PutFile("/taken.lua", []byte("y"))
	connectComputer(t, srv, placing)
	for name, tr := range map[string]computer.Transport{
		"in-process": hostapi.NewGateway(gw),
		"http":       hostapi.HTTP{URL: srv.URL, Token: "tok"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := account.WithCaller(t.Context(), account.LocalAdmin)
			c := computer.New(tr)
			contents := "new contents by " + name
			assert.NoError(t, c.Write(ctx, "4:", "/f.lua", []byte(contents), 0), "the old file is replaced in two steps")
			got, _ := beforeOverwrite.File("/f.lua")
			assert.Equal(t, contents, string(got))

			var pe *protocol.Error
			require.ErrorAs(t, c.Move(ctx, "5:", "/gone.lua", "/new.lua", 0), &pe)
			assert.Equal(t, protocol.CodeFSError, pe.Code)
			assert.Equal(t, "/gone.lua: No such file", pe.Message)
			require.ErrorAs(t, c.Move(ctx, "5:", "/here.lua", "/taken.lua", 0), &pe)
			assert.Equal(t, "/taken.lua: File exists", pe.Message)
		})
	}
}

// TestARefusalNamesTheTokenOnlyWhenItIsTheFix: the hint to give a token follows only the API
// auth's refusal of a call that sent none; a refusal of something else (forbidden), or of a
// token that was given, is the gateway's words alone.
// TestATokenWithAControlCharacterNamesTheFix: a token copied with its line break (or a CRLF
// environment file's carriage return) cannot go in a header; the call said only
// `net/http: invalid header field value for "Authorization"`. Spaces at its ends are sent:
// the gateway's own token has none, and HTTP drops them.
func TestATokenWithAControlCharacterNamesTheFix(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		assert.Equal(t, "Bearer tok3n-long-enough-0123", r.Header.Get("Authorization"))
		server.WriteError(w, http.StatusNotFound, protocol.CodeNotConnected, "none")
	}))
	defer srv.Close()
	for _, token := range []string{"tok3n-long-enough-0123\n", "tok3n-long-enough-0123\r", "tok3n\x00long"} {
		_, err := hostapi.HTTP{URL: srv.URL, Token: token}.RevokeComputer(t.Context(), "7:")
		require.EqualError(t, err, "the API token (--api-token or SANDBOX_API_TOKEN) holds a control character (a line break or carriage return copied with it?): give the token alone", "%q", token)
	}
	assert.Zero(t, calls, "nothing was sent")
	_, err := hostapi.HTTP{URL: srv.URL, Token: "tok3n-long-enough-0123 "}.RevokeComputer(t.Context(), "7:")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "none")
	assert.Equal(t, 1, calls, "a space at the end is sent")
}

func TestARefusalNamesTheTokenOnlyWhenItIsTheFix(t *testing.T) {
	const hint = "(give the API token with --api-token or SANDBOX_API_TOKEN)"
	for _, tc := range []struct {
		name   string
		token  string
		status int
		code   protocol.Code
		hint   bool
	}{
		{"no token, 401", "", http.StatusUnauthorized, protocol.CodeUnauthorized, true},
		{"no token, the loopback rule's 403", "", http.StatusForbidden, protocol.CodeUnauthorized, true},
		{"a wrong token, 401", "wrong", http.StatusUnauthorized, protocol.CodeUnauthorized, false},
		{"an admin token, 403 forbidden", "tsa_admin", http.StatusForbidden, protocol.CodeForbidden, false},
		{"no token, 403 forbidden", "", http.StatusForbidden, protocol.CodeForbidden, false},
		{"no token, 404", "", http.StatusNotFound, protocol.CodeNotConnected, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				server.WriteError(w, tc.status, tc.code, "the gateway's words")
			}))
			defer srv.Close()
			h := hostapi.HTTP{URL: srv.URL, Token: tc.token}
			_, err := h.RevokeComputer(t.Context(), "7:küche")
			require.Error(t, err)
			assert.Equal(t, tc.code, protocol.CodeOf(err))
			assert.Contains(t, err.Error(), "the gateway's words")
			if tc.hint {
				assert.True(t, strings.HasSuffix(err.Error(), hint), err.Error())
			} else {
				assert.NotContains(t, err.Error(), "(give the API token", "a token is not the fix")
			}
			var pe *protocol.Error
			require.ErrorAs(t, err, &pe)
			if tc.code == protocol.CodeUnauthorized {
				assert.True(t, pe.Attributed, "the API auth's refusal names the gateway that refused the call")
				assert.True(t, strings.HasPrefix(pe.Message, "the gateway at "+srv.URL+" answered "), pe.Message)
			} else {
				// The gateway's refusal of what was asked (forbidden) is its code and words, as
				// every other answer of it is ("the gateway answered forbidden: …"); "the
				// gateway at … answered 403" read as a token it refused.
				assert.False(t, pe.Attributed, pe.Message)
				assert.Equal(t, "the gateway's words", pe.Message)
			}
		})
	}
}

// remoteOnly is a gateway.Cluster whose computers are all on other replicas: it answers a
// routed ping with the account it was routed to, and counts the walks over every computer.
type remoteOnly struct {
	gateway.Cluster                     // the rest is not called here
	accounts        map[string][]string // traposId → the accounts holding it elsewhere
	walks           atomic.Int32        // calls of Remote
}

func (c *remoteOnly) Attach(gateway.Local) {}

func (c *remoteOnly) Remote() []gateway.Computer {
	c.walks.Add(1)
	var out []gateway.Computer
	for id, accounts := range c.accounts {
		for _, a := range accounts {
			out = append(out, gateway.Computer{AccountID: a, TraposID: id, Replica: "other"})
		}
	}
	return out
}

func (c *remoteOnly) RemoteAccounts(traposID string) []string { return c.accounts[traposID] }

func (c *remoteOnly) Route(_ context.Context, k gateway.Key, _ string, _ json.RawMessage) (gateway.Response, error) {
	if !slices.Contains(c.accounts[k.TraposID], k.AccountID) {
		return gateway.Response{}, computer.NotConnected(k.TraposID)
	}
	payload, _ := json.Marshal(map[string]string{"traposId": k.TraposID, "account": k.AccountID})
	return gateway.Response{OK: true, Type: gateway.TypePing, Payload: payload}, nil
}

// TestAnAdminsRequestFindsItsComputerWithoutWalkingEveryComputer: a host request names its
// computer by traposId; for an admin the account is found by lookups, never by listing every
// computer of every replica (0.4 s per request with 100 000 computers).
func TestAnAdminsRequestFindsItsComputerWithoutWalkingEveryComputer(t *testing.T) {
	cl := &remoteOnly{accounts: map[string][]string{"1:own": {"ops", "alice"}, "2:theirs": {"bob"}, "3:shared": {"bob", "carol"}}}
	gw := gateway.New(gateway.Config{}, slog.New(slog.DiscardHandler), cl)
	tr := hostapi.NewGateway(gw)
	ctx := account.WithCaller(t.Context(), account.Caller{Account: "ops", Admin: true})
	answered := func(traposID string) string {
		t.Helper()
		out, err := tr.Request(ctx, traposID, gateway.TypePing, nil, testTimeout)
		require.NoError(t, err, traposID)
		var p struct{ Account string }
		require.NoError(t, json.Unmarshal(out, &p))
		return p.Account
	}
	assert.Equal(t, "ops", answered("1:own"), "its own account's computer, though another account has one of that traposId")
	assert.Equal(t, "bob", answered("2:theirs"), "the one account that has it")
	_, err := tr.Request(ctx, "3:shared", gateway.TypePing, nil, testTimeout)
	assert.ErrorContains(t, err, "connected in several accounts (bob, carol)")
	_, err = tr.Request(ctx, "4:nowhere", gateway.TypePing, nil, testTimeout)
	assert.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(err))
	assert.Zero(t, cl.walks.Load(), "no request listed every computer")

	cs, err := computer.New(tr).Computers(ctx)
	require.NoError(t, err)
	assert.Len(t, cs, 5, "the listing still walks them")
}

// TestAHungGatewayIsNamedNotTheComputer: a gateway that takes a call and never answers (the
// soak: a SIGSTOPped gateway) was reported as `computer 15:pc15 did not answer ping in time`
// and, for the list, as Go's `Get "…": context deadline exceeded`. Both name the gateway now;
// the list's error is still a deadline for errors.Is.
func TestAHungGatewayIsNamedNotTheComputer(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select { // hung: no answer until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	h := hostapi.HTTP{URL: srv.URL, Clock: clock.NewFake(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))}

	// The request's own bound (timeout plus computer.RunSlack) passes while the caller waits on.
	err := pingPastItsWait(t, h, arrived)
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, protocol.CodeTimeout, pe.Code)
	assert.False(t, pe.ByComputer)
	assert.Equal(t, "the gateway at "+srv.URL+" did not answer in time: it may be hung or overloaded (see its log and GET /healthz); its own timeout answer was due after 1ms", pe.Message)

	// The caller's deadline, passing once the gateway has the request: a deadline of a time
	// instead (1 ms) passed now and then on a loaded machine before the connection was made,
	// which is the unreachable gateway's case (TestAnAddressNothingAnswersIsNotCalledAHungGateway).
	ctx := deadlineAt{Context: t.Context(), passed: make(chan struct{})}
	go func() {
		<-arrived
		close(ctx.passed)
	}()
	_, err = h.Computers(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualError(t, err, "the gateway at "+srv.URL+" did not answer in time: it may be hung or overloaded (see its log and GET /healthz)")
}

// pingPastItsWait pings 15:pc15 through h, whose Clock is a fake, with a timeout of 1 ms and
// returns the ping's error. Once the ping waits for the gateway's answer (its timer armed)
// and reached is closed or has a value (the call reached the gateway: a hung gateway is one
// that took it), the fake is moved past that wait (the timeout and computer.RunSlack), which
// the test would otherwise wait out.
func pingPastItsWait(t *testing.T, h hostapi.HTTP, reached <-chan struct{}) error {
	t.Helper()
	const timeout = time.Millisecond
	fc := h.Clock.(*clock.Fake)
	ended := make(chan struct{})
	var err error
	go func() {
		defer close(ended)
		_, err = computer.New(h).Ping(t.Context(), "15:pc15", timeout)
	}()
	if fc.WaitArmed(1, ended) {
		select {
		case <-reached:
			fc.Advance(timeout + computer.RunSlack)
		case <-ended:
		}
	}
	select {
	case <-ended:
	case <-time.After(testTimeout): // a hang guard only
		require.FailNow(t, "the ping did not end once its wait had passed")
	}
	return err
}

// deadlineAt is a context whose deadline passes when passed is closed: at a moment of the
// test's choosing, where a deadline of a time passes at whatever point a loaded machine has
// reached by then.
type deadlineAt struct {
	context.Context
	passed chan struct{}
}

func (c deadlineAt) Done() <-chan struct{} { return c.passed }

func (c deadlineAt) Err() error {
	select {
	case <-c.passed:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// TestAnAddressNothingAnswersIsNotCalledAHungGateway: a connection nothing takes (a wrong
// host, a firewall that drops it) was reported as a gateway that is hung or overloaded, to be
// looked for in its log; it names the address now, for the CLI's list and ping alike.
func TestAnAddressNothingAnswersIsNotCalledAHungGateway(t *testing.T) {
	// A connect that never completes, as a dropped SYN's (net/http lets a dial outlive the
	// request that started it: the test's end ends it).
	release := make(chan struct{})
	defer close(release)
	blackhole := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return nil, net.ErrClosed
		}
	}}}
	h := hostapi.HTTP{URL: "http://10.0.0.9:4444", Client: blackhole, Clock: clock.NewFake(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))}
	const want = "the gateway at http://10.0.0.9:4444 could not be reached in time (nothing took the connection): is the address right (--url or SANDBOX_URL), or does a firewall drop it?"

	ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	_, err := h.Computers(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualError(t, err, want)

	nothingToReach := make(chan struct{})
	close(nothingToReach)
	err = pingPastItsWait(t, h, nothingToReach)
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, protocol.CodeTimeout, pe.Code)
	assert.False(t, pe.ByComputer)
	assert.Equal(t, want, pe.Message, "neither the computer's fault nor a gateway's own timeout answer")
}

// TestADebugLogNamesEachHostRequest: at --log-level debug each request of the host's tools,
// the web console and the agent is a line naming who asked which computer for what and how it
// ended (nothing logged a request: a failing tool left the operator nothing to read). At info,
// nothing.
func TestADebugLogNamesEachHostRequest(t *testing.T) {
	gw, srv := gatewayWithAPI(t, "")
	connectComputer(t, srv, &daemonfake.Daemon{ID: 7, Label: "kitchen"})
	var debug, info testkit.SyncBuffer
	ctx := account.WithCaller(t.Context(), account.Caller{Account: "alice", Admin: true})
	for _, tc := range []struct {
		logs  *testkit.SyncBuffer
		level slog.Level
	}{{&debug, slog.LevelDebug}, {&info, slog.LevelInfo}} {
		c := computer.New(hostapi.NewGateway(gw).Logging(slog.New(slog.NewTextHandler(tc.logs, &slog.HandlerOptions{Level: tc.level}))))
		_, err := c.Ping(ctx, "7:kitchen", 0)
		require.NoError(t, err)
		_, _, err = c.Request(ctx, "7:kitchen", "dance", nil, 0)
		require.Error(t, err)
		_, err = c.Ping(ctx, "9:gone", 0)
		require.Error(t, err)
	}
	assert.Empty(t, info.String())
	lines := strings.Split(strings.TrimSpace(debug.String()), "\n")
	require.Len(t, lines, 3, debug.String())
	assert.Regexp(t, `level=DEBUG msg="host request" module=trapos-host-api account=alice traposId=7:kitchen type=ping outcome=ok ms=\d+$`, lines[0])
	assert.Regexp(t, `msg="host request" module=trapos-host-api account=alice traposId=7:kitchen type=dance outcome=unknown_type by=computer ms=\d+$`, lines[1])
	assert.Regexp(t, `msg="host request" module=trapos-host-api account=alice traposId=9:gone type=ping outcome=not_connected by=gateway ms=\d+$`, lines[2])
}

// TestAURLNamingAGatewayPageIsRefusedButAProxyBaseIsNot: the URLs the gateway logs and the
// docs show for a page (the computers' /trapos/ws, the install line's /trapos/install, the
// web console's /console/) are refused with the base to give; a reverse proxy's base, even one
// named trapos or with a name that only starts like a page, is the API's base as it is.
func TestAURLNamingAGatewayPageIsRefusedButAProxyBaseIsNot(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:4444", "http://127.0.0.1:4444/", "https://mc.example.org/sandbox",
		"https://mc.example.org/trapos", "https://mc.example.org/trapos/", "https://mc.example.org/consoles/x", "https://mc.example.org/mcp/sandbox"} {
		assert.NoError(t, hostapi.CheckURL(ok), ok)
	}
	for raw, want := range map[string]string{
		"http://192.168.1.20:4444/trapos/install":     "ends in /trapos/install, a page of the gateway, which the API's paths cannot follow: give the address before it, http://192.168.1.20:4444",
		"https://mc.example.org/sandbox/trapos/ws":    "ends in /trapos/ws, a page of the gateway, which the API's paths cannot follow: give the address before it, https://mc.example.org/sandbox",
		"http://127.0.0.1:4444/console/":              "ends in /console, a page of the gateway, which the API's paths cannot follow: give the address before it, http://127.0.0.1:4444",
		"http://127.0.0.1:4444/mcp":                   "ends in /mcp, a page of the gateway, which the API's paths cannot follow: give the address before it, http://127.0.0.1:4444",
		"http://127.0.0.1:4444/trapos/files/apis/x":   "ends in /trapos/files, a page of the gateway",
		"http://user:secret@127.0.0.1:4444/trapos/ws": `the gateway URL "http://user:xxxxx@127.0.0.1:4444/trapos/ws" ends in /trapos/ws, a page of the gateway, which the API's paths cannot follow: give the address before it, http://user:xxxxx@127.0.0.1:4444`,
	} {
		err := hostapi.CheckURL(raw)
		require.Error(t, err, raw)
		assert.Contains(t, err.Error(), want, raw)
	}
}

// TestARequestAwaitsTheGatewaysAnswerPastItsCallersDeadline: a transfer gives each request the
// time it has left, so the gateway's own timeout answer comes just after the caller's deadline.
// The request was abandoned at that deadline while still on its way: the put's next request,
// the removal of its temporary file, reached the computer first, and the abandoned chunk then
// made a temporary file nobody named. It is now awaited (answerGrace) and answered; a caller
// that leaves (cancelled) still takes its request with it.
func TestARequestAwaitsTheGatewaysAnswerPastItsCallersDeadline(t *testing.T) {
	arrived := make(chan struct{})
	ctx := deadlineAt{Context: t.Context(), passed: make(chan struct{})}
	abandoned := make(chan bool, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // read whole: the server then sees a client that leaves
		close(arrived)
		<-ctx.passed // the caller's deadline has passed; the gateway's timeout answer follows
		abandoned <- r.Context().Err() != nil
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusGatewayTimeout)
		_, _ = io.WriteString(w, `{"ok":false,"error":{"code":"timeout","message":"computer 7: did not answer fs.write in time"}}`)
	}))
	defer srv.Close()
	go func() {
		<-arrived
		close(ctx.passed)
	}()
	_, err := hostapi.HTTP{URL: srv.URL}.Request(ctx, "7:", "fs.write", json.RawMessage(`{}`), time.Second)
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, protocol.CodeTimeout, pe.Code)
	assert.Equal(t, "computer 7: did not answer fs.write in time", pe.Message, "the gateway's answer, not the caller's deadline")
	assert.False(t, <-abandoned, "the request was not abandoned at the caller's deadline")

	left, leave := context.WithCancel(t.Context())
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		leave()
		<-r.Context().Done() // abandoned with its caller
	}))
	defer srv2.Close()
	_, err = hostapi.HTTP{URL: srv2.URL}.Request(left, "7:", "fs.write", json.RawMessage(`{}`), time.Minute)
	require.ErrorIs(t, err, context.Canceled)
}

// TestAGatewayThatDropsTheCallIsNamedSo: a gateway that closes the connection before it
// answers (killed, crashed mid-request) is said to have done so, with what that means for
// what was asked; it was Go's `Post "http://…/requests": EOF`.
func TestAGatewayThatDropsTheCallIsNamedSo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, _, err := http.NewResponseController(w).Hijack()
		if assert.NoError(t, err) {
			_ = conn.Close() // no answer at all, as a gateway killed mid-request
		}
	}))
	defer srv.Close()
	const want = "the gateway at %s closed the connection before it answered (it stopped or crashed: see its log); " +
		"what was asked may have been done all the same: check before you ask again"
	h := hostapi.HTTP{URL: srv.URL}
	_, err := h.Request(t.Context(), "5:küche", "shell.run", json.RawMessage(`{"command":"slow"}`), time.Second)
	assert.EqualError(t, err, fmt.Sprintf(want, srv.URL))
	var dropped hostapi.DroppedGatewayError
	assert.ErrorAs(t, err, &dropped)
	_, err = h.Computers(t.Context())
	assert.EqualError(t, err, fmt.Sprintf(want, srv.URL))
}

// TestAMistypedGatewayURLNamesItsFix: the mistakes an operator makes in --url that reach no
// gateway's API each say what to give instead, for the list and a computer's request alike,
// where they were Go's words ("http: server gave HTTP response to HTTPS client", "dial tcp:
// lookup gw.lan on 10.0.0.53:53: no such host") or a message that ended in ": " for a server
// that answered with no body.
func TestAMistypedGatewayURLNamesItsFix(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound) // another server's 404, no body (seen: a proxy's)
	}))
	defer plain.Close()
	host := strings.TrimPrefix(plain.URL, "http://")
	unknownHost := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "gw.lan", Server: "10.0.0.53:53", IsNotFound: true}}
	}}}
	for _, tc := range []struct {
		name string
		h    hostapi.HTTP
		want string
	}{
		{"https for a plain HTTP gateway", hostapi.HTTP{URL: "https://" + host},
			"the gateway at https://" + host + " answers plain HTTP, not HTTPS (--listen serves no TLS; a reverse proxy in front of it does): " +
				"give http://" + host + ", or the proxy's https:// URL (--url or SANDBOX_URL)"},
		{"a host the resolver does not know", hostapi.HTTP{URL: "http://gw.lan:4444", Client: unknownHost},
			`the gateway at http://gw.lan:4444 cannot be reached: this host's resolver does not know the host "gw.lan": check the host name in --url or SANDBOX_URL`},
		{"another server that answers no body", hostapi.HTTP{URL: plain.URL},
			"the gateway at " + plain.URL + " answered HTTP 404 with an empty body, where the API answers JSON: another server listens there " +
				"(is that the gateway's URL? --url or SANDBOX_URL)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.h.Computers(t.Context())
			require.Error(t, err)
			assert.Equal(t, tc.want, errorMessage(err))
			_, err = tc.h.Request(t.Context(), "5:küche", "ping", nil, time.Second)
			require.Error(t, err)
			assert.Equal(t, tc.want, errorMessage(err))
		})
	}
}

// errorMessage is err's words: a *protocol.Error's message without its code, else the text.
func errorMessage(err error) string {
	if pe, ok := errors.AsType[*protocol.Error](err); ok {
		return pe.Message
	}
	return err.Error()
}

// TestNoGatewayBehindIsABalancersAnswer: a 502, 503 or 504 whose body is no API answer (a
// balancer's page, its plain words, none) is a proxy that reached no gateway; the gateway's
// own 503 (busy, JSON) and any other status are not.
func TestNoGatewayBehindIsABalancersAnswer(t *testing.T) {
	busy := `{"ok":false,"error":{"code":"busy","message":"the gateway is busy"}}`
	for _, c := range []struct {
		status int
		body   string
		want   bool
	}{
		{http.StatusBadGateway, "<html><head><title>502 Bad Gateway</title></head></html>", true},
		{http.StatusServiceUnavailable, "no healthy upstream", true},
		{http.StatusGatewayTimeout, "", true},
		{http.StatusServiceUnavailable, busy, false},
		{http.StatusNotFound, "<html><head><title>404 Not Found</title></head></html>", false},
		{http.StatusInternalServerError, "oops", false},
	} {
		assert.Equal(t, c.want, hostapi.NoGatewayBehind(c.status, []byte(c.body)), "%d %q", c.status, c.body)
	}
}
