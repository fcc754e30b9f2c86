package opencode

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"trap-sandbox/internal/clock"
	"trap-sandbox/testkit/opencodefake"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testTimeout is the probe bound of the hanging case: short, so it costs little.
// answerTimeout is everyone else's: a probe that gets an answer must never time out, however
// loaded the machine.
const (
	testTimeout   = 200 * time.Millisecond
	answerTimeout = 5 * time.Second
)

func newProber(t *testing.T, cfg ProberConfig) *Prober {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = answerTimeout
	}
	p, err := NewProber(cfg)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

func probe(t *testing.T, p *Prober) Health {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.Probe(ctx)
}

// probeAgent is probe by ProbeAgent: the result has the word of the agent's check it started.
func probeAgent(t *testing.T, p *Prober) Health {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.ProbeAgent(ctx)
}

func TestProbeHealthy(t *testing.T) {
	t.Run("with password", func(t *testing.T) {
		fake := opencodefake.Start(t, opencodefake.Options{Password: "p:a ss"})
		url := fake.URL
		p := newProber(t, ProberConfig{URL: url, Password: "p:a ss"})
		h := probe(t, p)
		assert.Equal(t, Health{OK: true, Version: "1.18.33", Status: http.StatusOK}, h)
		assert.True(t, fake.LastHadAuth())
	})
	t.Run("custom username", func(t *testing.T) {
		url := opencodefake.Start(t, opencodefake.Options{Username: "alice", Password: "secret"}).URL
		p := newProber(t, ProberConfig{URL: url + "/", Username: "alice", Password: "secret"})
		assert.True(t, probe(t, p).OK)
	})
	t.Run("no password sends no auth", func(t *testing.T) {
		fake := opencodefake.Start(t, opencodefake.Options{})
		url := fake.URL
		p := newProber(t, ProberConfig{URL: url})
		assert.True(t, probe(t, p).OK)
		assert.False(t, fake.LastHadAuth())
	})
	t.Run("server without password ignores our credentials", func(t *testing.T) {
		url := opencodefake.Start(t, opencodefake.Options{}).URL
		p := newProber(t, ProberConfig{URL: url, Password: "whatever"})
		assert.True(t, probe(t, p).OK)
	})
}

