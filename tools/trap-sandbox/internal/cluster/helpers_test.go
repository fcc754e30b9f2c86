package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"trap-sandbox/internal/clock"
	hostcomputer "trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/opencode"
	"trap-sandbox/internal/opencodehealth"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/screen"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitLimit bounds every wait in these tests; nothing should come near it.
const waitLimit = 10 * time.Second

// testingT is what a helper called inside a require.EventuallyWithT condition needs: the
// test's *testing.T or the condition's *assert.CollectT.
type testingT interface {
	require.TestingT
	Helper()
}

// Test intervals: heartbeats flow often, and a replica only dies when a test moves the clock
// past testReplicaTTL, so no test depends on how fast the machine is.
const (
	testHeartbeat  = 50 * time.Millisecond
	testReplicaTTL = time.Hour
	// testReconnectWait: a test that stops NATS waits for the reconnection (an event), not a
	// second's pause per attempt.
	testReconnectWait = 20 * time.Millisecond
)

// okProber reports opencode healthy.
type okProber struct{}

func (okProber) Probe(context.Context) opencode.Health { return opencode.Health{OK: true} }

// offsetClock is the replicas' shared liveness clock: real time plus an offset a test may grow.
// Its timers are real ones, so heartbeats keep flowing on their own.
type offsetClock struct{ offset atomic.Int64 }

var _ clock.Clock = (*offsetClock)(nil)

func (c *offsetClock) Now() time.Time                       { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *offsetClock) NewTimer(d time.Duration) clock.Timer { return clock.Real{}.NewTimer(d) }
func (c *offsetClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return clock.Real{}.AfterFunc(d, f)
}
func (c *offsetClock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// testCluster is one embedded NATS server (JetStream on, a temporary store, a free port) and
// the gateway replicas a test starts on it.
type testCluster struct {
	t     testing.TB
	ns    *natsserver.Server
	opts  *natsserver.Options
	clock *offsetClock
	logs  *testkit.SyncBuffer
	// maxBusAnswers is the MaxBusAnswers of the routers started from here (zero: the default).
	maxBusAnswers int
	// routerClock, when set, is the Clock of the routers started from here instead of the
	// shared liveness clock, whose timers are real: a fake one, which a test moves to end a
	// NATS operation that nobody answers (OpTimeout) rather than waiting it out.
	routerClock clock.Clock
	// modules registers modules of the test's on each replica's gateway (nil: none).
	modules func(gw *gateway.Gateway)
	// probes counts crash's probes, each under a name of its own.
	probes int
}

func newTestCluster(t testing.TB) *testCluster {
	t.Helper()
	opts := &natsserver.Options{Host: "127.0.0.1", Port: natsserver.RANDOM_PORT, JetStream: true,
		StoreDir: t.TempDir(), NoLog: true, NoSigs: true}
	tc := &testCluster{t: t, opts: opts, clock: &offsetClock{}, logs: &testkit.SyncBuffer{}}
	tc.startNATS()
	t.Cleanup(func() {
		tc.stopNATS()
		if t.Failed() {
			t.Logf("logs:\n%s", tc.logs.String())
		}
	})
	return tc
}

func (tc *testCluster) startNATS() {
	tc.t.Helper()
	ns, err := natsserver.NewServer(tc.opts)
	require.NoError(tc.t, err)
	go ns.Start()
	require.True(tc.t, ns.ReadyForConnections(waitLimit), "the embedded NATS server did not start")
	tc.ns = ns
	// Keep the port for a restart (RANDOM_PORT would pick another).
	tc.opts.Port = ns.Addr().(*net.TCPAddr).Port
}

func (tc *testCluster) stopNATS() {
	if tc.ns != nil {
		tc.ns.Shutdown()
		tc.ns.WaitForShutdown()
		tc.ns = nil
	}
}

// restartNATSWithoutItsStoreHolding is restartNATSWithoutItsStore while held stops replica a's
// reconnection at a test hook: it returns once a is held there and b has reconnected.
func (tc *testCluster) restartNATSWithoutItsStoreHolding(held *gate, a, b *replica) {
	tc.t.Helper()
	tc.restartNATSWithoutItsStore(a, b)
	<-held.reached
	require.Eventually(tc.t, func() bool { return b.nc.IsConnected() }, waitLimit, testkit.Poll, "B to reconnect")
}

// restartNATSWithoutItsStore stops NATS, waits until each of replicas has noticed, and starts
// it again on the same port with an empty store: NATS restarted without its -sd (a container
// without its volume), which has lost every bucket.
func (tc *testCluster) restartNATSWithoutItsStore(replicas ...*replica) {
	tc.t.Helper()
	tc.stopNATS()
	require.Eventually(tc.t, func() bool {
		for _, r := range replicas {
			if r.nc.IsConnected() {
				return false
			}
		}
		return true
	}, waitLimit, testkit.Poll, "the replicas to notice NATS is gone")
	tc.opts.StoreDir = tc.t.TempDir()
	tc.startNATS()
}

func (tc *testCluster) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", tc.opts.Port) }

// jetStream is a client of the test's own on tc's server, as a replica's peer or NATS itself
// would act; closed when the test ends.
func (tc *testCluster) jetStream(t testing.TB) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(tc.url())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return nc, js
}

