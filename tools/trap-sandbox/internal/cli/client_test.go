package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/agent"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/opencode"
	"trap-sandbox/internal/opencodehealth"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit/daemonfake"
	"trap-sandbox/testkit/opencodefake"
)

// clientWait bounds every wait of the client tests.
const clientWait = 5 * time.Second

type healthyProber struct{}

func (healthyProber) Probe(context.Context) opencode.Health { return opencode.Health{OK: true} }

// startGatewayHTTP serves the real gateway handler and returns its URL.
func startGatewayHTTP(t *testing.T, token string) string {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	gw := gateway.New(gateway.Config{}, logger, nil)
	opencodehealth.New(healthyProber{}, nil).Register(gw)
	srv := httptest.NewServer(server.New(logger, server.Config{APIToken: token}, gw, hostapi.New(computer.New(hostapi.NewGateway(gw)))).Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), clientWait)
		defer cancel()
		assert.NoError(t, gw.Shutdown(ctx))
		srv.Close()
	})
	return srv.URL
}

// connectComputer connects the stand-in daemon d to the gateway at base until the test ends.
func connectComputer(t *testing.T, base string, d *daemonfake.Daemon) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clientWait)
	defer cancel()
	stop, err := d.Connect(ctx, base+gateway.WebSocketPath, "")
	require.NoError(t, err)
	t.Cleanup(stop)
}

// TestAReadOfAComputerThatWentThroughTheGatewaySaysToAskAgain: through a real gateway,
// `screen --once` of a computer whose socket closed while the gateway waited for its screen,
// and `request … screen.watch` so cut, say that a read changes nothing and to ask again once
// it is back, with the CLI's way to see it back, where they said the gateway's "it may have
// done what it was asked all the same: check before you ask again"; a run cut so keeps those
// words: it may have run.
func TestAReadOfAComputerThatWentThroughTheGatewaySaysToAskAgain(t *testing.T) {
	clearEnv(t)
	base := startGatewayHTTP(t, "")
	for _, c := range []struct {
		typ  string
		args []string
		said string
	}{
		{protocol.TypeScreenRead, []string{"screen", "--url", base, "7:küche", "--once"}, "computer 7:küche screen: the gateway answered not_connected: " +
			"the computer disconnected before it answered; a read changes nothing: ask again once it is back (trap-sandbox computers lists it then)"},
		// A watch changes nothing either: the stream it starts ends with the socket.
		{protocol.TypeScreenWatch, []string{"request", "--url", base, "7:küche", "screen.watch"}, "computer 7:küche request screen.watch: the gateway answered not_connected: " +
			"the computer disconnected before it answered; a read changes nothing: ask again once it is back (trap-sandbox computers lists it then)"},
		{protocol.TypeLuaExec, []string{"exec", "--url", base, "7:küche", "return 1"}, "computer 7:küche exec: the gateway answered not_connected: " +
			"the computer disconnected before it answered; it may have done what it was asked all the same: check before you ask again"},
	} {
		t.Run(c.args[0], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), clientWait)
			defer cancel()
			// The computer takes the request and answers only once its socket is gone.
			arrived, release := make(chan struct{}, 1), make(chan struct{})
			d := &daemonfake.Daemon{ID: 7, Label: "küche", AllowExec: true, AllowScreen: "view",
				Exec: func(typ string, _ map[string]any) (any, *daemonfake.Error) {
					if typ == c.typ {
						arrived <- struct{}{}
						<-release
					}
					return nil, &daemonfake.Error{Code: string(protocol.CodeInternal), Message: "not sent: the socket is closed"}
				}}
			stop, err := d.Connect(ctx, base+gateway.WebSocketPath, "")
			require.NoError(t, err)
			stopped := make(chan struct{})
			t.Cleanup(func() {
				close(release)
				<-stopped
			})
			p := takeParser(t, kong.Exit(func(int) { t.Error("kong tried to exit") }))
			defer p.giveBack()
			kctx, err := p.parser.Parse(c.args)
			require.NoError(t, err)
			done := make(chan error, 1)
			go func() {
				_, _, err := runParsed(kctx, "")
				done <- err
			}()
			select {
			case <-arrived:
				go func() {
					defer close(stopped)
					stop() // closes the socket at once; returns once the hook is released
				}()
			case <-ctx.Done():
				close(stopped)
				require.FailNow(t, "the request never reached the computer")
			}
			err = <-done // the command's own context ends within clientWait
			require.Error(t, err)
			assert.Equal(t, c.said, err.Error())
		})
	}
}

func runClient(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := runWith(t, "", args...)
	return out, err
}

// runWith runs a client command as main does, with stdin, and returns stdout and stderr.
func runWith(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	p := takeParser(t, kong.Exit(func(int) { t.Fatal("kong tried to exit") }))
	defer p.giveBack() // the command has ended: nothing reads its flags any more
	kctx, err := p.parser.Parse(args)
	require.NoError(t, err)
	return runParsed(kctx, stdin)
}

