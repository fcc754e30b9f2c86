package scaleout

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
	"trap-sandbox/testkit/daemonfake"

	"tests/internal/harness"
)

// waitLimit bounds each wait; only a broken setup comes near it.
const waitLimit = 30 * time.Second

// testingT is what a helper called inside a require.EventuallyWithT condition needs: the
// test's *testing.T or the condition's *assert.CollectT.
type testingT interface {
	require.TestingT
	Helper()
}

// Short liveness intervals, so that a killed replica drops out quickly; waits poll for the
// outcome instead of counting on them.
var replicaFlags = []string{"--nats-heartbeat", "200ms", "--nats-replica-ttl", "2s"}

func startReplica(t *testing.T, nats *harness.NATS, name string) *harness.Gateway {
	t.Helper()
	return harness.Start(t, gatewayBin, harness.Options{
		Args: append([]string{"--nats", nats.URL, "--replica", name}, replicaFlags...),
	})
}

// computerEntry is one entry of GET /trapos/computers.
type computerEntry struct {
	TraposID string `json:"traposId"`
	Replica  string `json:"replica"`
}

func listComputers(t testingT, g *harness.Gateway) map[string]string {
	t.Helper()
	resp, err := harness.HTTPClient().Get(g.URL("/trapos/computers"))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var list []computerEntry
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	out := map[string]string{}
	for _, c := range list {
		out[c.TraposID] = c.Replica
	}
	return out
}

