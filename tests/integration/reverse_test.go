// Reverse-direction tests: the host HTTP API (docs/http-api.md) sends gateway_requests to a
// raw WebSocket computer through the real gateway binary.

package integration

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

	"tests/internal/harness"
)

// apiResult is the HTTP API's answer to POST /trapos/computers/{traposId}/requests: the
// computer_response's ok/payload/error, or the gateway's own error.
type apiResult struct {
	Status  int
	OK      bool            `json:"ok"`
	Payload json.RawMessage `json:"payload"`
	Error   *harness.Error  `json:"error"`
}

// postRequest calls the host HTTP API in the background; the result arrives on the channel.
func postRequest(ctx context.Context, t *testing.T, g *harness.Gateway, traposID string, body map[string]any) <-chan apiResult {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		g.URL("/trapos/computers/"+url.PathEscape(traposID)+"/requests"), bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	out := make(chan apiResult, 1)
	go func() {
		var r apiResult
		resp, err := harness.HTTPClient().Do(req)
		if err != nil {
			r.Status = -1
			r.Error = &harness.Error{Code: "http", Message: err.Error()}
			out <- r
			return
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(data, &r); err != nil {
			r.Error = &harness.Error{Code: "decode", Message: string(data)}
		}
		r.Status = resp.StatusCode
		out <- r
	}()
	return out
}

func await(ctx context.Context, t *testing.T, ch <-chan apiResult) apiResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		t.Fatal("no answer from the HTTP API")
		return apiResult{}
	}
}

func TestGatewayRequestPing(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := connect(ctx, t, g, "40:kitchen")

	result := postRequest(ctx, t, g, "40:kitchen", map[string]any{"type": "ping", "payload": map[string]any{}, "timeoutMs": 5000})
	f, err := c.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, harness.EventGatewayRequest, f.Event)
	assert.Equal(t, "40:kitchen", f.TraposReceiverID)
	assert.Equal(t, harness.TypePing, f.Type)
	require.NotEmpty(t, f.MessageID)
	require.NoError(t, c.WriteJSON(map[string]any{
		"event": harness.EventComputerResponse, "traposSenderId": "40:kitchen", "messageId": f.MessageID,
		"type": harness.TypePing, "ok": true, "payload": map[string]any{"traposId": "40:kitchen"},
	}))

	r := await(ctx, t, result)
	assert.Equal(t, http.StatusOK, r.Status)
	require.True(t, r.OK, "error %+v", r.Error)
	assert.JSONEq(t, `{"traposId":"40:kitchen"}`, string(r.Payload))
}

func TestGatewayRequestComputerError(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := connect(ctx, t, g, "41:")

	result := postRequest(ctx, t, g, "41:", map[string]any{"type": "dance", "timeoutMs": 5000})
	f, err := c.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, "dance", f.Type)
	require.NoError(t, c.WriteJSON(map[string]any{
		"event": harness.EventComputerResponse, "traposSenderId": "41:", "messageId": f.MessageID,
		"type": "dance", "ok": false, "error": map[string]any{"code": "unknown_type", "message": "no handler for dance"},
	}))
	r := await(ctx, t, result)
	assert.Equal(t, http.StatusOK, r.Status, "a computer's ok:false is still a 200")
	assert.False(t, r.OK)
	require.NotNil(t, r.Error)
	assert.Equal(t, "unknown_type", r.Error.Code)
}

func TestGatewayRequestNotConnected(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	r := await(ctx, t, postRequest(ctx, t, g, "99:nobody", map[string]any{"type": "ping", "timeoutMs": 5000}))
	assert.False(t, r.OK)
	require.NotNil(t, r.Error)
	assert.Equal(t, "not_connected", r.Error.Code)
	assert.Equal(t, http.StatusNotFound, r.Status)
}

func TestGatewayRequestTimeout(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := connect(ctx, t, g, "42:")
	result := postRequest(ctx, t, g, "42:", map[string]any{"type": "ping", "timeoutMs": 200})
	_, err := c.Next(ctx) // received, never answered
	require.NoError(t, err)
	r := await(ctx, t, result)
	assert.False(t, r.OK)
	require.NotNil(t, r.Error)
	assert.Equal(t, "timeout", r.Error.Code)
	assert.Equal(t, http.StatusGatewayTimeout, r.Status)
}