// runParsed runs a parsed command as runWith does: for a test that sets something on the
// command (a fake clock) between parse and run.
func runParsed(kctx *kong.Context, stdin string) (string, string, error) {
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), clientWait)
	defer cancel()
	kctx.BindTo(ctx, (*context.Context)(nil))
	kctx.BindTo(&errOut, (*io.Writer)(nil))
	kctx.Bind(Stdout{Writer: &out})
	kctx.Bind(Stdin{Reader: strings.NewReader(stdin)})
	err := RunCommand(kctx) // as main runs it: its error names the command
	return out.String(), errOut.String(), err
}

func TestClientCommands(t *testing.T) {
	clearEnv(t)
	base := startGatewayHTTP(t, "")
	// No table of nothing: a line on stderr says there is none (the NATS test shows it is the
	// same with replicas).
	out, errOut, err := runWith(t, "", "computers", "--url", base)
	require.NoError(t, err)
	assert.Empty(t, out)
	assert.Equal(t, "no computers connected\n", errOut)
	connectComputer(t, base, &daemonfake.Daemon{ID: 7, Label: "a/b"})

	out, err = runClient(t, "computers", "--url", base)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, out)
	assert.Regexp(t, `^TRAPOS ID\s+ACCOUNT\s+CLIENT\s+CONNECTED SINCE\s+REMOTE\s+LAST FRAME$`, lines[0])
	assert.Regexp(t, `^7:a/b\s+local\s+-\s+\S+\s+127\.0\.0\.1:\d+\s+\S+$`, lines[1])

	out, err = runClient(t, "ping", "--url", base, "7:a/b")
	require.NoError(t, err)
	assert.Regexp(t, `^pong from 7:a/b in \S+: \{"traposId":"7:a/b"\}\n$`, out)

	out, err = runClient(t, "request", "--url", base, "7:a/b", "ping", `{"x":1}`)
	require.NoError(t, err)
	var payload map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &payload))
	assert.Equal(t, "7:a/b", payload["traposId"])

	_, err = runClient(t, "request", "--url", base, "7:a/b", "dance")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the computer answered unknown_type")

	_, err = runClient(t, "ping", "--url", base, "9:gone")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not_connected")
	_, err = runClient(t, "ping", "--url", base, "7")
	assert.EqualError(t, err, `computer 7 ping: the gateway answered not_connected: the computer is not connected; did you mean "7:a/b"?`)

	// A check made before sending names no answerer, and a long type is cut in the message.
	_, err = runClient(t, "request", "--url", base, "7:a/b", strings.Repeat("t", 1000))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "…(cut, 1008 bytes): refused bad_payload: the type is 1000 bytes long on the computer")
	assert.Less(t, len(err.Error()), 500)

}

// TestAPayloadThatIsNoJSONIsAUsageError: request's <json> that does not parse is refused as
// the command line is read, as a --timeout out of range is (exit status 2, with the usage),
// before anything is sent; it was a failure of the call (exit status 1), which a script reads
// as the computer's or the gateway's.
func TestAPayloadThatIsNoJSONIsAUsageError(t *testing.T) {
	clearEnv(t)
	for _, payload := range []string{`{bad`, `notjson`, `{"door":"north"} {}`} {
		err := parseError(t, "request", "7:", "door.open", payload)
		assert.EqualError(t, err, fmt.Sprintf(`request: <json>: %q is not JSON: give an object, e.g. '{"door":"north"}', or leave it out for {}`, payload))
		var usage *kong.ParseError
		assert.ErrorAs(t, err, &usage, "a usage error: exit status 2")
	}
	root, _ := parse(t, "request", "7:", "door.open", ` {"door":"north"} `)
	assert.JSONEq(t, `{"door":"north"}`, root.Request.Payload)
}

// TestAnEmptyCommandLineIsAUsageError: run's <command> that is empty or only spaces is refused
// as the command line is read (exit status 2, with the usage), before anything is sent; it went
// to the computer, whose "payload.command must be a non-empty string" exited 1 in the wire's
// words.
func TestAnEmptyCommandLineIsAUsageError(t *testing.T) {
	clearEnv(t)
	for _, command := range []string{"", "  ", "\t"} {
		err := parseError(t, "run", "5:küche", command)
		assert.EqualError(t, err, "run: <command>: give the command line to run, e.g. 'ls /rom'")
		var usage *kong.ParseError
		assert.ErrorAs(t, err, &usage, "a usage error: exit status 2")
	}
	root, _ := parse(t, "run", "5:küche", "ls /rom")
	assert.Equal(t, "ls /rom", root.Run.Command)
}

