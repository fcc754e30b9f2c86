package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/opencode"
	"trap-sandbox/internal/opencodehealth"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit/daemonfake"
)

// clientWait bounds every wait of the client tests.
const clientWait = 5 * time.Second

type healthyProber struct{}

func (healthyProber) Probe(context.Context) opencode.Health { return opencode.Health{OK: true} }

// startGatewayHTTP serves the real gateway handler and returns its URL.
func startGatewayHTTP(t *testing.T, token string) string {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	gw := gateway.New(gateway.Config{}, logger, nil)
	opencodehealth.New(healthyProber{}, nil).Register(gw)
	srv := httptest.NewServer(server.New(logger, server.Config{APIToken: token}, gw, hostapi.New(computer.New(hostapi.NewGateway(gw)))).Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), clientWait)
		defer cancel()
		assert.NoError(t, gw.Shutdown(ctx))
		srv.Close()
	})
	return srv.URL
}

// connectComputer connects the stand-in daemon d to the gateway at base until the test ends.
func connectComputer(t *testing.T, base string, d *daemonfake.Daemon) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clientWait)
	defer cancel()
	stop, err := d.Connect(ctx, base+gateway.WebSocketPath, "")
	require.NoError(t, err)
	t.Cleanup(stop)
}

func runClient(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := runWith(t, "", args...)
	return out, err
}

// runWith runs a client command as main does, with stdin, and returns stdout and stderr.
func runWith(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	_, kctx := parse(t, args...)
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), clientWait)
	defer cancel()
	kctx.BindTo(ctx, (*context.Context)(nil))
	kctx.BindTo(&errOut, (*io.Writer)(nil))
	kctx.Bind(Stdout{Writer: &out})
	kctx.Bind(Stdin{Reader: strings.NewReader(stdin)})
	err := kctx.Run()
	return out.String(), errOut.String(), err
}

func TestClientCommands(t *testing.T) {
	clearEnv(t)
	base := startGatewayHTTP(t, "")
	connectComputer(t, base, &daemonfake.Daemon{ID: 7, Label: "a/b"})

	out, err := runClient(t, "computers", "--url", base)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, out)
	assert.Regexp(t, `^TRAPOS ID\s+ACCOUNT\s+CLIENT\s+CONNECTED SINCE\s+REMOTE\s+LAST FRAME$`, lines[0])
	assert.Regexp(t, `^7:a/b\s+local\s+-\s+\S+\s+127\.0\.0\.1:\d+\s+\S+$`, lines[1])

	out, err = runClient(t, "ping", "--url", base, "7:a/b")
	require.NoError(t, err)
	assert.Regexp(t, `^pong from 7:a/b: \{"traposId":"7:a/b"\} in \S+\n$`, out)

	out, err = runClient(t, "request", "--url", base, "7:a/b", "ping", `{"x":1}`)
	require.NoError(t, err)
	var payload map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &payload))
	assert.Equal(t, "7:a/b", payload["traposId"])

	_, err = runClient(t, "request", "--url", base, "7:a/b", "dance")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the computer answered unknown_type")

	_, err = runClient(t, "ping", "--url", base, "9:gone")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not_connected")
	_, err = runClient(t, "ping", "--url", base, "7")
	assert.EqualError(t, err, `computer 7 ping: the gateway answered not_connected: computer 7 is not connected; did you mean "7:a/b"?`)

	_, err = runClient(t, "request", "--url", base, "7:a/b", "ping", `{bad`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not valid JSON")
}

func TestClientToken(t *testing.T) {
	clearEnv(t)
	base := startGatewayHTTP(t, "s3cret")
	connectComputer(t, base, &daemonfake.Daemon{ID: 1})

	_, err := runClient(t, "computers", "--url", base)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "401")
	assert.Contains(t, err.Error(), "--api-token", "the CLI's own flag is named")
	_, err = runClient(t, "request", "1:", "ping", "--url", base)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--api-token", "a request's 401 names it too")
	assert.Equal(t, 1, strings.Count(err.Error(), "the gateway"), "one speaker, said once: %s", err)
	assert.True(t, strings.HasPrefix(err.Error(), "computer 1: request ping: the gateway at "+base+" answered 401: "), err.Error())

	t.Setenv("SANDBOX_API_TOKEN", "s3cret")
	t.Setenv("SANDBOX_URL", base)
	out, err := runClient(t, "ping", "1:")
	require.NoError(t, err)
	assert.Contains(t, out, "pong from 1:")
}