func TestProbeFailures(t *testing.T) {
	const password = "s3cr3t-do-not-log"

	cases := []struct {
		name   string
		url    func(t *testing.T) string
		cfg    ProberConfig
		detail string
		// status is the answer's HTTP status (0: none came), which tells a password to fix
		// from a server not there (yet).
		status int
	}{
		{
			name:   "refused",
			url:    func(t *testing.T) string { return opencodefake.ClosedPortURL(t) },
			detail: "connection refused",
		},
		{
			name: "wrong password",
			url: func(t *testing.T) string {
				url := opencodefake.Start(t, opencodefake.Options{Password: "right"}).URL
				return url
			},
			cfg:    ProberConfig{Password: password},
			detail: "answered 401, refusing the gateway's credentials: its operator must give the gateway opencode's server password, --opencode-password (OPENCODE_SERVER_PASSWORD), and its user if not opencode (OPENCODE_SERVER_USERNAME)",
			status: http.StatusUnauthorized,
		},
		{
			name: "wrong username",
			url: func(t *testing.T) string {
				url := opencodefake.Start(t, opencodefake.Options{Password: password}).URL
				return url
			},
			cfg:    ProberConfig{Username: "OPENCODE", Password: password},
			detail: "answered 401, refusing the gateway's credentials: its operator must give the gateway opencode's server password, --opencode-password (OPENCODE_SERVER_PASSWORD), and its user if not opencode (OPENCODE_SERVER_USERNAME)",
			status: http.StatusUnauthorized,
		},
		{
			name: "missing password",
			url: func(t *testing.T) string {
				url := opencodefake.Start(t, opencodefake.Options{Password: "right"}).URL
				return url
			},
			detail: "answered 401, wanting a password the gateway does not send: its operator must give the gateway opencode's server password, --opencode-password (OPENCODE_SERVER_PASSWORD)",
			status: http.StatusUnauthorized,
		},
		{
			name: "HTML answer (wrong URL)",
			url: func(t *testing.T) string {
				url := opencodefake.Start(t, opencodefake.Options{}).URL
				return url + "/app" // every unknown path answers the SPA
			},
			detail: "answered 200 text/html, not an opencode health response (wrong URL?)",
			status: http.StatusOK,
		},
		{
			name: "JSON without healthy",
			url: func(t *testing.T) string {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json; charset=utf-8")
					_, _ = w.Write([]byte(`{"status":"up"}`))
				}))
				t.Cleanup(srv.Close)
				return srv.URL
			},
			detail: "without a healthy field",
			status: http.StatusOK,
		},
		{
			name: "healthy false",
			url: func(t *testing.T) string {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(`{"healthy":false}`))
				}))
				t.Cleanup(srv.Close)
				return srv.URL
			},
			detail: "reports healthy: false",
			status: http.StatusOK,
		},
		{
			name: "other status",
			url: func(t *testing.T) string {
				return opencodefake.StartFailing(t, http.StatusInternalServerError).URL
			},
			detail: "answered status 500 (opencode, or a proxy in front of it, failed: see its log)",
			status: http.StatusInternalServerError,
		},
		{
			// Another server at the URL (the gateway's own port, say): it answers 404 where
			// opencode would answer its web app.
			name: "not found (another server)",
			url: func(t *testing.T) string {
				srv := httptest.NewServer(http.NotFoundHandler())
				t.Cleanup(srv.Close)
				return srv.URL
			},
			detail: "answered 404 Not Found, not opencode (wrong URL? set OPENCODE_URL to opencode serve's address)",
			status: http.StatusNotFound,
		},
		{
			name: "closed without answer",
			url: func(t *testing.T) string {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					conn, _, err := w.(http.Hijacker).Hijack()
					if err == nil {
						_ = conn.Close()
					}
				}))
				t.Cleanup(srv.Close)
				return srv.URL
			},
			detail: "the connection was closed without an answer",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.URL = tc.url(t)
			p := newProber(t, cfg)
			h := probe(t, p)
			assert.False(t, h.OK)
			assert.Contains(t, h.Detail, "opencode at "+cfg.URL+": ")
			assert.Contains(t, h.Detail, tc.detail)
			assert.Equal(t, tc.status, h.Status)
			assert.NotContains(t, h.Detail, password)
			assert.NotContains(t, h.Detail, "\n")
		})
	}
}

func TestProbeHangingIsBounded(t *testing.T) {
	url := opencodefake.StartStalled(t).URL
	p := newProber(t, ProberConfig{URL: url, Timeout: testTimeout})

	start := time.Now()
	h := probe(t, p)
	elapsed := time.Since(start)

	assert.False(t, h.OK)
	assert.Equal(t, "opencode at "+url+": no answer within 200ms", h.Detail)
	// Hanging holds the request until the client gives up, so the probe ended by its own
	// bound, as the detail says; a wall-clock ceiling would only measure the machine.
	assert.GreaterOrEqual(t, elapsed, testTimeout)
}

// TestAProbeThatGotNoConnectionSaysNoAnswerWithinOfNoServer: NoAnswerWithin is said of a
// server that took the probe's connection and answered nothing (the agent warns its operator
// of an opencode that is hung); a probe whose connection was never made in its time (a host
// that drops the packets: a wrong address behind a firewall, a machine switched off) reached no
// opencode, and was warned as one that "accepts connections but answers nothing".
func TestAProbeThatGotNoConnectionSaysNoAnswerWithinOfNoServer(t *testing.T) {
	dropped := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done() // the SYN is never answered
		return nil, ctx.Err()
	}}
	p := newProber(t, ProberConfig{URL: "http://192.0.2.1:4242", Timeout: testTimeout, Transport: dropped})
	h := probe(t, p)
	assert.False(t, h.OK)
	assert.Equal(t, "opencode at http://192.0.2.1:4242: no answer within 200ms", h.Detail)
	assert.Zero(t, h.NoAnswerWithin, "no server took the connection")

	stalled := newProber(t, ProberConfig{URL: opencodefake.StartStalled(t).URL, Timeout: testTimeout})
	assert.Equal(t, testTimeout, probe(t, stalled).NoAnswerWithin, "a server that took it and said nothing")
}

