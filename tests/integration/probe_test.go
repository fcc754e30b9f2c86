package integration

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

func TestProbeGatewayHealthyOpencode(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{Password: opencodePassword})
	g := startGateway(t, "--opencode-url", oc.URL, "--opencode-password", opencodePassword)
	c := connect(ctx, t, g, "8:")

	f, err := c.Request(ctx, harness.TypeProbeGateway, map[string]any{})
	require.NoError(t, err)
	payload := requireOK(t, f)
	assert.Equal(t, true, payload["sandboxOk"])
	assert.Equal(t, true, payload["opencodeOk"])
	assert.NotContains(t, payload, "opencodeDetail", "detail is for failures only")
	assert.Positive(t, oc.HealthHits(), "the gateway never reached the health endpoint")
	assert.NotContains(t, g.Log(), opencodePassword, "the opencode password reached the log")
}

func TestProbeGatewayOpencodeFromEnvironment(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{Password: opencodePassword})
	g := harness.Start(t, gatewayBin, harness.Options{Env: []string{
		"SANDBOX_PASSWORD=" + sandboxPassword,
		"OPENCODE_URL=" + oc.URL,
		"OPENCODE_SERVER_USERNAME=" + opencodefake.DefaultUsername,
		"OPENCODE_SERVER_PASSWORD=" + opencodePassword,
	}})
	c := connect(ctx, t, g, "8:")
	f, err := c.Request(ctx, harness.TypeProbeGateway, map[string]any{})
	require.NoError(t, err)
	assert.Equal(t, true, requireOK(t, f)["opencodeOk"])
}

func TestProbeGatewayOpencodeUnhealthy(t *testing.T) {
	cases := []struct {
		name string
		args func(t *testing.T) []string
		// detail lists substrings the opencodeDetail must contain.
		detail []string
	}{
		{
			name: "connection refused",
			args: func(t *testing.T) []string {
				return []string{"--opencode-url", opencodefake.ClosedPortURL(t)}
			},
			detail: []string{"127.0.0.1"},
		},
		{
			name: "wrong password",
			args: func(t *testing.T) []string {
				oc := opencodefake.Start(t, opencodefake.Options{Password: opencodePassword})
				return []string{"--opencode-url", oc.URL, "--opencode-password", "not-the-password"}
			},
			detail: []string{"401"},
		},
		{
			name: "no password",
			args: func(t *testing.T) []string {
				oc := opencodefake.Start(t, opencodefake.Options{Password: opencodePassword})
				return []string{"--opencode-url", oc.URL}
			},
			detail: []string{"401"},
		},
		{
			name: "wrong username",
			args: func(t *testing.T) []string {
				oc := opencodefake.Start(t, opencodefake.Options{Password: opencodePassword})
				return []string{"--opencode-url", oc.URL, "--opencode-password", opencodePassword, "--opencode-username", "admin"}
			},
			detail: []string{"401"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			g := startGateway(t, tc.args(t)...)
			c := connect(ctx, t, g, "9:")

			f, err := c.Request(ctx, harness.TypeProbeGateway, map[string]any{})
			require.NoError(t, err)
			payload := requireOK(t, f)
			assert.Equal(t, true, payload["sandboxOk"], "the gateway itself answered")
			assert.Equal(t, false, payload["opencodeOk"])
			detail, _ := payload["opencodeDetail"].(string)
			require.NotEmpty(t, detail, "an unhealthy opencode needs a detail")
			for _, want := range tc.detail {
				assert.Contains(t, detail, want)
			}
			assert.NotContains(t, detail, opencodePassword, "a secret leaked into the detail")
		})
	}
}

func TestUnknownType(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := connect(ctx, t, g, "10:")

	f, err := c.Request(ctx, unknownType, map[string]any{"x": 1})
	require.NoError(t, err)
	requireErrorCode(t, f, "unknown_type")
	assert.Contains(t, f.Error.Message, unknownType, "the message names the type")

	// The socket keeps working afterwards.
	f, err = c.Request(ctx, harness.TypeProbeGateway, map[string]any{})
	require.NoError(t, err)
	requireOK(t, f)
}

// TestEmptyPayloadForms: CraftOS serializes {} as [], and the Lua side may omit an empty
// payload; the gateway reads all of these as {}.
func TestEmptyPayloadForms(t *testing.T) {
	forms := []struct {
		name    string
		payload any
	}{
		{"object", map[string]any{}},
		{"array", []any{}},
		{"missing", harness.Omit},
		{"null", nil},
		{"string", "x"},
		{"number", 3},
	}
	ctx := testContext(t)
	g := startGateway(t)
	c := connect(ctx, t, g, "11:")
	for _, form := range forms {
		t.Run(form.name, func(t *testing.T) {
			f, err := c.Request(ctx, harness.TypeProbeGateway, form.payload)
			require.NoError(t, err)
			payload := requireOK(t, f)
			assert.Equal(t, true, payload["sandboxOk"])

			f, err = c.Request(ctx, unknownType, form.payload)
			require.NoError(t, err)
			requireErrorCode(t, f, "unknown_type")
		})
	}
}

