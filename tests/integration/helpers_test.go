package integration

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// Test bounds and fixtures.
const (
	// testTimeout bounds each test's waits; it is only reached when something is broken.
	// Every wait is on an event (a frame, an exit), so it is a safety net far above a starved
	// machine's run, not a measure of its speed.
	testTimeout = 2 * time.Minute
	// shortHelloTimeout keeps the no-hello test to a second (the default is 10 s), the least
	// the gateway takes.
	shortHelloTimeout = "1s"
	// sandboxPassword is SANDBOX_PASSWORD in tests that turn auth on.
	sandboxPassword = "sandbox-pw-7f3a1c"
	// opencodePassword is the fake opencode server's password.
	opencodePassword = "opencode-pw-19be42"
	// unknownType is a computer_request type no gateway handles.
	unknownType = "no_such_type"
)

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// startGateway starts the gateway with auth on (sandboxPassword) plus extra flags. Unless args
// name an opencode URL, opencode is a closed loopback port, so no test depends on what happens
// to listen on the real default (4242).
func startGateway(t *testing.T, args ...string) *harness.Gateway {
	t.Helper()
	base := []string{"--password", sandboxPassword}
	if !slices.Contains(args, "--opencode-url") {
		base = append(base, "--opencode-url", opencodefake.ClosedPortURL(t))
	}
	return harness.Start(t, gatewayBin, harness.Options{Args: append(base, args...)})
}

// dial opens a raw computer socket, dropped when the test ends.
func dial(ctx context.Context, t *testing.T, g *harness.Gateway, traposID string) *harness.Computer {
	t.Helper()
	c, err := harness.Dial(ctx, g.WebSocketURL(), traposID)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// connect dials and completes hello with sandboxPassword.
func connect(ctx context.Context, t *testing.T, g *harness.Gateway, traposID string) *harness.Computer {
	t.Helper()
	c := dial(ctx, t, g, traposID)
	require.NoError(t, c.MustHello(ctx, sandboxPassword))
	return c
}

// requireOK checks f is a successful response and decodes its payload into a map.
func requireOK(t *testing.T, f harness.Frame) map[string]any {
	t.Helper()
	require.NotNil(t, f.OK, "response without ok: %+v", f)
	require.True(t, *f.OK, "response not ok: %+v (error %+v)", f, f.Error)
	require.Nil(t, f.Error, "ok response carries an error")
	payload := map[string]any{}
	if len(f.Payload) > 0 {
		require.NoError(t, json.Unmarshal(f.Payload, &payload), "payload %s is not an object", f.Payload)
	}
	return payload
}

// requireErrorCode checks f is a failed response with the given error code.
func requireErrorCode(t *testing.T, f harness.Frame, code string) {
	t.Helper()
	require.NotNil(t, f.OK, "response without ok: %+v", f)
	require.False(t, *f.OK, "response ok, want error %s", code)
	require.NotNil(t, f.Error, "failed response without error object")
	require.Equal(t, code, f.Error.Code, "error %+v", f.Error)
	require.NotEmpty(t, f.Error.Message, "error message is empty")
}

// requireClose reads until the socket closes and checks the close code.
func requireClose(ctx context.Context, t *testing.T, c *harness.Computer, code int) string {
	t.Helper()
	ce, err := c.ExpectClose(ctx)
	require.NoError(t, err)
	require.Equal(t, code, ce.Code, "close %d %q", ce.Code, ce.Text)
	return ce.Text
}