func TestProbeCoalesces(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 16)
	fake := opencodefake.New(opencodefake.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p := newProber(t, ProberConfig{URL: srv.URL, Timeout: 5 * time.Second})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	const callers = 8
	results := make(chan Health, callers)
	var started sync.WaitGroup
	for range callers {
		started.Add(1)
		go func() {
			started.Done()
			results <- p.Probe(ctx)
		}()
	}
	started.Wait()
	select {
	case <-arrived:
	case <-ctx.Done():
		t.Fatal("no upstream request arrived")
	}
	// Every caller joins the running probe before it is released.
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.current != nil && p.current.callers == callers
	}, 5*time.Second, time.Millisecond, "the callers did not join the running probe")
	close(release)
	for range callers {
		select {
		case h := <-results:
			assert.True(t, h.OK)
		case <-ctx.Done():
			t.Fatal("a caller got no result")
		}
	}
	assert.EqualValues(t, 1, fake.Requests(), "concurrent probes share one upstream request")

	// A later probe goes upstream again (results are not cached).
	go func() { <-arrived }()
	assert.True(t, p.Probe(ctx).OK)
	assert.EqualValues(t, 2, fake.Requests())
}

func TestProbeCallerGivesUp(t *testing.T) {
	url := opencodefake.StartStalled(t).URL
	p := newProber(t, ProberConfig{URL: url, Timeout: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	h := p.Probe(ctx)
	assert.False(t, h.OK)
	assert.Contains(t, h.Detail, "abandoned")
	// Close stops the upstream probe nobody waits for; goleak checks nothing is left.
	p.Close()
	assert.Contains(t, p.Probe(context.Background()).Detail, "closed")
}

func TestNewProberValidates(t *testing.T) {
	for _, bad := range []string{"", "ftp://x", "http://", "://nope"} {
		_, err := NewProber(ProberConfig{URL: bad})
		assert.Error(t, err, bad)
	}
	for _, bad := range []string{"ftp://u:hunter2@x", "http://u:hunter2@x:abc", "http://u:hunter2@x\n"} {
		_, err := NewProber(ProberConfig{URL: bad})
		require.Error(t, err, bad)
		assert.NotContains(t, err.Error(), "hunter2", "a refused URL's password is not shown")
	}
	p, err := NewProber(ProberConfig{URL: "http://user:hunter2@127.0.0.1:1/base/"})
	require.NoError(t, err)
	defer p.Close()
	assert.NotContains(t, p.URL(), "hunter2")
	assert.Contains(t, p.URL(), "/base/global/health")
	assert.Equal(t, "opencode at http://user:xxxxx@127.0.0.1:1/base: x", p.describe("x"))
}

// countingServer runs fake and counts the TCP connections it accepts.
func countingServer(t *testing.T, fake http.Handler) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(fake)
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func TestProbeReusesOneConnection(t *testing.T) {
	fake := opencodefake.New(opencodefake.Options{})
	srv, conns := countingServer(t, fake)
	p := newProber(t, ProberConfig{URL: srv.URL})
	for range 5 {
		require.True(t, probe(t, p).OK)
	}
	assert.EqualValues(t, 5, fake.Requests(), "every probe goes upstream")
	assert.Equal(t, int32(1), conns.Load(), "sequential probes share one kept-alive connection")
}

func TestProbeCloseHangsUpTheIdleConnection(t *testing.T) {
	closed := make(chan struct{})
	srv := httptest.NewUnstartedServer(opencodefake.New(opencodefake.Options{}))
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateClosed {
			close(closed)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	p, err := NewProber(ProberConfig{URL: srv.URL, Timeout: answerTimeout})
	require.NoError(t, err)
	require.True(t, probe(t, p).OK)

	p.Close()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the kept-alive connection is still open after Close")
	}
}

func TestProbeKeptAliveConnectionTellsTheTruth(t *testing.T) {
	t.Run("opencode drops the idle connection", func(t *testing.T) {
		srv, conns := countingServer(t, opencodefake.New(opencodefake.Options{}))
		p := newProber(t, ProberConfig{URL: srv.URL})
		require.True(t, probe(t, p).OK)
		srv.CloseClientConnections() // what a server's idle timeout does
		assert.Equal(t, Health{OK: true, Version: opencodefake.Version, Status: http.StatusOK}, probe(t, p),
			"a dropped idle connection is not an outage")
		assert.Equal(t, int32(2), conns.Load())
	})
	t.Run("opencode stops, then starts again", func(t *testing.T) {
		srv, _ := countingServer(t, opencodefake.New(opencodefake.Options{}))
		addr := srv.Listener.Addr().String()
		p := newProber(t, ProberConfig{URL: srv.URL})
		require.True(t, probe(t, p).OK)

		srv.Close()
		h := probe(t, p)
		assert.False(t, h.OK)
		assert.Equal(t, "opencode at "+srv.URL+": connection refused", h.Detail)

		l, err := net.Listen("tcp", addr)
		require.NoError(t, err, "listen on the stopped server's address again")
		restarted := httptest.NewUnstartedServer(opencodefake.New(opencodefake.Options{}))
		require.NoError(t, restarted.Listener.Close())
		restarted.Listener = l
		restarted.Start()
		t.Cleanup(restarted.Close)
		assert.True(t, probe(t, p).OK)
	})
}

// A server that answers a status line of 200 KB: the probe says opencodeOk:false with a short
// detail, instead of copying the line (or failing).
func TestProbeOfAHugeMalformedStatusLineIsShort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = io.ReadAll(io.LimitReader(conn, 1)) // the request has begun
		_, _ = io.WriteString(conn, "HTTP/1.1 2"+strings.Repeat("9", 200_000)+" OK\r\n\r\n")
	}()
	p := newProber(t, ProberConfig{URL: "http://" + l.Addr().String()})
	h := probe(t, p)
	<-done
	assert.False(t, h.OK)
	assert.Less(t, len(h.Detail), 500, h.Detail[:min(len(h.Detail), 500)])
	assert.Contains(t, h.Detail, "(cut, ")
}