// TestTextNeverSentIsNotSaidToBeSentOnStderr: exec, run and request to a computer that is not
// connected sent nothing, so their warnings say what a character would have been sent as:
// they said "was sent as ?" beside the not_connected.
func TestTextNeverSentIsNotSaidToBeSentOnStderr(t *testing.T) {
	clearEnv(t)
	base := startGatewayHTTP(t, "")
	for _, args := range [][]string{
		{"run", "--url", base, "5:gone", "echo —"},
		{"exec", "--url", base, "5:gone", "print('—')"},
		{"request", "--url", base, "5:gone", "lua.exec", `{"code":"print('—')"}`},
	} {
		_, stderr, err := runWith(t, "", args...)
		require.Error(t, err, "%v", args)
		assert.Contains(t, err.Error(), "is not connected", "%v", args)
		assert.Contains(t, stderr, `would have been sent as "?"`, "%v", args)
		assert.NotContains(t, stderr, "was sent", "%v", args)
	}
}

func TestClientToken(t *testing.T) {
	clearEnv(t)
	base := startGatewayHTTP(t, "s3cret")
	connectComputer(t, base, &daemonfake.Daemon{ID: 1})

	_, err := runClient(t, "computers", "--url", base)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "401")
	assert.Contains(t, err.Error(), "--api-token", "the CLI's own flag is named")
	_, err = runClient(t, "request", "1:", "ping", "--url", base)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--api-token", "a request's 401 names it too")
	assert.Equal(t, 1, strings.Count(err.Error(), "the gateway"), "one speaker, said once: %s", err)
	assert.True(t, strings.HasPrefix(err.Error(), "computer 1: request ping: the gateway at "+base+" answered 401: "), err.Error())

	t.Setenv("SANDBOX_API_TOKEN", "s3cret")
	t.Setenv("SANDBOX_URL", base)
	out, err := runClient(t, "ping", "1:")
	require.NoError(t, err)
	assert.Regexp(t, `^pong from 1: in \S+: \{"traposId":"1:"\}\n$`, out, "an unlabelled computer's traposId, with no doubled colon")
}

// TestPingShowsTheTraposIdAsTyped: a label's & < > come back as the player typed them, as
// `request` shows them, not as JSON's HTML escapes ("12:Bäume \u0026 Co").
func TestPingShowsTheTraposIdAsTyped(t *testing.T) {
	clearEnv(t)
	base := startGatewayHTTP(t, "")
	connectComputer(t, base, &daemonfake.Daemon{ID: 12, Label: "Bäume & <Co>"})
	out, err := runClient(t, "ping", "--url", base, "12:Bäume & <Co>")
	require.NoError(t, err)
	assert.Regexp(t, `^pong from 12:Bäume & <Co> in \S+: \{"traposId":"12:Bäume & <Co>"\}\n$`, out)
}

// TestAWrongURLIsNamedWithItsFix: a --url that is not a gateway's API is named with what to
// give instead, for every client command (ai-turns included): no scheme, the computers'
// ws:// URL, one that does not parse, one with a query or a fragment (the API's paths would
// follow it: it read as an older gateway), nothing listening, another web server. A URL that
// cannot be the API's by its shape is a usage error as the command line is read (exit status
// 2, with the usage), as any other bad flag value is, and names no computer: it was a failed
// call (exit status 1) of "computer 7: ping: …", as if the computer were at fault.
func TestAWrongURLIsNamedWithItsFix(t *testing.T) {
	clearEnv(t)
	closed := opencodefake.ClosedPortURL(t) // held: the page below (or anyone) cannot take it
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "<html><h1>Not Found</h1></html>", http.StatusNotFound)
	}))
	defer page.Close()

	for _, args := range [][]string{{"computers"}, {"ping", "7:"}, {"ai-turns"}} {
		for url, want := range map[string]string{
			"127.0.0.1:4444":                                   `the gateway URL "127.0.0.1:4444" is not an http:// or https:// URL: give it as http://HOST:PORT, e.g. http://127.0.0.1:4444`,
			"ws://127.0.0.1:4444":                              `the gateway URL "ws://127.0.0.1:4444" is the computers' WebSocket URL: the API is at the same address with http:// (or https://)`,
			"http://my host:4444":                              `the gateway URL "http://my host:4444" cannot be read (invalid character " " in host name): give it as http://HOST:PORT`,
			"http://127.0.0.1:4444/?x=1":                       `the gateway URL "http://127.0.0.1:4444/?x=1" has a query or a fragment (after ? or #), which the API's paths cannot follow: give the address alone, e.g. http://127.0.0.1:4444`,
			"http://127.0.0.1:4444?":                           `the gateway URL "http://127.0.0.1:4444?" has a query or a fragment`,
			"http://127.0.0.1:4444/#top":                       `the gateway URL "http://127.0.0.1:4444/#top" has a query or a fragment`,
			"http://127.0.0.1:4444/trapos/ws":                  `the gateway URL "http://127.0.0.1:4444/trapos/ws" ends in /trapos/ws, a page of the gateway, which the API's paths cannot follow: give the address before it, http://127.0.0.1:4444`,
			"http://127.0.0.1:4444/trapos/install/":            `the gateway URL "http://127.0.0.1:4444/trapos/install/" ends in /trapos/install, a page of the gateway, which the API's paths cannot follow: give the address before it, http://127.0.0.1:4444`,
			"https://mc.example.org/sandbox/console/":          `the gateway URL "https://mc.example.org/sandbox/console/" ends in /console, a page of the gateway, which the API's paths cannot follow: give the address before it, https://mc.example.org/sandbox`,
			"http://127.0.0.1:4444/trapos/computers/7:kitchen": `ends in /trapos/computers, a page of the gateway, which the API's paths cannot follow: give the address before it, http://127.0.0.1:4444`,
		} {
			err := parseError(t, append(args, "--url", url)...)
			require.Error(t, err, "%v --url %s", args, url)
			assert.Contains(t, err.Error(), want, "%v --url %s", args, url)
			assert.NotContains(t, err.Error(), "computer 7:", "%v --url %s: not the computer's fault", args, url)
			var usage *kong.ParseError
			assert.ErrorAs(t, err, &usage, "%v --url %s: a usage error: exit status 2", args, url)
		}
		_, err := runClient(t, append(args, "--url", closed)...)
		require.Error(t, err, "%v --url %s", args, closed)
		assert.Contains(t, err.Error(), "no gateway is listening at "+closed+" (connection refused): start it (trap-sandbox), or give its URL with --url or SANDBOX_URL", args)
	}
	for _, args := range [][]string{{"computers"}, {"ping", "7:"}, {"ai-turns"}, {"accounts", "list"}, {"tokens", "revoke", "x"}} {
		_, err := runClient(t, append(args, "--url", page.URL)...)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "the gateway at "+page.URL+" answered HTTP 404 with a body that is not the API's (is that the gateway's URL?): <html><h1>Not Found</h1></html>", args)
	}
}

