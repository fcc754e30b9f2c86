package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"go.uber.org/goleak"
)

// testDeadline bounds every test that waits on the network or on events: a guard against a
// hang, not a speed check (TestHTTPUploadLimitLikeCC's 4 MB bodies took 9.9 s of a former
// 10 under -race on a machine at a load of 22).
const testDeadline = 60 * time.Second

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// computer is an installed API on a fake host.
type computer struct {
	api  *API
	host *fakeHost
}

// newComputer installs an API with opts on a fresh fake host, shut down at cleanup.
func newComputer(t *testing.T, opts Options) *computer {
	t.Helper()
	h := newFakeHost()
	a := New(opts)
	a.Install(h.L, h)
	t.Cleanup(h.shutdown)
	return &computer{api: a, host: h}
}

// run runs src as the program and returns its results.
func (c *computer) run(t *testing.T, src string, args ...string) []lua.LValue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	values, err := c.host.run(ctx, src, args...)
	require.NoError(t, err)
	return values
}

// runErr runs src and returns its error.
func (c *computer) runErr(t *testing.T, src string, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	_, err := c.host.run(ctx, src, args...)
	return err
}

// wsServer is a real websocket server; handler runs per connection.
func wsServer(t *testing.T, up websocket.Upgrader, handler func(c *websocket.Conn)) (srv *httptest.Server, url string) {
	t.Helper()
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		handler(c)
	}))
	t.Cleanup(srv.Close)
	return srv, "ws" + strings.TrimPrefix(srv.URL, "http")
}

// echo answers every message with the same message and type.
func echo(c *websocket.Conn) {
	for {
		kind, data, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(kind, data); err != nil {
			return
		}
	}
}

// lstr is a Lua value's string form, for assertions.
func lstr(v lua.LValue) string { return v.String() }

// recv takes one value from ch or fails the test at the deadline.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testDeadline):
		t.Fatal("timed out waiting for the server")
		var zero T
		return zero
	}
}
