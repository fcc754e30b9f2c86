package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// Fixtures of the gateway_request tests.
const (
	// requestTraposID is the booted computer's traposId: id 7 labelled north.
	requestTraposID = "7:north"
	// markerIdle tells the test the computer has connected and now just waits.
	markerIdle = "e2e: idle"
	// idleProgram connects (through `sandbox health`) and then keeps the computer, and so its
	// daemon, running until the test stops it.
	idleProgram = `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
print("` + markerIdle + `")
while true do sleep(1) end
`
)

// apiAnswer is the body of POST /trapos/computers/{traposId}/requests.
type apiAnswer struct {
	OK      bool           `json:"ok"`
	Payload map[string]any `json:"payload"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestGatewayRequestReachesBootedComputer: the host HTTP API sends gateway_requests to a
// booted computer; its daemon answers ping with its traposId and refuses unknown types.
func TestGatewayRequestReachesBootedComputer(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 7, "north"
	opts.Files = map[string]string{"/e2e.lua": idleProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerIdle)

	status, got := postRequest(ctx, t, g, requestTraposID, `{"type":"ping","payload":{},"timeoutMs":5000}`)
	require.Equal(t, http.StatusOK, status)
	assert.True(t, got.OK, "%+v", got)
	assert.Nil(t, got.Error)
	assert.Equal(t, map[string]any{"traposId": requestTraposID}, got.Payload)

	status, got = postRequest(ctx, t, g, requestTraposID, `{"type":"no_such_type","timeoutMs":5000}`)
	require.Equal(t, http.StatusOK, status, "the computer's own refusal is an answer")
	assert.False(t, got.OK)
	require.NotNil(t, got.Error)
	assert.Equal(t, "unknown_type", got.Error.Code)
	assert.Equal(t, "this computer does not handle requests of type no_such_type: no program on it serves that type now"+
		" (start the program that serves it with libsandbox.serve)", got.Error.Message)

	// The same computer under another label is not connected.
	status, got = postRequest(ctx, t, g, "7:south", `{"type":"ping","timeoutMs":5000}`)
	assert.Equal(t, http.StatusNotFound, status)
	assert.False(t, got.OK)
	require.NotNil(t, got.Error)
	assert.Equal(t, "not_connected", got.Error.Code)
}

// postRequest POSTs body to the requests endpoint of traposID and decodes the answer.
func postRequest(ctx context.Context, t *testing.T, g *harness.Gateway, traposID, body string) (int, apiAnswer) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		g.URL("/trapos/computers/"+url.PathEscape(traposID)+"/requests"), bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var got apiAnswer
	require.NoError(t, json.Unmarshal(raw, &got), "status %d body %s", resp.StatusCode, raw)
	return resp.StatusCode, got
}
