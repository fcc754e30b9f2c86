package scaleout

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// TestAnInputWithAGatewayPassStopsWhenTheReplicaThatGrantedItEndsIt: computer 7:kitchen asked
// the agent through replica a, which granted its pass (tsp_…, kept in a's memory alone), and
// then reconnected to replica b. The agent's send_text of three parts through a, with that
// pass, is typed on b, the holder. While the computer holds its answer to the first part, a
// ends the pass (its agent state released to make room for another computer's, as
// --ai-max-computers 1 has it): b asks a before the second part, a answers that the pass
// opens nothing, and the input stops there with the answer of a gateway alone. Before, b typed
// all three parts: only a knows the pass, and it was checked as the input began.
func TestAnInputWithAGatewayPassStopsWhenTheReplicaThatGrantedItEndsIt(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	const model, ocPassword = "fake/m", "oc-secret"
	oc := opencodefake.Start(t, opencodefake.Options{Password: ocPassword})
	oc.Agent(func(turn *opencodefake.Turn) { turn.Text("ok") }, model)
	nats := harness.StartNATS(t, natsBin)
	aiDir := t.TempDir()
	a := harness.Start(t, gatewayBin, harness.Options{
		Args: append([]string{"--nats", nats.URL, "--replica", "a", "--opencode-url", oc.URL, "--ai-model", model, "--ai-dir", aiDir,
			"--ai-max-computers", "1"}, replicaFlags...),
		Env: []string{"OPENCODE_SERVER_PASSWORD=" + ocPassword},
	})
	b := startReplica(t, nats, "b")

	// 7:kitchen asks the agent on a: a grants its pass and writes it in its directory.
	onA, err := harness.Dial(ctx, a.WebSocketURL(), "7:kitchen")
	require.NoError(t, err)
	require.NoError(t, onA.MustHello(ctx, ""))
	ask(ctx, t, onA)
	pass := passOf(t, filepath.Join(aiDir, "computers", "local", "7_3akitchen"))
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		status, body := get(ct, a, "/trapos/ai/turns")
		assert.Equal(ct, http.StatusOK, status)
		assert.JSONEq(ct, "[]", body)
	}, waitLimit, testkit.Poll, "its turn to end")
	_ = onA.Close()

	// It reconnects to b.
	c, err := harness.Dial(ctx, b.WebSocketURL(), "7:kitchen")
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.MustHello(ctx, ""))
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.Equal(ct, "b", listComputers(ct, a)["7:kitchen"]) }, waitLimit, testkit.Poll, "a to list it on b")
	requests, stop := answerHoldingTheFirstInput(ctx, c)
	defer stop()

	agent := harness.ConnectMCP(ctx, t, a, pass)
	done := harness.CallToolAsync(ctx, agent, "send_text", map[string]any{"traposId": "7:kitchen", "text": strings.Repeat("a", 3*128)})
	var first harness.Frame
	select {
	case first = <-requests:
	case res := <-done:
		t.Fatalf("the input ended before its first part reached the computer: %v", harness.Texts(res))
	}

	// Another computer asks the agent on a, which has room for one: a releases 7:kitchen's
	// agent state, and its pass with it.
	shed, err := harness.Dial(ctx, a.WebSocketURL(), "8:shed")
	require.NoError(t, err)
	defer shed.Close()
	require.NoError(t, shed.MustHello(ctx, ""))
	ask(ctx, t, shed)
	status, body := getWithToken(ctx, t, a, pass)
	require.Equal(t, http.StatusUnauthorized, status, "a refuses the pass now: %s", body)

	require.NoError(t, c.WriteJSON(map[string]any{"event": harness.EventComputerResponse, "traposSenderId": c.TraposID,
		"messageId": first.MessageID, "type": first.Type, "ok": true, "payload": map[string]any{"queued": 128}}))
	var res []string
	select {
	case r := <-done:
		res = harness.Texts(r)
		assert.True(t, r.IsError, "%v", res)
	case <-ctx.Done():
		t.Fatal("the input never ended")
	}
	assert.Len(t, requests, 0, "no part after the pass ended")
	all := strings.Join(res, "\n")
	assert.Contains(t, all, "unauthorized: unknown gateway pass")
	assert.Contains(t, all, "the rest of the input was not sent")
}

// ask asks the agent "hello" from computer c and waits for the gateway to take the question.
func ask(ctx context.Context, t *testing.T, c *harness.Computer) {
	t.Helper()
	f, err := c.Request(ctx, "ai.ask", map[string]any{"prompt": "hello"})
	require.NoError(t, err)
	require.Nil(t, f.Error, "ai.ask: %+v", f.Error)
}

// passOf reads the gateway pass that the agent wrote in a computer's directory for opencode's
// MCP connection.
func passOf(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "opencode.json"))
	require.NoError(t, err)
	var cfg struct {
		MCP map[string]struct {
			Headers map[string]string `json:"headers"`
		} `json:"mcp"`
	}
	require.NoError(t, json.Unmarshal(data, &cfg))
	pass, ok := strings.CutPrefix(cfg.MCP["trap-sandbox"].Headers["Authorization"], "Bearer ")
	require.True(t, ok && strings.HasPrefix(pass, "tsp_"), "the directory's MCP entry carries the computer's pass")
	return pass
}