// TestHelloPayloadAsArrayIsNotAccepted: an empty hello payload carries no secret, so with auth
// on it must be refused, never crash the gateway.
func TestHelloWithEmptyPayload(t *testing.T) {
	for _, form := range []struct {
		name    string
		payload any
	}{{"array", []any{}}, {"missing", harness.Omit}, {"object", map[string]any{}}} {
		t.Run(form.name, func(t *testing.T) {
			ctx := testContext(t)
			g := startGateway(t)
			c := dial(ctx, t, g, "12:")
			f, err := c.Request(ctx, harness.TypeHello, form.payload)
			require.NoError(t, err)
			require.NotNil(t, f.OK)
			assert.False(t, *f.OK)
			// The gateway is still serving others.
			connect(ctx, t, g, "12:other")
		})
	}
}

func TestProbeGatewayNonOpencodeAnswer(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	// A wrong base path: opencode answers unknown paths with its web UI (200 text/html), which
	// must not count as healthy.
	g := startGateway(t, "--opencode-url", oc.URL+"/not-the-api")
	c := connect(ctx, t, g, "31:")
	f, err := c.Request(ctx, harness.TypeProbeGateway, map[string]any{})
	require.NoError(t, err)
	payload := requireOK(t, f)
	assert.Equal(t, false, payload["opencodeOk"])
	assert.NotEmpty(t, payload["opencodeDetail"])
}

func TestProbeGatewayStalledOpencodeIsBounded(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.StartStalled(t)
	const probeTimeout = 300 * time.Millisecond
	g := startGateway(t, "--opencode-url", oc.URL, "--probe-timeout", probeTimeout.String())
	c := connect(ctx, t, g, "32:")

	start := time.Now()
	f, err := c.Request(ctx, harness.TypeProbeGateway, map[string]any{})
	require.NoError(t, err)
	took := time.Since(start)
	payload := requireOK(t, f)
	assert.Equal(t, false, payload["opencodeOk"])
	assert.GreaterOrEqual(t, took, probeTimeout, "answered before the probe could time out")
	// The stalled opencode never answers before the test ends: the answer came because the
	// probe timeout bounded it, as its detail says.
	assert.Contains(t, payload["opencodeDetail"], "no answer within "+probeTimeout.String(), "the probe timeout did not bound the answer")
}

// TestPipelinedRequests: a computer may send several requests before reading; each reply
// echoes its own messageId, in whatever order the gateway finishes them.
func TestPipelinedRequests(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{Password: opencodePassword})
	g := startGateway(t, "--opencode-url", oc.URL, "--opencode-password", opencodePassword)
	c := connect(ctx, t, g, "33:")

	const n = 8
	want := map[string]string{}
	for i := range n {
		id := harness.NewMessageID()
		typ := harness.TypeProbeGateway
		if i%2 == 1 {
			typ = unknownType
		}
		want[id] = typ
		require.NoError(t, c.WriteJSON(map[string]any{
			"event": harness.EventComputerRequest, "traposSenderId": "33:", "messageId": id,
			"type": typ, "payload": map[string]any{},
		}))
	}
	for range n {
		f, err := c.Next(ctx)
		require.NoError(t, err)
		typ, ok := want[f.MessageID]
		require.True(t, ok, "reply to an unknown or already answered messageId %q", f.MessageID)
		delete(want, f.MessageID)
		assert.Equal(t, typ, f.Type)
		if typ == unknownType {
			requireErrorCode(t, f, "unknown_type")
		} else {
			assert.Equal(t, true, requireOK(t, f)["opencodeOk"])
		}
	}
	assert.Empty(t, want)
}

// TestManyComputersProbeAtOnce: concurrent computers each get their own answer.
func TestManyComputersProbeAtOnce(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{Password: opencodePassword})
	g := startGateway(t, "--opencode-url", oc.URL, "--opencode-password", opencodePassword)

	const n = 10
	computers := make([]*harness.Computer, n)
	for i := range computers {
		computers[i] = connect(ctx, t, g, fmt.Sprintf("%d:fleet", 100+i))
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	frames := make([]harness.Frame, n)
	for i, c := range computers {
		wg.Go(func() { frames[i], errs[i] = c.Request(ctx, harness.TypeProbeGateway, map[string]any{}) })
	}
	wg.Wait()
	for i := range computers {
		require.NoError(t, errs[i])
		assert.Equal(t, fmt.Sprintf("%d:fleet", 100+i), frames[i].TraposReceiverID)
		assert.Equal(t, true, requireOK(t, frames[i])["opencodeOk"])
	}
}