// Recent tells the last upstream result while it is at most maxAge old (by the prober's
// clock), never probes, and tells nothing before the first result or after Close.
func TestRecentTellsTheLastResultWhileFresh(t *testing.T) {
	fake := opencodefake.New(opencodefake.Options{})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	fc := clock.NewFake(time.Unix(1000, 0))
	advance := fc.Advance
	p := newProber(t, ProberConfig{URL: srv.URL, Clock: fc})

	_, ok := p.Recent(time.Second)
	assert.False(t, ok, "no result before the first probe")
	require.True(t, probe(t, p).OK)
	advance(time.Second)
	h, ok := p.Recent(time.Second)
	require.True(t, ok, "a result exactly maxAge old is fresh")
	assert.Equal(t, Health{OK: true, Version: opencodefake.Version, Status: http.StatusOK}, h)
	assert.EqualValues(t, 1, fake.Requests(), "Recent never probes")

	advance(time.Nanosecond)
	_, ok = p.Recent(time.Second)
	assert.False(t, ok, "older than maxAge")

	srv.Close() // the next result is an outage, and Recent tells that one
	require.False(t, probe(t, p).OK)
	h, ok = p.Recent(time.Second)
	require.True(t, ok)
	assert.Contains(t, h.Detail, "connection refused")

	p.Close()
	_, ok = p.Recent(time.Hour)
	assert.False(t, ok, "a closed prober has no result to tell")
}

// TestAQueryInTheURLIsNotShown: a query in OPENCODE_URL (a proxy's ?token=…) was shown whole
// in the start-up config line and in every probe_gateway answer, which any player reads with
// sandbox health; it is still sent.
func TestAQueryInTheURLIsNotShown(t *testing.T) {
	var query atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query.Store(r.URL.RawQuery)
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	p, err := NewProber(ProberConfig{URL: srv.URL + "/base?token=hunter2#frag"})
	require.NoError(t, err)
	defer p.Close()
	assert.Equal(t, srv.URL+"/base/global/health?…", p.URL())
	h := p.Probe(t.Context())
	assert.Equal(t, "token=hunter2", query.Load(), "the query still reaches opencode")
	assert.NotContains(t, h.Detail, "hunter2")
	assert.True(t, strings.HasPrefix(h.Detail, "opencode at "+srv.URL+"/base?…: "), h.Detail)
}