// replica is one gateway with its router behind a real HTTP server on loopback.
type replica struct {
	name   string
	gw     *gateway.Gateway
	router *Router
	nc     *nats.Conn
	srv    *httptest.Server
	// screens is the replica's screen module.
	screens *screen.Module
	once    sync.Once
}

func (tc *testCluster) startReplica(name string) *replica {
	return tc.startReplicaWith(name, gateway.Config{})
}

// startReplicaWith starts a replica whose gateway has cfg (with the test's hello timeout and
// close grace where cfg leaves them zero).
func (tc *testCluster) startReplicaWith(name string, cfg gateway.Config) *replica {
	return tc.startReplicaVia(name, cfg, tc.url())
}

// startCuttableReplica starts a replica whose gateway has cfg and that reaches NATS through a
// proxy the test can cut or freeze.
func (tc *testCluster) startCuttableReplica(name string, cfg gateway.Config) (*replica, *cuttableProxy) {
	tc.t.Helper()
	proxy := newCuttableProxy(tc.t, tc.ns.Addr().String())
	return tc.startReplicaVia(name, cfg, proxy.url()), proxy
}

// startReplicaVia starts a replica that reaches NATS at natsURL (a proxy, say).
func (tc *testCluster) startReplicaVia(name string, cfg gateway.Config, natsURL string) *replica {
	t := tc.t
	t.Helper()
	opened := tc.openRouter(name, natsURL, nil)
	require.NoError(t, opened.err)
	return tc.serveReplica(opened, cfg)
}

// startReplicaSettings starts a replica whose heartbeats say settings, its metrics on reg
// (nil: none).
func (tc *testCluster) startReplicaSettings(name string, settings Settings, reg prometheus.Registerer) *replica {
	t := tc.t
	t.Helper()
	opened := tc.openRouterWith(name, tc.url(), reg, settings)
	require.NoError(t, opened.err)
	return tc.serveReplica(opened, gateway.Config{})
}

// openedRouter is openRouter's outcome: a router named name, its connection and logger, or
// the error New gave.
type openedRouter struct {
	name   string
	router *Router
	nc     *nats.Conn
	logger *slog.Logger
	err    error
}

// openRouter connects to NATS at natsURL and sets up a router named name, its metrics on reg
// (nil: none), as a replica's start does. It requires nothing, so it may run in a goroutine of
// its own.
func (tc *testCluster) openRouter(name, natsURL string, reg prometheus.Registerer) openedRouter {
	return tc.openRouterWith(name, natsURL, reg, Settings{})
}

