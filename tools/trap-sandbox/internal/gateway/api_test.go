package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// apiCall posts body to the requests endpoint of traposID and decodes the answer.
func apiCall(t *testing.T, h *harness, traposID, body, token string) (int, APIResponse) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+"/trapos/computers/"+url.PathEscape(traposID)+"/requests", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := h.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out APIResponse
	require.NoError(t, json.Unmarshal(data, &out), "body %s", data)
	return resp.StatusCode, out
}

type apiResult struct {
	status int
	resp   APIResponse
}

func asyncAPICall(t *testing.T, h *harness, traposID, body string) <-chan apiResult {
	ch := make(chan apiResult, 1)
	go func() {
		status, resp := apiCall(t, h, traposID, body, "")
		ch <- apiResult{status, resp}
	}()
	return ch
}

func TestAPIListsComputers(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	h.connect(t, "7:kitchen", "")
	resp, err := h.srv.Client().Get(h.srv.URL + ComputersPath)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	var list []map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	require.Len(t, list, 1)
	assert.Equal(t, "7:kitchen", list[0]["traposId"])
	assert.Equal(t, LocalAccount, list[0]["accountId"])
	for _, k := range []string{"connectedSince", "remoteAddr", "lastFrameAt"} {
		assert.NotEmpty(t, list[0][k], k)
	}
}

func TestAPIPingRoundTripWithSlashInLabel(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:a/b c", "")
	ch := asyncAPICall(t, h, "7:a/b c", `{"type":"ping","payload":{},"timeoutMs":5000}`)
	req := c.answerNext(func(protocol.Frame) map[string]any {
		return map[string]any{"ok": true, "payload": map[string]any{"traposId": "7:a/b c"}}
	})
	assert.Equal(t, "ping", req.Type)
	assert.Equal(t, "7:a/b c", req.TraposReceiverID)
	r := <-ch
	assert.Equal(t, http.StatusOK, r.status)
	assert.True(t, r.resp.OK)
	assert.JSONEq(t, `{"traposId":"7:a/b c"}`, string(r.resp.Payload))
}

func TestAPIComputerErrorIs200(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "8:", "")
	ch := asyncAPICall(t, h, "8:", `{"type":"dance"}`)
	c.answerNext(func(protocol.Frame) map[string]any {
		return map[string]any{"ok": false, "error": map[string]any{"code": "unknown_type", "message": "no dance"}}
	})
	r := <-ch
	assert.Equal(t, http.StatusOK, r.status)
	assert.False(t, r.resp.OK)
	require.NotNil(t, r.resp.Error)
	assert.Equal(t, protocol.CodeUnknownType, r.resp.Error.Code)
}

func TestAPIGatewayErrors(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "9:", "")
	huge := `{"type":"x","payload":{"s":"` + strings.Repeat("a", protocol.MaxFrameBytes) + `"}}`
	cases := []struct {
		name, id, body string
		status         int
		code           protocol.Code
		contains       string
	}{
		{"not connected", "99:none", `{"type":"ping"}`, http.StatusNotFound, protocol.CodeNotConnected, "not connected"},
		{"invalid json", "9:", `{"type":`, http.StatusBadRequest, protocol.CodeInternal, "JSON object"},
		{"missing type", "9:", `{"payload":{}}`, http.StatusBadRequest, protocol.CodeInternal, "type"},
		{"non-object payload", "9:", `{"type":"ping","payload":"str"}`, http.StatusBadRequest, protocol.CodeInternal, "object"},
		{"negative timeout", "9:", `{"type":"ping","timeoutMs":-1}`, http.StatusBadRequest, protocol.CodeInternal, "timeoutMs"},
		{"huge timeout", "9:", `{"type":"ping","timeoutMs":60001}`, http.StatusBadRequest, protocol.CodeInternal, "timeoutMs"},
		{"frame too large", "9:", huge, http.StatusRequestEntityTooLarge, protocol.CodeInternal, "128 KiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, resp := apiCall(t, h, tc.id, tc.body, "")
			assert.Equal(t, tc.status, status)
			assert.False(t, resp.OK)
			require.NotNil(t, resp.Error)
			assert.Equal(t, tc.code, resp.Error.Code)
			assert.Contains(t, resp.Error.Message, tc.contains)
		})
	}
	// Nothing of the refused requests reached the computer: the next frame is the timeout's.
	ch := asyncAPICall(t, h, "9:", `{"type":"slow","timeoutMs":50}`)
	req := c.read()
	assert.Equal(t, "slow", req.Type)
	r := <-ch
	assert.Equal(t, http.StatusGatewayTimeout, r.status)
	require.NotNil(t, r.resp.Error)
	assert.Equal(t, protocol.CodeTimeout, r.resp.Error.Code)
}

func TestMetricsAfterTraffic(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, Config{Password: "pw", Metrics: NewMetrics(reg)}, staticProber{OK: false, Detail: "down"})
	c := h.connect(t, "5:", "pw")
	ch := asyncAPICall(t, h, "5:", `{"type":"ping","timeoutMs":5000}`)
	c.answerNext(func(protocol.Frame) map[string]any {
		return map[string]any{"ok": true, "payload": map[string]any{}}
	})
	require.Equal(t, http.StatusOK, (<-ch).status)
	c.request("p1", protocol.TypeProbeGateway, map[string]any{})
	assert.True(t, c.read().OK)
	bad := h.dial(t, "6:")
	bad.hello("wrong")
	bad.expectClose(CloseUnauthorized, "unauthorized")
	// The client sees the close frame before the gateway's session counts the close.
	m := h.gw.cfg.Metrics
	require.Eventually(t, func() bool {
		return testutil.ToFloat64(m.closes.WithLabelValues("4001")) == 1
	}, waitLimit, pollEvery, "the 4001 close to be counted")

	resp, err := h.srv.Client().Get(h.srv.URL + server.MetricsPath)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	text := string(data)
	for _, want := range []string{
		"trapos_gateway_connected_computers 1",
		`trapos_gateway_frames_in_total{event="computer_request",type="hello"} 2`,
		`trapos_gateway_frames_in_total{event="computer_response",type="ping"} 1`,
		`trapos_gateway_frames_out_total{event="gateway_request",type="ping"} 1`,
		`trapos_gateway_frames_out_total{event="gateway_response",type="probe_gateway"} 1`,
		`trapos_gateway_hello_failures_total{code="unauthorized"} 1`,
		`trapos_gateway_request_duration_seconds_count{outcome="ok"} 1`,
		`trapos_gateway_closes_total{code="4001"} 1`,
	} {
		assert.Contains(t, text, want)
	}
}