// TestAHungGatewayIsNamedWithoutTheTimeoutHint: a gateway that never answers is the one the
// CLI names, without "--timeout gives it longer" (more time is no fix for a hung gateway).
func TestAHungGatewayIsNamedWithoutTheTimeoutHint(t *testing.T) {
	clearEnv(t)
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hung.Close()
	defer close(release)
	root, kctx := parse(t, "ping", "15:pc15", "--timeout", "1ms", "--url", hung.URL)
	// The call's wait for the gateway's answer (the timeout and computer.RunSlack) runs on a
	// fake clock, moved past it once the gateway has the call, rather than waited out.
	fc := clock.NewFake(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))
	root.Ping.clock = fc
	ended := make(chan error, 1)
	go func() {
		_, _, err := runParsed(kctx, "")
		ended <- err
	}()
	var err error
	select {
	case <-arrived:
		fc.Advance(time.Millisecond + computer.RunSlack)
		err = <-ended
	case err = <-ended: // ended before the gateway had it: the assertion says how
	}
	require.EqualError(t, err, "computer 15:pc15 ping: the gateway at "+hung.URL+" did not answer in time: it may be hung or overloaded (see its log and GET /healthz); its own timeout answer was due after 1ms")
}

// TestAITurnsListsTheRunningTurns: ai-turns reads the agent's list through the API's client;
// with no turn running it says so on stderr, as the computers list does, not a header alone.
func TestAITurnsListsTheRunningTurns(t *testing.T) {
	clearEnv(t)
	var turns atomic.Pointer[[]agent.TurnInfo]
	turns.Store(&[]agent.TurnInfo{{TraposID: "7:kitchen", AccountID: "alice", Session: "ses_1", TurnID: "msg_3", Stopping: true}})
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != agent.TurnsPath || r.Header.Get("Authorization") != "Bearer tok" {
			server.WriteError(w, http.StatusUnauthorized, protocol.CodeUnauthorized, "missing or wrong API token")
			return
		}
		_ = json.NewEncoder(w).Encode(*turns.Load())
	}))
	defer gw.Close()
	out, err := runClient(t, "ai-turns", "--url", gw.URL, "--api-token", "tok")
	require.NoError(t, err)
	assert.Contains(t, out, "7:kitchen")
	assert.Contains(t, out, "stopping")
	turns.Store(&[]agent.TurnInfo{})
	out, errOut, err := runWith(t, "", "ai-turns", "--url", gw.URL, "--api-token", "tok")
	require.NoError(t, err)
	assert.Empty(t, out)
	assert.Equal(t, "no agent turn running\n", errOut)
	_, err = runClient(t, "ai-turns", "--url", gw.URL)
	assert.ErrorContains(t, err, "(give the API token with --api-token or SANDBOX_API_TOKEN)")
}