// openRouterWith is openRouter for a router whose heartbeats say settings.
func (tc *testCluster) openRouterWith(name, natsURL string, reg prometheus.Registerer, settings Settings) openedRouter {
	logger := slog.New(slog.NewTextHandler(tc.logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", name)
	nc, err := Connect(context.Background(), ConnOptions{URL: natsURL, Name: name, ReconnectWait: testReconnectWait}, logger)
	if err != nil {
		return openedRouter{name: name, err: err}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var clk clock.Clock = tc.clock
	if tc.routerClock != nil {
		clk = tc.routerClock
	}
	router, err := New(ctx, nc, Config{Replica: name, HeartbeatInterval: testHeartbeat, ReplicaTTL: testReplicaTTL,
		Clock: clk, Registerer: reg, Settings: settings, MaxBusAnswers: tc.maxBusAnswers}, logger)
	if err != nil {
		nc.Close()
		return openedRouter{name: name, err: err}
	}
	return openedRouter{name: name, router: router, nc: nc, logger: logger}
}

// serveReplica puts a gateway with cfg (with the test's hello timeout and close grace where
// cfg leaves them zero) behind a real HTTP server on the router opened.
func (tc *testCluster) serveReplica(opened openedRouter, cfg gateway.Config) *replica {
	t := tc.t
	t.Helper()
	name, router, nc, logger := opened.name, opened.router, opened.nc, opened.logger
	cfg.Replica = name
	if cfg.HelloTimeout == 0 {
		cfg.HelloTimeout = waitLimit
	}
	if cfg.CloseGrace == 0 {
		cfg.CloseGrace = 200 * time.Millisecond
	}
	gw := gateway.New(cfg, logger, router)
	opencodehealth.New(okProber{}, nil).Register(gw)
	if tc.modules != nil {
		tc.modules(gw)
	}
	// The host API and the live screen, wired as the CLI wires them.
	computers := hostcomputer.New(hostapi.NewGateway(gw))
	screens := screen.New(computers)
	screens.OnReplica(name, router.Peer("screen", screens.Relayed))
	screens.Register(gw)
	r := &replica{name: name, gw: gw, router: router, nc: nc, screens: screens,
		srv: httptest.NewServer(server.New(logger, server.Config{Accounts: cfg.Accounts}, gw, hostapi.New(computers), screens).Handler())}
	t.Cleanup(r.stop)
	return r
}

// stop shuts the replica down as SIGTERM does: sockets closed with 1001, claims withdrawn.
func (r *replica) stop() {
	r.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_ = r.gw.Shutdown(ctx)
		r.srv.Close()
		r.router.Close()
	})
}

// kill ends the replica as a crash does, as far as the others can tell: its NATS connection
// drops without a word (no claim withdrawn, no heartbeat deleted), then the rest is cleaned up.
func (r *replica) kill() {
	r.once.Do(func() {
		r.nc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_ = r.gw.Shutdown(ctx)
		r.srv.Close()
		r.router.Close()
	})
}

// crash kills r (kill) and returns once each of others has applied every heartbeat r wrote, so
// that a clock moved next finds r silent there. A heartbeat of r still on its way to another's
// watcher, applied after the jump, counted as heard after it and kept r alive there for one
// more TTL: the test waiting for r's silence failed (seen under load). r's heartbeats are held
// while its connection closes, so that none is written after the probe: the goodbye of a
// replica that never ran, which each watcher applies after them (in revision order).
func (tc *testCluster) crash(r *replica, others ...*replica) {
	t := tc.t
	t.Helper()
	release := holdBeats(t, r.router) // returns once a heartbeat being written is in the bucket
	r.nc.Close()                      // as kill does first; without NATS r writes nothing more
	release()                         // kill's goodbye waits for the heartbeat lock
	r.kill()
	tc.probes++
	probe := fmt.Sprintf("probe-%d", tc.probes)
	require.NoError(t, others[0].router.replicas.Delete(t.Context(), escapeToken(probe)))
	for _, o := range others {
		require.Eventually(t, func() bool {
			o.router.mu.Lock()
			defer o.router.mu.Unlock()
			return o.router.stopped[probe]
		}, waitLimit, testkit.Poll, "replica %s to apply every heartbeat of %s", o.name, r.name)
	}
}

// client is an HTTP client that keeps no idle connections (goleak).
func client() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * waitLimit}
}

// computers lists the computers through r's HTTP API as "traposId@replica", sorted.
func (r *replica) computers(t testingT) []string {
	t.Helper()
	list := r.computerList(t)
	out := make([]string, 0, len(list))
	for _, c := range list {
		out = append(out, c.TraposID+"@"+c.Replica)
	}
	sort.Strings(out)
	return out
}

// computerList is GET /trapos/computers on r.
func (r *replica) computerList(t testingT) []gateway.Computer {
	t.Helper()
	resp, err := client().Get(r.srv.URL + hostapi.ComputersPath)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var list []gateway.Computer
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	return list
}

// waitComputers waits until r lists exactly want (sorted "traposId@replica").
func (r *replica) waitComputers(t testing.TB, want ...string) {
	t.Helper()
	sort.Strings(want)
	if want == nil {
		want = []string{}
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, want, r.computers(c))
	}, waitLimit, testkit.Poll, "replica %s to list %v", r.name, want)
}

// apiResult is the outcome of one POST …/requests.
type apiResult struct {
	status int
	body   server.Answer
	took   time.Duration
}

