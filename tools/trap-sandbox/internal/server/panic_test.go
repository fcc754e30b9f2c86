package server

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
)

// panicModule has one API route whose handler panics, as a bug would.
type panicModule struct{}

func (panicModule) Name() string { return "panic" }

func (panicModule) Mount(routes *Routes) {
	routes.HandleAPIFunc("GET /panic/boom", func(http.ResponseWriter, *http.Request) {
		panic("a bug")
	})
}

// TestAPanickingHandlerIsAnErrorInTheLog: net/http recovers a handler's panic and says so only
// to the server's ErrorLog, which the gateway keeps at debug (for clients' noise): a bug that
// broke a request left nothing in a log at info, the level a service runs at. It is one ERROR
// line, with the stack, and the gateway serves on.
func TestAPanickingHandlerIsAnErrorInTheLog(t *testing.T) {
	logs := &testkit.SyncBuffer{}
	s := New(slog.New(slog.NewTextHandler(logs, nil)), Config{}, panicModule{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	base := "http://" + l.Addr().String()

	resp, err := http.Get(base + "/panic/boom")
	if err == nil {
		_ = resp.Body.Close()
	}
	require.Error(t, err, "the connection of the request whose handler panicked is closed")
	assert.Regexp(t, `level=ERROR msg="a request's handler panicked \(a bug of trap-sandbox's\): its connection was closed unanswered; the gateway serves on" method=GET path=/panic/boom panic="a bug" stack="goroutine `, logs.String())

	resp, err = http.Get(base + "/healthz")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the gateway serves on")
}
