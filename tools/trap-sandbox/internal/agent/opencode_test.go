package agent

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"
)

// fakeClient is the gateway's opencode client of directory dir, speaking to a fake opencode.
func fakeClient(t *testing.T, dir string) *client {
	t.Helper()
	oc := opencodefake.Start(t, opencodefake.Options{Password: "pw"})
	oc.Agent(func(*opencodefake.Turn) {}, "p/m")
	base, err := url.Parse(oc.URL)
	require.NoError(t, err)
	return &client{base: base, dir: dir, username: opencodefake.DefaultUsername, password: "pw", http: http.DefaultClient}
}

// TestReplyToAnUnknownAskNamesIt: opencode answers a reply to an ask it does not know (never
// asked, or answered already) with its other error shape, {"_tag","message"}; the gateway's
// error (which it logs) says what opencode said, not only the status.
func TestReplyToAnUnknownAskNamesIt(t *testing.T) {
	c := fakeClient(t, t.TempDir())
	err := c.replyPermission(context.Background(), "per_nope", "once", "")
	require.Error(t, err)
	assert.Equal(t, "opencode answered HTTP 404 (PermissionNotFoundError: Permission request not found: per_nope)", err.Error())
}

// TestEnsureMCPNamesAMissingConfig: when the directory's instance has no trap-sandbox MCP
// server (its opencode.json lacks it, or opencode runs on another host and never read it),
// opencode answers the connect with 404 McpServerNotFoundError; the operator is told where
// the server should have been configured, not a bare status, and the computer who fixes it,
// without the host's directory.
func TestEnsureMCPNamesAMissingConfig(t *testing.T) {
	dir := t.TempDir() // no opencode.json
	c := fakeClient(t, dir)
	err := c.ensureMCP(context.Background())
	require.Error(t, err)
	assert.Equal(t, "opencode has no trap-sandbox MCP server for "+dir+
		" (it read opencode.json before the gateway wrote it, or runs on another host): restart opencode on the gateway's host", err.Error())
	var he *hostError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "opencode has no trap-sandbox MCP server for this computer: its operator must restart opencode on the gateway's host", he.player)
}

// TestTheEventStreamOpensAfterARequestOpencodeNeverAnswered: opencode 1.18.33 accepts
// connections while it starts and never answers a request that came then. The stream's
// attempt that came then is given up and the next one opens, so questions work again once
// opencode is up (before, the stream stayed down until the gateway restarted).
func TestTheEventStreamOpensAfterARequestOpencodeNeverAnswered(t *testing.T) {
	oc := opencodefake.New(opencodefake.Options{Password: "pw"})
	oc.Agent(func(*opencodefake.Turn) {}, "p/m")
	oc.Stall() // opencode is starting
	firstOpen := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(firstOpen) })
		oc.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(oc.Close)
	base, err := url.Parse(srv.URL)
	require.NoError(t, err)
	s := newStream(&client{base: base, dir: t.TempDir(), username: opencodefake.DefaultUsername, password: "pw", http: http.DefaultClient},
		slog.New(slog.DiscardHandler))
	s.openGrace = 50 * time.Millisecond // a wait for a frame that never comes; the test waits on events

	ctx := runStream(t, s)
	<-firstOpen // the stream's first attempt came while opencode was starting
	oc.Unstall()
	for {
		err := s.waitReady(ctx, time.Minute)
		if err == nil {
			break
		}
		require.NoError(t, ctx.Err(), "the stream never opened: %v", err)
		assert.Contains(t, err.Error(), "opencode's event stream did not open within 50ms (is opencode still starting?)")
	}
}

// TestAnUnansweredRequestNamesNoHostPath: a request opencode did not answer is said without
// its URL, whose ?directory= is the host's path (a computer reads such an error when
// opencode's probe passes).
func TestAnUnansweredRequestNamesNoHostPath(t *testing.T) {
	base, err := url.Parse(opencodefake.ClosedPortURL(t))
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "computers", "alice", "7_3akitchen")
	c := &client{base: base, dir: dir, http: http.DefaultClient}
	err = c.call(t.Context(), http.MethodGet, "/mcp", nil, nil, nil)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "7_3akitchen", "the host's directory")
	assert.Contains(t, err.Error(), "opencode did not answer GET /mcp: dial tcp")
	_, err = c.openEvents(t.Context())
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "7_3akitchen", "the host's directory")
	assert.Contains(t, err.Error(), "opencode did not answer GET /global/event: dial tcp")
}

// TestAnOpenEventStreamThatGoesSilentIsReopened: past the heartbeat grace without a line
// the open stream is called dead, and said so (not "did not open").
func TestAnOpenEventStreamThatGoesSilentIsReopened(t *testing.T) {
	opens := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"payload\":{\"type\":\"server.connected\",\"properties\":{}}}\n\n"))
		w.(http.Flusher).Flush()
		opens <- struct{}{}
		<-r.Context().Done() // then nothing, not even a heartbeat
	}))
	t.Cleanup(srv.Close)
	base, err := url.Parse(srv.URL)
	require.NoError(t, err)
	s := newStream(&client{base: base, http: http.DefaultClient}, slog.New(slog.DiscardHandler))
	s.heartbeatGrace = 50 * time.Millisecond
	runStream(t, s)
	<-opens
	<-opens // reopened after it went silent
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Error(t, s.lastErr)
	assert.Equal(t, "opencode's event stream went silent", s.lastErr.Error())
}

// TestAQuestionIsNotAnsweredByAnAttemptBegunBeforeIt: a question that came while an attempt
// to open the stream was under way got that attempt's failure, though opencode was up by
// then (TestAgentStartOrder failed so on a loaded machine: the attempt had found opencode
// down a moment before it started). It waits for an attempt begun after it.
func TestAQuestionIsNotAnsweredByAnAttemptBegunBeforeIt(t *testing.T) {
	first, fail := make(chan struct{}), make(chan struct{})
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if attempts.Add(1) == 1 {
			close(first)
			<-fail // the attempt under way when the question comes fails after it
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"payload\":{\"type\":\"server.connected\",\"properties\":{}}}\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	base, err := url.Parse(srv.URL)
	require.NoError(t, err)
	s := newStream(&client{base: base, http: http.DefaultClient}, slog.New(slog.DiscardHandler))
	ctx := runStream(t, s)
	<-first
	answer := make(chan error, 1)
	go func() { answer <- s.waitReady(ctx, time.Minute) }()
	for len(s.kick) == 0 { // the question has come: it asked for an attempt now
		runtime.Gosched()
	}
	close(fail)
	require.NoError(t, <-answer)
	assert.Equal(t, int32(2), attempts.Load())
}

// runStream runs s until the test ends, within a minute (the bound of a failure, not a wait),
// and returns the context it runs in.
func runStream(t *testing.T, s *stream) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return ctx
}