// request sends one host request through r's HTTP API, in a goroutine; the outcome arrives on
// the channel.
func (r *replica) request(traposID, typ string, payload any, timeout time.Duration) <-chan apiResult {
	ch := make(chan apiResult, 1)
	body, _ := json.Marshal(map[string]any{"type": typ, "payload": payload, "timeoutMs": timeout.Milliseconds()})
	go func() {
		start := time.Now()
		resp, err := client().Post(r.srv.URL+"/trapos/computers/"+url.PathEscape(traposID)+"/requests",
			"application/json", bytes.NewReader(body))
		if err != nil {
			ch <- apiResult{status: -1, body: server.Answer{Error: &protocol.Error{Message: err.Error()}}}
			return
		}
		defer resp.Body.Close()
		var out server.Answer
		_ = json.NewDecoder(resp.Body).Decode(&out)
		ch <- apiResult{status: resp.StatusCode, body: out, took: time.Since(start)}
	}()
	return ch
}

func await(t testing.TB, ch <-chan apiResult) apiResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(2 * waitLimit):
		t.Fatal("the request did not finish")
		return apiResult{}
	}
}

// testClientVersion is the clientVersion the test computers' hello names.
const testClientVersion = "9.9.9-test"

// computer is the test's side of one socket, speaking the protocol by hand as CC would.
type computer struct {
	t    testing.TB
	conn *websocket.Conn
	id   string
}

// connect dials r and completes a hello as traposID.
func (r *replica) connect(t testing.TB, traposID string) *computer {
	t.Helper()
	c := r.dial(t, traposID)
	resp := c.hello()
	require.True(t, resp.OK, "hello failed: %+v", resp.Error)
	return c
}

func (r *replica) dial(t testing.TB, traposID string) *computer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, "ws"+strings.TrimPrefix(r.srv.URL, "http")+gateway.WebSocketPath, nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = conn.Close() })
	return &computer{t: t, conn: conn, id: traposID}
}

// dialRefused opens a socket on r that the test expects to be refused at the upgrade (what
// names it), and returns the refusal's status and body.
func (r *replica) dialRefused(t testing.TB, what string) (status int, body string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, "ws"+strings.TrimPrefix(r.srv.URL, "http")+gateway.WebSocketPath, nil)
	if conn != nil {
		_ = conn.Close()
	}
	require.Error(t, err, what)
	require.NotNil(t, resp)
	data, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, string(data)
}

func (c *computer) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	require.NoError(c.t, err)
	require.NoError(c.t, c.conn.SetWriteDeadline(time.Now().Add(waitLimit)))
	require.NoError(c.t, c.conn.WriteMessage(websocket.TextMessage, b))
}

func (c *computer) sendHello() {
	c.t.Helper()
	c.send(map[string]any{"event": "computer_request", "traposSenderId": c.id, "messageId": "hello-1",
		"type": gateway.TypeHello, "payload": map[string]any{"traposId": c.id, "secret": "", "clientVersion": testClientVersion}})
}

func (c *computer) hello() protocol.Frame {
	c.t.Helper()
	c.sendHello()
	resp := c.read()
	require.Equal(c.t, "hello-1", resp.MessageID)
	return resp
}

func (c *computer) read() protocol.Frame {
	c.t.Helper()
	require.NoError(c.t, c.conn.SetReadDeadline(time.Now().Add(waitLimit)))
	_, data, err := c.conn.ReadMessage()
	require.NoError(c.t, err)
	f, err := protocol.DecodeFrame(data)
	require.NoError(c.t, err, "frame: %s", data)
	return f
}

// answerNext reads the next gateway_request, checks its type, and answers ok with payload.
func (c *computer) answerNext(typ string, payload any) protocol.Frame {
	c.t.Helper()
	return c.answer(c.read(), typ, payload)
}

// answerRequest is answerNext for the host request pending (replica.request): when nothing
// reaches the computer in time, the failure says whether that request had ended already, and
// with what answer (a routing refusal), or still waits (a request lost on the way).
func (c *computer) answerRequest(pending <-chan apiResult, typ string, payload any) protocol.Frame {
	c.t.Helper()
	require.NoError(c.t, c.conn.SetReadDeadline(time.Now().Add(waitLimit)))
	_, data, err := c.conn.ReadMessage()
	if err != nil {
		select {
		case res := <-pending:
			c.t.Fatalf("%s: no %s reached the computer (%v); the host request had ended: status %d, error %+v, after %s",
				c.id, typ, err, res.status, res.body.Error, res.took)
		default:
			c.t.Fatalf("%s: no %s reached the computer (%v), and the host request still waits", c.id, typ, err)
		}
	}
	req, err := protocol.DecodeFrame(data)
	require.NoError(c.t, err, "frame: %s", data)
	return c.answer(req, typ, payload)
}