// TestAITurnsSaysWhyTheGatewayRefusedIt: ai-turns shows the gateway's own refusal as the
// computers list does, naming the token given: it said "answered HTTP 401 (give its API
// token …)" whatever the token's fault (a wrong or expired one given), and "no agent module
// (an older gateway)" for any 404, another server's page included.
func TestAITurnsSaysWhyTheGatewayRefusedIt(t *testing.T) {
	clearEnv(t)
	base := startGatewayHTTP(t, "tok")
	for _, args := range [][]string{{"computers"}, {"ai-turns"}} {
		_, err := runClient(t, append(args, "--url", base, "--api-token", "nope")...)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), "the gateway at "+base+" answered 401: missing or wrong API token", args)
		assert.Contains(t, err.Error(), "(the token refused is the one given with --api-token or SANDBOX_API_TOKEN)", args)
		_, err = runClient(t, append(args, "--url", base)...)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), "(give the API token with --api-token or SANDBOX_API_TOKEN)", args)
	}
	none := httptest.NewServer(http.NotFoundHandler())
	defer none.Close()
	_, err := runClient(t, "ai-turns", "--url", none.URL)
	assert.EqualError(t, err, "list agent turns: the gateway at "+none.URL+" has no such route (HTTP 404 page not found): it is older than this trap-sandbox (upgrade the gateway), or --url names another server")
}

// TestAnOlderGatewayIsNamedAsSuch: a gateway older than a route answers Go's plain 404 for
// it (today's answers JSON under its API): the commands that need that route say the gateway
// is older and to upgrade it, not only that the URL may be wrong; no body shows its line break.
func TestAnOlderGatewayIsNamedAsSuch(t *testing.T) {
	clearEnv(t)
	old := http.NewServeMux()
	old.HandleFunc("GET /trapos/computers", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("[]"))
	})
	gw := httptest.NewServer(old)
	defer gw.Close()
	for _, args := range [][]string{{"computers", "revoke", "7:kitchen"}, {"link", "approve", "BCDF-GHJK"}} {
		_, err := runClient(t, append(args, "--url", gw.URL)...)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), "the gateway at "+gw.URL+" has no such route (HTTP 404 page not found): it is older than this trap-sandbox (upgrade the gateway), or --url names another server", args)
	}
	// A server with no gateway routes at all: the computers list names it the same way, once.
	none := httptest.NewServer(http.NotFoundHandler())
	defer none.Close()
	_, err := runClient(t, "computers", "--url", none.URL)
	assert.EqualError(t, err, "list computers: the gateway at "+none.URL+" has no such route (HTTP 404 page not found): it is older than this trap-sandbox (upgrade the gateway), or --url names another server")
	// The account commands say it as every client command does (hostapi's one wording of an
	// answer that is not the API's): they said "answered 404 with a body that is not the
	// account API's (an older trap-sandbox? it needs the account routes): 404 page not found".
	_, err = runClient(t, "accounts", "list", "--url", gw.URL)
	assert.EqualError(t, err, "accounts list: the gateway at "+gw.URL+" has no such route (HTTP 404 page not found): it is older than this trap-sandbox (upgrade the gateway), or --url names another server")
}

// nginxNotFound is nginx's own 404 page (1.22, Debian), what the reverse proxy of
// docs/reverse-proxy.md answers for every path but the computers'.
const nginxNotFound = "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n"

// TestAReverseProxysPageIsNamedWithWhereTheAPIIs: an operator who gave --url the public
// https:// name (nginx in front, which passes only the computers' paths) read the proxy's
// page as markup, \x0d\x0a for every line break, and nothing of what to do. Every client
// command now names the page by its title and says where the host API is: not behind the
// proxy, but for the web console's routes its optional part passes, through which `computers`
// works (a `tokens list` through it said the proxy passes none of the API).
func TestAReverseProxysPageIsNamedWithWhereTheAPIIs(t *testing.T) {
	clearEnv(t)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(nginxNotFound))
	}))
	defer proxy.Close()
	const shown = `an HTML page "404 Not Found", a web server's or reverse proxy's, not a trap-sandbox gateway's: the host API is on the gateway's --listen port, of which a reverse proxy set up as docs/reverse-proxy.md passes only the web console's routes (its optional part: the list, a computer's requests, screen and input); reach the rest on the gateway's machine or through an SSH tunnel (docs/public-ports.md)`
	for _, args := range [][]string{{"computers"}, {"ping", "7:kitchen"}, {"accounts", "list"}, {"link", "approve", "BCDF-GHJK"}, {"tokens", "list"}} {
		_, err := runClient(t, append(args, "--url", proxy.URL, "--api-token", "tok")...)
		require.Error(t, err, args)
		assert.True(t, strings.HasSuffix(err.Error(), ": "+shown), "%v: %s", args, err)
		assert.NotContains(t, err.Error(), `\x0d`, args)
	}
}

// nginxBadGateway is nginx's own 502 page (1.22, Debian): what the reverse proxy of
// docs/reverse-proxy.md answers, on the web console's routes it passes to --listen's port,
// when no gateway answers there.
const nginxBadGateway = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n"

