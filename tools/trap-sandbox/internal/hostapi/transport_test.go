package hostapi_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit/daemonfake"
)

// testTimeout bounds every wait of these tests; only a broken test reaches it.
const testTimeout = 10 * time.Second

// gatewayWithAPI serves a real gateway and the host API on it, as the binary does.
func gatewayWithAPI(t *testing.T, token string) (*gateway.Gateway, *httptest.Server) {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	gw := gateway.New(gateway.Config{}, logger, nil)
	srv := httptest.NewServer(server.New(logger, server.Config{APIToken: token},
		gw, hostapi.New(computer.New(hostapi.NewGateway(gw)))).Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		assert.NoError(t, gw.Shutdown(ctx))
		srv.Close()
	})
	return gw, srv
}

// connectComputer connects the stand-in daemon d to the gateway until the test ends.
func connectComputer(t *testing.T, srv *httptest.Server, d *daemonfake.Daemon) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	stop, err := d.Connect(ctx, srv.URL+gateway.WebSocketPath, "")
	require.NoError(t, err)
	t.Cleanup(stop)
}

// TestBothTransportsReachARealGateway: the in-process Transport and the HTTP one give the
// same answers, errors and computer records through the real gateway.
func TestBothTransportsReachARealGateway(t *testing.T) {
	gw, srv := gatewayWithAPI(t, "tok")
	connectComputer(t, srv, &daemonfake.Daemon{ID: 7, Label: "a/b c"})
	for name, tr := range map[string]computer.Transport{
		"in-process": hostapi.NewGateway(gw),
		"http":       hostapi.HTTP{URL: srv.URL, Token: "tok"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := account.WithCaller(t.Context(), account.LocalAdmin) // the in-process Transport serves the caller in ctx
			c := computer.New(tr)
			cs, err := c.Computers(ctx)
			require.NoError(t, err)
			require.Len(t, cs, 1)
			assert.Equal(t, "7:a/b c", cs[0].TraposID)
			assert.Equal(t, gateway.LocalAccount, cs[0].AccountID)
			assert.False(t, cs[0].ConnectedSince.IsZero())

			p, err := c.Ping(ctx, "7:a/b c", 0)
			require.NoError(t, err, "a traposId with a slash and a space is path-escaped")
			assert.Equal(t, "7:a/b c", p.TraposID)

			_, _, err = c.Request(ctx, "7:a/b c", "dance", nil, 0)
			var pe *protocol.Error
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, protocol.CodeUnknownType, pe.Code)
			assert.True(t, pe.ByComputer, "the computer's ok:false is marked as the computer's")

			_, err = c.Ping(ctx, "7", 0)
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, protocol.CodeNotConnected, pe.Code)
			assert.False(t, pe.ByComputer)
			assert.Equal(t, `computer 7 is not connected; did you mean "7:a/b c"?`, pe.Message, "one hint, not two")
		})
	}

	err := hostapi.HTTP{URL: srv.URL, Token: "wrong"}.Check(t.Context())
	assert.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(err))
	assert.ErrorContains(t, err, "--api-token or SANDBOX_API_TOKEN")
	err = hostapi.HTTP{URL: "http://127.0.0.1:1"}.Check(t.Context())
	assert.ErrorContains(t, err, "call the gateway at http://127.0.0.1:1")
}