// answer checks that req is a gateway_request of type typ and answers it ok with payload.
func (c *computer) answer(req protocol.Frame, typ string, payload any) protocol.Frame {
	c.t.Helper()
	require.Equal(c.t, protocol.EventGatewayRequest, req.Event)
	require.Equal(c.t, typ, req.Type)
	c.send(map[string]any{"event": "computer_response", "traposSenderId": c.id, "messageId": req.MessageID,
		"type": req.Type, "ok": true, "payload": payload})
	return req
}

// firstEvent reads the socket's first frame: hello's answer (ok reports whether it was ok),
// or the close that came instead (code).
func (c *computer) firstEvent() (ok bool, code int) {
	c.t.Helper()
	require.NoError(c.t, c.conn.SetReadDeadline(time.Now().Add(waitLimit)))
	_, data, err := c.conn.ReadMessage()
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return false, ce.Code
	}
	require.NoError(c.t, err)
	f, err := protocol.DecodeFrame(data)
	require.NoError(c.t, err)
	require.Equal(c.t, "hello-1", f.MessageID)
	return f.OK, 0
}

// closeCode reads until the socket closes and returns the close code and reason.
func (c *computer) closeCode() (int, string) {
	c.t.Helper()
	for {
		require.NoError(c.t, c.conn.SetReadDeadline(time.Now().Add(waitLimit)))
		_, _, err := c.conn.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		require.True(c.t, errors.As(err, &ce), "expected a close frame, got %v", err)
		return ce.Code, ce.Text
	}
}

// holdBeats holds r's heartbeat ticks and its heartbeat lock: r writes no heartbeat, does none
// of a tick's work (the sweep, doubts settled, claims retried, holders watched), and its goodbye
// waits, until the test calls release (once or more), or until the test ends, before the
// cleanup's stop. It returns once a tick at work has done (holding beatMu alone let a tick begun
// before go on with its work after its heartbeat).
func holdBeats(t testing.TB, r *Router) (release func()) {
	r.tickMu.Lock()
	r.beatMu.Lock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			r.beatMu.Unlock()
			r.tickMu.Unlock()
		})
	}
	t.Cleanup(release)
	return release
}

// waitOwnBeatBack waits until r's own heartbeat has come back through its watcher: from then on
// a heartbeat of another instance under its name is a twin's (twin.go). The bucket keeps one
// revision a key, so a watcher that had not been sent r's first heartbeat when another replaced
// it never sees it; a test that holds r's heartbeats waits here before the other is written.
func waitOwnBeatBack(t testing.TB, r *Router) {
	t.Helper()
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.seenOwnBeat
	}, waitLimit, testkit.Poll, "replica %s's own heartbeat back through its watcher", r.cfg.Replica)
}

// gate holds the first goroutine that passes it, a replica at a test hook, until the test
// opens it: the replica stopped at one moment of its work while the test acts. Register its
// open as a cleanup after the replicas start, so that it opens before they stop.
type gate struct {
	reached, release chan struct{} // reached is closed when the first pass arrives
	passing, opening sync.Once
}

func newGate() *gate { return &gate{reached: make(chan struct{}), release: make(chan struct{})} }

// pass waits, the first time, until the gate opens; later passes go through.
func (g *gate) pass() { g.passing.Do(func() { close(g.reached); <-g.release }) }

// open lets the held pass go on; it may be called more than once.
func (g *gate) open() { g.opening.Do(func() { close(g.release) }) }

// waitClaim waits until the bucket kv holds a claim of traposID (local account) in replica's
// name, what a replica routes by when its watcher has not delivered the claim yet (holder), and
// returns its revision.
func waitClaim(t testing.TB, kv jetstream.KeyValue, traposID, replica string) (rev uint64) {
	t.Helper()
	key := claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: traposID})
	require.Eventually(t, func() bool {
		e, err := kv.Get(t.Context(), key)
		if err != nil || claimantOf(e) != replica {
			return false
		}
		rev = e.Revision()
		return true
	}, waitLimit, testkit.Poll, "a claim of %s by %s in the bucket", traposID, replica)
	return rev
}