// TestTheAgentsCheckRunsOnlyWhenItsWordMayHaveChanged: a probe that finds opencode healthy
// carries the agent's check (AIDetail): run at the first such probe, again on each while it
// found fault (opencode may have the model now), and after opencode did not answer; else its
// last word is carried without asking opencode anything more than its health.
func TestTheAgentsCheckRunsOnlyWhenItsWordMayHaveChanged(t *testing.T) {
	fake := opencodefake.Start(t, opencodefake.Options{})
	p := newProber(t, ProberConfig{URL: fake.URL})
	var checks atomic.Int32
	var word atomic.Pointer[string]
	say := func(s string) { word.Store(&s) }
	say("")
	var unknown atomic.Bool
	p.SetAgentCheck(func(context.Context) (string, bool) { checks.Add(1); return *word.Load(), !unknown.Load() })

	assert.Equal(t, Health{OK: true, Version: opencodefake.Version, Status: http.StatusOK}, probeAgent(t, p))
	assert.Equal(t, "", probeAgent(t, p).AIDetail)
	assert.EqualValues(t, 1, checks.Load(), "nothing found: not checked again")

	fake.FailWith(http.StatusBadGateway)
	h := probeAgent(t, p)
	assert.False(t, h.OK)
	assert.Empty(t, h.AIDetail, "no word of the agent when opencode does not answer")
	assert.EqualValues(t, 1, checks.Load())

	say("no model")
	fake.FailWith(0)
	assert.Equal(t, "no model", probeAgent(t, p).AIDetail, "checked again once opencode answers again")
	assert.Equal(t, "no model", probeAgent(t, p).AIDetail)
	assert.EqualValues(t, 3, checks.Load(), "checked at each probe while it found fault")
	say("")
	unknown.Store(true) // opencode gave no answer to the check (a timeout)
	assert.Equal(t, "", probeAgent(t, p).AIDetail, "a fault not confirmed is not said")
	unknown.Store(false)
	say("")
	assert.Equal(t, "", probeAgent(t, p).AIDetail, "cleared at the next probe")
	assert.Equal(t, "", probeAgent(t, p).AIDetail)
	assert.EqualValues(t, 5, checks.Load())

	fake.FailWith(http.StatusBadGateway)
	probeAgent(t, p)
	fake.FailWith(0)
	unknown.Store(true)
	assert.Equal(t, "", probeAgent(t, p).AIDetail)
	assert.Equal(t, "", probeAgent(t, p).AIDetail)
	assert.EqualValues(t, 7, checks.Load(), "asked again at each probe until it knows")
	unknown.Store(false)
	probeAgent(t, p)
	probeAgent(t, p)
	assert.EqualValues(t, 8, checks.Load())
}