func TestGatewayRequestFailsWhenComputerIsReplaced(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	older := connect(ctx, t, g, "43:")
	result := postRequest(ctx, t, g, "43:", map[string]any{"type": "ping", "timeoutMs": 5000})
	_, err := older.Next(ctx)
	require.NoError(t, err)
	connect(ctx, t, g, "43:")
	r := await(ctx, t, result)
	require.NotNil(t, r.Error)
	assert.Equal(t, "not_connected", r.Error.Code)
	assert.Equal(t, http.StatusNotFound, r.Status)
}

func TestGatewayRequestLabelWithSlash(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := connect(ctx, t, g, "44:a/b%c")
	result := postRequest(ctx, t, g, "44:a/b%c", map[string]any{"type": "ping", "timeoutMs": 5000})
	f, err := c.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, "44:a/b%c", f.TraposReceiverID)
	require.NoError(t, c.WriteJSON(map[string]any{
		"event": harness.EventComputerResponse, "traposSenderId": "44:a/b%c", "messageId": f.MessageID,
		"type": harness.TypePing, "ok": true, "payload": map[string]any{},
	}))
	r := await(ctx, t, result)
	assert.Equal(t, http.StatusOK, r.Status)
	assert.True(t, r.OK)
}

func TestGatewayRequestBadBody(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	connect(ctx, t, g, "45:")
	r := await(ctx, t, postRequest(ctx, t, g, "45:", map[string]any{"payload": map[string]any{}}))
	assert.Equal(t, http.StatusBadRequest, r.Status)
	require.NotNil(t, r.Error)
	assert.Contains(t, r.Error.Message, "type")
}

// getWithToken GETs path with an optional Bearer token and returns the status and the body.
func getWithToken(ctx context.Context, t *testing.T, g *harness.Gateway, path, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL(path), nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(data)
}

func TestComputersListAndMetrics(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	connect(ctx, t, g, "46:den")

	status, body := getWithToken(ctx, t, g, "/trapos/computers", "")
	require.Equal(t, http.StatusOK, status, body)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &list))
	require.Len(t, list, 1)
	assert.Equal(t, "46:den", list[0]["traposId"])
	assert.Equal(t, "local", list[0]["accountId"])

	status, body = getWithToken(ctx, t, g, "/metrics", "")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "trapos_gateway_connected_computers 1")
	assert.Contains(t, body, `trapos_gateway_frames_in_total{event="computer_request",type="hello"} 1`)
	// Its hello names no clientVersion: a client older than the one the gateway serves.
	assert.Contains(t, body, "trapos_gateway_older_client_computers 1")
}

func TestAPITokenRequiredAndPasswordDoesNotOpenIt(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, "--api-token", "api-tok")
	for _, token := range []string{"", sandboxPassword, "wrong"} {
		status, body := getWithToken(ctx, t, g, "/trapos/computers", token)
		assert.Equal(t, http.StatusUnauthorized, status, "token %q", token)
		assert.Contains(t, body, "SANDBOX_API_TOKEN")
	}
	status, _ := getWithToken(ctx, t, g, "/trapos/computers", "api-tok")
	assert.Equal(t, http.StatusOK, status)
}

// TestAComputerOnTheAPIsMachineIsLoggedWithoutAToken: the real gateway, started without
// SANDBOX_API_TOKEN, tells the operator once that a computer connected from its own machine
// (the Minecraft server runs there, so every program on its computers is a loopback client of
// the API); with a token it says nothing of it.
func TestAComputerOnTheAPIsMachineIsLoggedWithoutAToken(t *testing.T) {
	ctx := testContext(t)
	const warning = `level=WARN msg="a computer connected from this machine while SANDBOX_API_TOKEN is unset`
	open := startGateway(t)
	connect(ctx, t, open, "7:kitchen")
	require.NoError(t, open.WaitLog(ctx, warning), open.Log())

	guarded := startGateway(t, "--api-token", "api-tok")
	connect(ctx, t, guarded, "7:kitchen")
	connect(ctx, t, guarded, "8:door")
	require.NoError(t, guarded.WaitLog(ctx, "traposId=8:door"), guarded.Log()) // logged after 7:kitchen's lines
	assert.NotContains(t, guarded.Log(), warning)
}