func get(t testingT, g *harness.Gateway, path string) (int, string) {
	t.Helper()
	resp, err := harness.HTTPClient().Get(g.URL(path))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// ping sends a ping through g's HTTP API and returns the status and error code (if any).
func ping(t *testing.T, g *harness.Gateway, traposID string, timeout time.Duration) (int, string) {
	t.Helper()
	status, code, err := tryPing(g, traposID, timeout)
	require.NoError(t, err)
	return status, code
}

// tryPing is ping for a goroutine other than the test's.
func tryPing(g *harness.Gateway, traposID string, timeout time.Duration) (int, string, error) {
	body := strings.NewReader(`{"type":"ping","timeoutMs":` + jsonInt(timeout.Milliseconds()) + `}`)
	resp, err := harness.HTTPClient().Post(g.URL("/trapos/computers/"+traposID+"/requests"), "application/json", body)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var out struct {
		Error *harness.Error `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return resp.StatusCode, "", err
	}
	if out.Error != nil {
		return resp.StatusCode, out.Error.Code, nil
	}
	return resp.StatusCode, "", nil
}

// pingError sends a ping through g's HTTP API and returns the gateway's error message.
func pingError(t *testing.T, g *harness.Gateway, traposID string) string {
	t.Helper()
	resp, err := harness.HTTPClient().Post(g.URL("/trapos/computers/"+traposID+"/requests"), "application/json", strings.NewReader(`{"type":"ping"}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Error *harness.Error `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.NotNil(t, out.Error, "status %d", resp.StatusCode)
	return out.Error.Message
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestReplicasShareComputersOverARealNATSServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	a, b := startReplica(t, nats, "a"), startReplica(t, nats, "b")
	// This nats-server asks for no credentials: each replica says so at start.
	assert.Contains(t, a.Log(), `level=WARN msg="the NATS server asks for no credentials: any client that reaches it can answer requests for the computers`)

	// A daemon on A, with files the host may read.
	d := &harness.Daemon{Daemon: daemonfake.Daemon{ID: 4, Label: "vault", AllowFiles: harness.AllowFilesRead}}
	d.PutFile("/notes.txt", []byte("diamonds at -12 64 300\n"))
	stop, err := d.Serve(ctx, a.WebSocketURL(), "")
	require.NoError(t, err)
	defer stop()

	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, "a", listComputers(c, b)["4:vault"]) }, waitLimit, testkit.Poll, "B to list A's computer")

	// B's HTTP API reaches it.
	status, code := ping(t, b, "4:vault", 10*time.Second)
	assert.Equal(t, http.StatusOK, status, code)

	// B's CLI lists it with its replica.
	out, err := exec.CommandContext(ctx, gatewayBin, "computers", "--url", "http://"+b.Addr).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "REPLICA")
	assert.Regexp(t, `4:vault\s.*\sa\n`, string(out))

	// A computer connected nowhere is named by B as by a single gateway, on each surface once,
	// and the computer meant is found among A's.
	const notConnected = "computer 6:gone is not connected; trap-sandbox computers lists the connected ones (MCP: list_computers; HTTP: GET /trapos/computers)"
	assert.Equal(t, notConnected, pingError(t, b, "6:gone"))
	assert.Equal(t, `computer 4 is not connected; did you mean "4:vault"?`, pingError(t, b, "4"))
	out, err = exec.CommandContext(ctx, gatewayBin, "ping", "--url", "http://"+b.Addr, "6:gone").CombinedOutput()
	require.Error(t, err)
	assert.Equal(t, "trap-sandbox: computer 6:gone ping: the gateway answered not_connected: the computer "+strings.TrimPrefix(notConnected, "computer 6:gone ")+"\n", string(out))

	// B's MCP lists it with its replica and reads its file.
	s := harness.ConnectMCP(ctx, t, b, "")
	res := harness.CallTool(ctx, t, s, "list_computers", nil)
	require.False(t, res.IsError)
	listed, _ := json.Marshal(res.StructuredContent)
	assert.Contains(t, string(listed), `"traposId":"4:vault"`)
	assert.Contains(t, string(listed), `"replica":"a"`)
	assert.Equal(t, "not_connected: computer 6:gone is not connected (if it is rebooting, it is back within seconds: ping with wait true waits for it); "+
		"trap-sandbox computers lists the connected ones (MCP: list_computers; HTTP: GET /trapos/computers)",
		harness.ToolError(t, harness.CallTool(ctx, t, s, "ping", map[string]any{"traposId": "6:gone"}), "not_connected"), "as the CLI words it, with MCP's wait")
	res = harness.CallTool(ctx, t, s, "read_file", map[string]any{"traposId": "4:vault", "path": "/notes.txt"})
	require.False(t, res.IsError, "%+v", res.Content)
	var read struct {
		Content string `json:"content"`
	}
	harness.ToolOK(t, res, "4:vault", &read)
	assert.Contains(t, read.Content, "diamonds at -12 64 300")

	// The computer says hello on B: A closes its older socket with 4009.
	old, err := harness.Dial(ctx, a.WebSocketURL(), "9:twin")
	require.NoError(t, err)
	defer old.Close()
	require.NoError(t, old.MustHello(ctx, ""))
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, "a", listComputers(c, b)["9:twin"]) }, waitLimit, testkit.Poll, "B to list 9:twin on A")
	fresh, err := harness.Dial(ctx, b.WebSocketURL(), "9:twin")
	require.NoError(t, err)
	defer fresh.Close()
	require.NoError(t, fresh.MustHello(ctx, ""))
	readCtx, cancelRead := context.WithTimeout(ctx, waitLimit)
	ce, err := old.ExpectClose(readCtx)
	cancelRead()
	require.NoError(t, err)
	assert.Equal(t, harness.CloseReplaced, ce.Code)
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, "b", listComputers(c, a)["9:twin"]) }, waitLimit, testkit.Poll, "A to list 9:twin on B")

	// /healthz says NATS is connected.
	status, body := get(t, b, "/healthz")
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "nats: connected (replica b")

	// A crashes with a request from B waiting on one of its computers, which never answers:
	// the request fails at once, not at its timeout.
	silent, err := harness.Dial(ctx, a.WebSocketURL(), "5:silent")
	require.NoError(t, err)
	defer silent.Close()
	require.NoError(t, silent.MustHello(ctx, ""))
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, "a", listComputers(c, b)["5:silent"]) }, waitLimit, testkit.Poll, "B to list 5:silent on A")
	type result struct {
		status int
		code   string
		err    error
	}
	const pendingTimeout = time.Minute // the most a request may ask for
	pending := make(chan result, 1)
	go func() {
		status, code, err := tryPing(b, "5:silent", pendingTimeout)
		pending <- result{status, code, err}
	}()
	readCtx, cancelRead = context.WithTimeout(ctx, waitLimit)
	req, err := silent.Next(readCtx) // the request reached the computer on A
	cancelRead()
	require.NoError(t, err)
	require.Equal(t, harness.EventGatewayRequest, req.Event)

	// A crashes: the waiting request fails (B finds at its next heartbeat tick that nobody
	// answers for A on NATS any more), its computers drop out of B's list within the TTL, and
	// asking for one is not_connected at once.
	require.NoError(t, a.Kill())
	killed := time.Now()
	var r result
	select {
	case r = <-pending:
	case <-time.After(waitLimit):
		t.Fatalf("the request waiting on the killed replica did not fail within %s (its timeout: %s)", waitLimit, pendingTimeout)
	}
	require.NoError(t, r.err)
	assert.Equal(t, http.StatusNotFound, r.status)
	assert.Equal(t, "not_connected", r.code)
	t.Logf("the request waiting on the killed replica failed %s after the kill (--nats-heartbeat %s)", time.Since(killed).Round(time.Millisecond), replicaFlags[1])
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.NotContains(c, listComputers(c, b), "4:vault")
	}, waitLimit, testkit.Poll, "B to drop A's computer")
	status, code = ping(t, b, "4:vault", time.Minute)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "not_connected", code)
	assert.Equal(t, "b", listComputers(t, b)["9:twin"])

	// NATS goes: B keeps serving its own computer and says so.
	require.NoError(t, nats.Stop())
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, body := get(c, b, "/healthz")
		assert.Contains(c, body, "nats: disconnected")
	}, waitLimit, testkit.Poll, "B to notice NATS is gone")
	answered := make(chan error, 1)
	go func() {
		answerCtx, cancel := context.WithTimeout(ctx, waitLimit)
		defer cancel()
		answered <- fresh.Answer(answerCtx, func(f harness.Frame) *harness.Reply {
			return &harness.Reply{Payload: map[string]any{"traposId": "9:twin"}}
		})
	}()
	status, code = ping(t, b, "9:twin", 10*time.Second)
	assert.Equal(t, http.StatusOK, status, code)
	_ = fresh.Close()
	<-answered
}