// TestAReverseProxysBadGatewayPageSaysTheGatewayBehindItIsDown: with the web console's part of
// docs/reverse-proxy.md, nginx passes GET /trapos/computers and the computers' requests to the
// gateway, and answers its 502 page when the gateway is stopped. The commands said the proxy
// passes none of the host API, the wrong fault and the wrong fix: the proxy passed the call and
// got no answer. A 502 or 504 page now says so (an nginx 504 page is "504 Gateway Time-out").
func TestAReverseProxysBadGatewayPageSaysTheGatewayBehindItIsDown(t *testing.T) {
	clearEnv(t)
	for _, tc := range []struct {
		status int
		page   string
		title  string
	}{
		{http.StatusBadGateway, nginxBadGateway, "502 Bad Gateway"},
		{http.StatusGatewayTimeout, strings.ReplaceAll(nginxBadGateway, "502 Bad Gateway", "504 Gateway Time-out"), "504 Gateway Time-out"},
	} {
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.page))
		}))
		shown := "the gateway at " + proxy.URL + " answered HTTP " + fmt.Sprint(tc.status) + `, a reverse proxy's page "` + tc.title + `": ` +
			"the proxy got no answer from the gateway behind it (stopped, or not at the address the proxy passes to); " +
			"start the gateway, or see why in the proxy's error log"
		for _, args := range [][]string{{"computers"}, {"ping", "7:kitchen"}, {"accounts", "list"}} {
			_, err := runClient(t, append(args, "--url", proxy.URL, "--api-token", "tok")...)
			require.Error(t, err, args)
			assert.True(t, strings.HasSuffix(err.Error(), ": "+shown), "%v: %s", args, err)
			assert.NotContains(t, err.Error(), "reach the rest on the gateway's machine", args)
		}
		proxy.Close()
	}
}

// TestAPageInLatin1IsNamedByItsTitleToo: a web server's page in ISO-8859-1 (é the byte E9,
// no UTF-8) before its title was named by bytes after it ("vable</TITLE></"), or panicked the
// command when there were many: the title was looked for in the page lower-cased, where each
// such byte became three, and cut from the page at those places.
func TestAPageInLatin1IsNamedByItsTitleToo(t *testing.T) {
	clearEnv(t)
	for _, page := range []string{
		"<html><head><meta charset=\"iso-8859-1\"><meta name=\"description\" content=\"" +
			"Cette page n'a pas \xe9t\xe9 trouv\xe9e sur ce serveur, d\xe9sol\xe9\">" +
			"<TITLE>404 Introuvable</TITLE></head><body><h1>Introuvable</h1></body></html>\n",
		"<html><!-- " + strings.Repeat("r\xe9ponse ", 60) + "--><title>404 Introuvable</title></html>",
	} {
		testLatin1Page(t, page)
	}
}

// testLatin1Page asks a server that answers page, as a web server would, through the
// client commands.
func testLatin1Page(t *testing.T, page string) {
	t.Helper()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(page))
	}))
	defer proxy.Close()
	for _, args := range [][]string{{"computers"}, {"accounts", "list"}} {
		_, err := runClient(t, append(args, "--url", proxy.URL, "--api-token", "tok")...)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), `: an HTML page "404 Introuvable", a web server's or reverse proxy's`, args)
	}
}

// TestWhoAnsweredComesFromTheClientNotFromTheWords: the CLI leaves out its "the gateway
// answered CODE" only for its own words about the gateway (a wrong token, a hung gateway); a
// gateway's answer that happens to begin the same way is still named as the gateway's, with
// its code and the timeout's fix.
func TestWhoAnsweredComesFromTheClientNotFromTheWords(t *testing.T) {
	clearEnv(t)
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		server.WriteError(w, http.StatusGatewayTimeout, protocol.CodeTimeout, "the gateway at the other end of the bus did not answer")
	}))
	defer gw.Close()
	_, err := runClient(t, "ping", "7:kitchen", "--url", gw.URL)
	require.EqualError(t, err, "computer 7:kitchen ping: the gateway answered timeout: the gateway at the other end of the bus did not answer"+
		" (--timeout gives it longer, at most 60s)")
}

// TestAnEmptyComputerOrTypeIsTheCommandsOwnRefusal: a blank traposId or request type is refused
// by the command itself, in its words: it said "computer  ping: the gateway answered
// not_connected: …" (no gateway was asked, and the blank id made a double space) and, for the
// type, the HTTP body's wording ("the body needs a non-empty \"type\"").
func TestAnEmptyComputerOrTypeIsTheCommandsOwnRefusal(t *testing.T) {
	clearEnv(t)
	base := serveDisk(t, daemonfake.NewLocal(nil))
	for _, id := range []string{"", " "} {
		_, err := runClient(t, "ping", "--url", base, id)
		require.EqualError(t, err, "ping: no computer was named (the traposId is empty): give one as the list of connected computers shows it, e.g. 7:kitchen")
	}
	_, err := runClient(t, "request", "--url", base, "5:kitchen", "")
	require.EqualError(t, err, "computer 5:kitchen request: give the request's type, e.g. trap-sandbox request 5:kitchen ping")
}

