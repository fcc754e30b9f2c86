package integration

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/harness"
)

func TestHealthz(t *testing.T) {
	g := startGateway(t)
	resp, err := harness.HTTPClient().Get(g.URL("/healthz"))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "body %q", body)
}

func TestHelloAccepted(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := dial(ctx, t, g, "7:kitchen")

	f, err := c.Hello(ctx, sandboxPassword)
	require.NoError(t, err)
	payload := requireOK(t, f)
	assert.Equal(t, "local", payload["accountId"])
	assert.Equal(t, "7:kitchen", f.TraposReceiverID, "a gateway frame names its receiver")
	assert.Empty(t, f.TraposSenderID, "a gateway frame carries no traposSenderId")

	// The socket is registered: a request after hello is served.
	f, err = c.Request(ctx, unknownType, map[string]any{})
	require.NoError(t, err)
	requireErrorCode(t, f, "unknown_type")
}

func TestHelloEmptyLabel(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := dial(ctx, t, g, "7:") // an unlabelled computer
	f, err := c.Hello(ctx, sandboxPassword)
	require.NoError(t, err)
	requireOK(t, f)
	assert.Equal(t, "7:", f.TraposReceiverID)
}

func TestHelloBadSecretClosesWith4001(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := dial(ctx, t, g, "3:door")

	f, err := c.Hello(ctx, "wrong-secret-55aa")
	require.NoError(t, err)
	requireErrorCode(t, f, "unauthorized")
	requireClose(ctx, t, c, harness.CloseUnauthorized)

	// A computer with the right secret is unaffected.
	connect(ctx, t, g, "3:door")
	assert.NotContains(t, g.Log(), "wrong-secret-55aa", "a hello secret reached the log")
	assert.NotContains(t, g.Log(), sandboxPassword, "the password reached the log")
}

func TestHelloWithoutPasswordAcceptsAnySecret(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{})
	c := dial(ctx, t, g, "1:")
	require.NoError(t, c.MustHello(ctx, "anything"))
	assert.Contains(t, strings.ToLower(g.Log()), "sandbox_password", "auth off must be announced at start")
}

func TestPasswordFromEnvironment(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Env: []string{"SANDBOX_PASSWORD=" + sandboxPassword}})

	bad := dial(ctx, t, g, "2:")
	f, err := bad.Hello(ctx, "nope")
	require.NoError(t, err)
	requireErrorCode(t, f, "unauthorized")

	connect(ctx, t, g, "2:")
}

func TestNoHelloClosesWith4008(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, "--hello-timeout", shortHelloTimeout)
	c := dial(ctx, t, g, "4:")
	requireClose(ctx, t, c, harness.CloseNoHello)
}

// TestHelloTimeoutFromEnvironment: SANDBOX_HELLO_TIMEOUT sets the hello timeout. The close
// alone cannot tell (the 10 s default closes the socket too, well within the test's bound), so
// the gateway's config line must name the value.
func TestHelloTimeoutFromEnvironment(t *testing.T) {
	ctx := testContext(t)
	g := harness.Start(t, gatewayBin, harness.Options{Env: []string{"SANDBOX_HELLO_TIMEOUT=" + shortHelloTimeout}})
	assert.Regexp(t, `msg=config .* helloTimeout=`+shortHelloTimeout+` `, g.Log(), "the gateway's hello timeout is not the environment's")
	c := dial(ctx, t, g, "4:")
	requireClose(ctx, t, c, harness.CloseNoHello)
}

func TestRequestBeforeHelloIsNotAuthenticated(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := dial(ctx, t, g, "6:")

	f, err := c.Request(ctx, harness.TypeProbeGateway, map[string]any{})
	require.NoError(t, err)
	requireErrorCode(t, f, "not_authenticated")

	f, err = c.Request(ctx, unknownType, map[string]any{})
	require.NoError(t, err)
	requireErrorCode(t, f, "not_authenticated")

	// The socket stays open: hello still works on it.
	require.NoError(t, c.MustHello(ctx, sandboxPassword))
	f, err = c.Request(ctx, harness.TypeProbeGateway, map[string]any{})
	require.NoError(t, err)
	requireOK(t, f)
}

func TestHelloWithoutTraposIDIsRefused(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := dial(ctx, t, g, "")
	f, err := c.Request(ctx, harness.TypeHello, map[string]any{"secret": sandboxPassword})
	require.NoError(t, err)
	require.NotNil(t, f.OK)
	assert.False(t, *f.OK, "a hello without traposId must not register a computer")
}

func TestSecondHelloForAnotherComputerIsRefused(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := connect(ctx, t, g, "30:a")
	// One socket is one computer: it cannot re-register as another traposId.
	f, err := c.Request(ctx, harness.TypeHello, map[string]any{"traposId": "30:b", "secret": sandboxPassword})
	require.NoError(t, err)
	requireErrorCode(t, f, "not_authenticated")
}
