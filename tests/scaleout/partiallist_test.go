package scaleout

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
	"trap-sandbox/testkit/daemonfake"

	"tests/internal/harness"
)

// partialListHeader is the header that says a list leaves computers out (docs/http-api.md).
const partialListHeader = "X-Trapos-Partial-List"

// TestAReplicaCutOffFromNATSSaysItsListIsPartial: a replica that cannot reach NATS lists only
// the computers it holds, and says so beside the list, on the HTTP API (a header: the body
// stays the array) and the CLI (a line on stderr), where it answered [] and "no computers
// connected" alone while another replica held 7:kitchen (played: docs/scale-out.md's row).
func TestAReplicaCutOffFromNATSSaysItsListIsPartial(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	a, b := startReplica(t, nats, "a"), startReplica(t, nats, "b")
	d := &harness.Daemon{Daemon: daemonfake.Daemon{ID: 7, Label: "kitchen"}}
	stop, err := d.Serve(ctx, b.WebSocketURL(), "")
	require.NoError(t, err)
	defer stop()
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, "b", listComputers(c, a)["7:kitchen"]) }, waitLimit, testkit.Poll, "A to list B's computer")

	// A whole list says nothing of it.
	header, body := listWithHeader(t, a)
	assert.Empty(t, header.Values(partialListHeader), body)

	require.NoError(t, nats.Stop())
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, body := get(c, a, "/healthz")
		assert.Contains(c, body, "nats: disconnected")
	}, waitLimit, testkit.Poll, "A to notice NATS is gone")
	// A lists B's computer no more from then on, though B's claim is younger than the replica
	// TTL (--nats-replica-ttl): A cannot reach it.
	assert.NotContains(t, listComputers(t, a), "7:kitchen")

	header, body = listWithHeader(t, a)
	var list []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(body), &list), "the body stays an array: %s", body)
	assert.Empty(t, list)
	assert.Equal(t, "replica a cannot reach NATS: only the computers it holds are listed; see /healthz", header.Get(partialListHeader))

	cmd := exec.CommandContext(ctx, gatewayBin, "computers", "--url", "http://"+a.Addr)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	assert.Empty(t, stdout.String())
	assert.Equal(t, "trap-sandbox: replica a cannot reach NATS: only the computers it holds are listed; see /healthz\nno computers connected\n", stderr.String())

	// MCP's list_computers says it first in its note, over /mcp and the stdio bridge alike.
	for name, s := range map[string]*sdk.ClientSession{"/mcp": harness.ConnectMCP(ctx, t, a, ""), "stdio": harness.ConnectMCPStdio(ctx, t, gatewayBin, a)} {
		res := harness.CallTool(ctx, t, s, "list_computers", nil)
		require.False(t, res.IsError, name)
		texts := harness.Texts(res)
		require.Len(t, texts, 2, name)
		assert.True(t, strings.HasPrefix(texts[1], "Replica a cannot reach NATS: only the computers it holds are listed; see /healthz. No computer"), "%s: %q", name, texts[1])
	}
}

// listWithHeader is GET /trapos/computers on g: the answer's header and body.
func listWithHeader(t *testing.T, g *harness.Gateway) (http.Header, string) {
	t.Helper()
	resp, err := harness.HTTPClient().Get(g.URL("/trapos/computers"))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var body strings.Builder
	_, err = io.Copy(&body, resp.Body)
	require.NoError(t, err)
	return resp.Header, body.String()
}