// TestInfoSaysWhatTheOwnerAllows: trap-sandbox info showed neither that a computer is a pocket
// one, nor its screen's size, nor what its owner allows (an operator learnt it from a
// forbidden); an older client's answer, which says none of it, is not reported, not none.
func TestInfoSaysWhatTheOwnerAllows(t *testing.T) {
	clearEnv(t)
	base := startGatewayHTTP(t, "")
	connectComputer(t, base, &daemonfake.Daemon{ID: 7, Label: "pocket", Pocket: true, AllowFiles: daemonfake.AllowFilesRead})
	connectComputer(t, base, &daemonfake.Daemon{ID: 8, Label: "old", OldInfo: true, AllowFiles: daemonfake.AllowFilesRead})

	out, err := runClient(t, "info", "--url", base, "7:pocket")
	require.NoError(t, err)
	assert.Contains(t, out, "\nkind:          a pocket computer, its screen 26x20 characters\n"+
		"allows:        files: read (writes need: set sandbox.allow_files write)\n"+
		"               exec: no (running Lua or programs needs: set sandbox.allow_exec true)\n"+
		"               screen: none (seeing it needs: set sandbox.allow_screen view; typing: set sandbox.allow_screen control)\n"+
		"               (these are the owner's settings: only the owner changes them, in game, with set at the computer's shell)\n"+
		"peripherals:   1\n", out)
	// The agent's words ("never change them yourself … ask the player") are MCP's and the ai
	// agent's: a person at the CLI read an order written for a model.
	assert.NotContains(t, out, "yourself")
	assert.NotContains(t, out, "map[", "the answer's object is not printed as Go's")
	assert.Contains(t, out, "\nfreeSpace:     1000000\n", "a round number as the computer wrote it, not 1e+06")

	out, err = runClient(t, "info", "--url", base, "8:old")
	require.NoError(t, err)
	const notReported = "not reported (the computer's client is older than 0.5.15: a refused request names the setting it needs)"
	assert.Contains(t, out, "\nkind:          "+notReported+"\nallows:        "+notReported+"\nperipherals:   1\n", out)
	assert.NotContains(t, out, "relabelled:")

	// Its label changed since it connected (label set): which id reaches it, as MCP's
	// computer_info says it (computer.Info.Relabelled).
	connectComputer(t, base, &daemonfake.Daemon{ID: 9, Label: "kitchen", InfoFields: map[string]any{"label": "pantry"}})
	out, err = runClient(t, "info", "--url", base, "9:kitchen")
	require.NoError(t, err)
	assert.Contains(t, out, "\nrelabelled:    its label changed since it connected as 9:kitchen, so within 15 s it connects again as 9:pantry "+
		"(its daemon looks for a new label every 15 s, as CC has no event for one), and 9:kitchen is not connected from then on: ask it by the new id then\nkind:", out)
}