// TestAProbeWaitsForTheCheckOfAFaultAgentWaitAtMost: while the agent's check's last word was a
// fault (opencode lacks the model), each probe waited for the check to say it again, which is
// bounded by the probe's timeout: a freshly started opencode took 6 s to list its providers,
// and sandbox health, which waits for opencode's health first, took up to 10 s (the computer's
// limit). The probe waits AgentWait at most, and past it says nothing of the fault, which the
// check has not confirmed; the check's word is in the results after it ends.
func TestAProbeWaitsForTheCheckOfAFaultAgentWaitAtMost(t *testing.T) {
	fake := opencodefake.Start(t, opencodefake.Options{})
	p := newProber(t, ProberConfig{URL: fake.URL, AgentWait: time.Millisecond})
	var hold atomic.Bool
	started, release := make(chan struct{}, 1), make(chan struct{})
	var ended atomic.Bool
	p.SetAgentCheck(func(ctx context.Context) (string, bool) {
		defer ended.Store(hold.Load())
		if hold.Load() {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return "no model", true
	})
	require.Equal(t, "no model", probeAgent(t, p).AIDetail)

	hold.Store(true) // a freshly started opencode, slow to list its providers
	h := probe(t, p)
	<-started
	assert.False(t, ended.Load(), "the probe waited past AgentWait, until the check ended")
	assert.True(t, h.OK)
	assert.Empty(t, h.AIDetail, "a fault not confirmed yet is not said")
	close(release)
	require.Equal(t, "no model", probeAgent(t, p).AIDetail, "the check's word once it ended")
	last, ok := p.Recent(time.Hour)
	require.True(t, ok)
	assert.Equal(t, "no model", last.AIDetail, "in the last result too")
}

// TestTheAgentsCheckRunsAgainOnceItsWordIsAgentRecheckOld: a word that nothing keeps the agent
// from working held for as long as opencode answered every probe, so a model it lost meanwhile
// went unsaid; it holds AgentRecheck on the prober's clock, then the next probe checks again.
func TestTheAgentsCheckRunsAgainOnceItsWordIsAgentRecheckOld(t *testing.T) {
	fake := opencodefake.Start(t, opencodefake.Options{})
	fc := clock.NewFake(time.Unix(1_000_000, 0))
	advance := fc.Advance
	p := newProber(t, ProberConfig{URL: fake.URL, Clock: fc})
	var checks atomic.Int32
	p.SetAgentCheck(func(context.Context) (string, bool) { checks.Add(1); return "", true })

	probeAgent(t, p)
	advance(AgentRecheck - time.Nanosecond)
	probeAgent(t, p)
	assert.EqualValues(t, 1, checks.Load(), "within AgentRecheck: the last word stands")
	advance(time.Nanosecond)
	probeAgent(t, p)
	probeAgent(t, p)
	assert.EqualValues(t, 2, checks.Load(), "checked again once, at AgentRecheck")

	p.RecheckAgent() // the agent learnt the word may be wrong
	probeAgent(t, p)
	probeAgent(t, p)
	assert.EqualValues(t, 3, checks.Load(), "checked again once, at the next probe")
}

// TestAFaultTheCheckFoundIsSaidOnlyOnceCheckedAgain: the agent's check had found fault (the
// model missing on opencode), and the operator restarted opencode with the model's key
// between two probes. The first probe after it carried the fault word while the check ran
// beside it, so sandbox health said it and ai alone refused to open ("tell the gateway's
// operator") for a fault already fixed, until a later probe. A probe now waits for the check
// while the word it would carry is a fault: that word is said only as the check says it
// again. A probe whose word is that nothing is wrong still does not wait.
func TestAFaultTheCheckFoundIsSaidOnlyOnceCheckedAgain(t *testing.T) {
	fake := opencodefake.Start(t, opencodefake.Options{})
	// A wait longer than any hold here: the probe's answer is the check's word.
	p := newProber(t, ProberConfig{URL: fake.URL, AgentWait: time.Hour})
	var word atomic.Pointer[string]
	say := func(s string) { word.Store(&s) }
	say("no model")
	var checks atomic.Int32
	var unknown atomic.Bool
	// hold, when set, is a check's answer held back: the check says it started, and waits.
	var hold atomic.Pointer[chan struct{}]
	started := make(chan struct{}, 1)
	p.SetAgentCheck(func(ctx context.Context) (string, bool) {
		checks.Add(1)
		if release := hold.Load(); release != nil {
			started <- struct{}{}
			select {
			case <-*release:
			case <-ctx.Done():
			}
		}
		return *word.Load(), !unknown.Load()
	})
	require.Equal(t, "no model", probeAgent(t, p).AIDetail)

	say("") // opencode restarted, with the model
	release := make(chan struct{})
	hold.Store(&release)
	answered := make(chan Health, 1)
	go func() { answered <- probe(t, p) }()
	<-started
	select {
	case h := <-answered:
		t.Errorf("the probe answered %q before the check that may clear it ended", h.AIDetail)
		close(release)
		return
	default:
	}
	close(release)
	assert.Empty(t, (<-answered).AIDetail, "the fault is fixed: not said")
	hold.Store(nil)

	// opencode lost the model, and then restarted with it: the check of the fault got no
	// answer in time (a fresh opencode took 6 s to list its providers, past the check's 5 s).
	say("no model")
	p.RecheckAgent()
	require.Equal(t, "no model", probeAgent(t, p).AIDetail)
	say("")
	unknown.Store(true)
	assert.Empty(t, probe(t, p).AIDetail, "a fault the check could not confirm is not said")
	assert.Empty(t, probeAgent(t, p).AIDetail)
	unknown.Store(false)
	require.Empty(t, probeAgent(t, p).AIDetail, "checked again: all is well")

	say("no model") // and lost again: within AgentRecheck the word that all is well stands
	before := checks.Load()
	assert.Empty(t, probe(t, p).AIDetail)
	assert.Equal(t, before, checks.Load(), "no check while its word is that all is well")
}