// A computer's client that answers computer.info with what no client sends (a hostile or
// altered one) is shown by the text rule: its levels escaped and cut, never its escape
// sequences or line breaks; a field of the wrong type is left out, named in one line with
// what it must be, and the rest is shown (it failed the whole command, so the operator saw
// nothing of the computer).
func TestInfoShowsAHostileComputersAnswerAsText(t *testing.T) {
	clearEnv(t)
	base := startGatewayHTTP(t, "")
	// 100 KiB, its control characters at the start (escaped, the frame stays under 128 KiB).
	long := "\x1b[2J\x1b]0;owned\a<script>alert(1)</script>\n" + strings.Repeat("read write ", 9400)
	connectComputer(t, base, &daemonfake.Daemon{ID: 7, Label: "odd", InfoFields: map[string]any{
		"pocket": true, "screenWidth": -26, "screenHeight": 20,
		"allowed": map[string]any{"files": long, "exec": false, "screen": "\x1b[31mcontrol"},
	}})
	connectComputer(t, base, &daemonfake.Daemon{ID: 8, Label: "yes", InfoFields: map[string]any{"pocket": "yes"}})
	connectComputer(t, base, &daemonfake.Daemon{ID: 9, Label: "all", InfoFields: map[string]any{"allowed": "everything"}})
	connectComputer(t, base, &daemonfake.Daemon{ID: 10, Label: "huge", InfoFields: map[string]any{"screenWidth": 1e308}})

	out, err := runClient(t, "info", "--url", base, "7:odd")
	require.NoError(t, err)
	assert.NotContains(t, out, "\x1b", "no escape sequence reaches the terminal")
	assert.NotContains(t, out, "<script>\n", "no line broken by the computer")
	assert.Less(t, len(out), 2000, "a level is cut, not printed whole")
	assert.Contains(t, out, "\nkind:          a pocket computer\n", "a negative size is not reported")
	assert.Contains(t, out, "\nallows:        files: not known (\"\\x1b[2J\\x1b]0;owned\\x07<script>alert(1)</script>\\x0aread write", out)
	assert.Contains(t, out, "\n               screen: not known (\"\\x1b[31mcontrol\" is not none, view or control: the computer's own check decides)\n")

	out, err = runClient(t, "info", "--url", base, "8:yes")
	require.NoError(t, err, "a field of the wrong type leaves the rest shown")
	assert.Contains(t, out, "\nlabel:         yes\n")
	assert.Contains(t, out, "\nkind:          not known (the computer's pocket was not understood: notUnderstood says why)\n", out)
	assert.Contains(t, out, "\nallows:        files: none (reads need: set sandbox.allow_files read; writes: set sandbox.allow_files write)\n", out)
	assert.Contains(t, out, "\nnotUnderstood: \"pocket\" must be true or false (got a string) (left out)\nperipherals:   1\n", out)
	assert.NotContains(t, out, "Go struct")

	out, err = runClient(t, "info", "--url", base, "9:all")
	require.NoError(t, err)
	assert.Contains(t, out, "\nkind:          a computer, its screen 51x19 characters\n"+
		"allows:        not known (the computer's allowed was not understood: notUnderstood says why)\n"+
		"notUnderstood: \"allowed\" must be an object (got a string) (left out)\n", out)

	out, err = runClient(t, "info", "--url", base, "10:huge")
	require.NoError(t, err)
	assert.Contains(t, out, "\nkind:          a computer\n", "a width it could not read is not reported")
	assert.Contains(t, out, "\nnotUnderstood: \"screenWidth\" must be a whole number (got a number 1e+308) (left out)\n", out)
}

// TestInfoTellsALabelsBackslashFromAnEscape: computer info shows a label holding the text \xa0
// (a backslash, x, a and 0) apart from one holding a no-break space, which it shows as \xa0:
// the text's backslash as \x5c (cctext.ShowDistinct), where both read \xa0. A backslash that
// starts no escape is shown as it is.
func TestInfoTellsALabelsBackslashFromAnEscape(t *testing.T) {
	clearEnv(t)
	base := startGatewayHTTP(t, "")
	connectComputer(t, base, &daemonfake.Daemon{ID: 7, Label: "esc", InfoFields: map[string]any{"label": `pc\xa0 pc` + "\u00a0" + ` C:\dir`}})
	out, err := runClient(t, "info", "--url", base, "7:esc")
	require.NoError(t, err)
	assert.Contains(t, out, "\nlabel:         pc\\x5cxa0 pc\\xa0 C:\\dir\n", out)
}

// TestAFailureNamesItsComputerOnce: a command's failure names the computer in its WHAT
// ("computer 5:küche screen"), and the gateway's words after it, which begin naming it too,
// say "the computer" there: "computer 5:küche screen: not_connected: computer 5:küche is not
// connected: replica a, …" named it twice. One rule for every command on a computer, the live
// view's end as a request's answer; a computer's own words, and words naming another
// computer, are kept as they are.
func TestAFailureNamesItsComputerOnce(t *testing.T) {
	stopped := protocol.Errorf(protocol.CodeNotConnected, "computer 5:küche is not connected: replica a, which held its socket, has stopped")
	own := protocol.Errorf(protocol.CodeFSError, "computer 5:küche: No such file")
	own.ByComputer = true
	for _, c := range []struct {
		name, id, command string
		err               error
		said              string
	}{
		{"the gateway's words", "5:küche", "ls /", stopped,
			"computer 5:küche ls /: the gateway answered not_connected: the computer is not connected: replica a, which held its socket, has stopped"},
		{"a single gateway's", "9:gone", "ping", computer.Hint(computer.NotConnected("9:gone"), "9:gone", nil, true, account.Caller{Admin: true}, 0, 0),
			"computer 9:gone ping: the gateway answered not_connected: the computer is not connected; no computer is connected at all: run sandbox status on it in game to see why"},
		{"the live view's end", "5:küche", "screen", fmt.Errorf("%w; it did not come back within 5m0s (--wait)", streamEnded{stopped}),
			"computer 5:küche screen: not_connected: the computer is not connected: replica a, which held its socket, has stopped; it did not come back within 5m0s (--wait)"},
		{"another computer named", "5:küche", "ls /", protocol.Errorf(protocol.CodeNotConnected, "computer 5:kitchen is not connected"),
			"computer 5:küche ls /: the gateway answered not_connected: computer 5:kitchen is not connected"},
		{"the computer's own words", "5:küche", "ls /", own,
			"computer 5:küche ls /: the computer answered fs_error: computer 5:küche: No such file"},
	} {
		assert.EqualError(t, failure(c.id, c.command, c.err), c.said, c.name)
	}
}
