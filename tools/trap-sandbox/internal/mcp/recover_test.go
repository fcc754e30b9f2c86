package mcp

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/testkit/daemonfake"
)

// TestAPanickingHandlerIsAnsweredAndLogged: a handler's panic becomes JSON-RPC's internal
// error for that call, and the log names the method, the panic and where it happened.
func TestAPanickingHandlerIsAnsweredAndLogged(t *testing.T) {
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	panicking := func(context.Context, string, sdk.Request) (sdk.Result, error) { panic("a bug in a handler") }
	res, err := recoverPanics(logger)(panicking)(t.Context(), "tools/call", &sdk.CallToolRequest{})
	assert.Nil(t, res)
	var wire *jsonrpc.Error
	require.ErrorAs(t, err, &wire)
	assert.Equal(t, int64(jsonrpc.CodeInternalError), wire.Code)
	assert.Contains(t, wire.Message, "its log has the details")
	assert.Contains(t, log.String(), "level=ERROR")
	assert.Contains(t, log.String(), "method=tools/call")
	assert.Contains(t, log.String(), "a bug in a handler")
	assert.Contains(t, log.String(), "recover_test.go", "the stack is logged")
}

// TestACallThatDoesNotPanicPassesThrough: the recovery adds nothing to a normal answer.
func TestACallThatDoesNotPanicPassesThrough(t *testing.T) {
	want := &sdk.CallToolResult{IsError: true}
	failure := errors.New("refused")
	res, err := recoverPanics(nil)(func(context.Context, string, sdk.Request) (sdk.Result, error) {
		return want, failure
	})(t.Context(), "tools/call", &sdk.CallToolRequest{})
	assert.Same(t, want, res)
	assert.Same(t, failure, err)
}

// TestTheServerAnswersAToolThatPanics: NewServer wraps every call in recoverPanics, so a
// tool's panic is that call's internal error and the session goes on.
func TestTheServerAnswersAToolThatPanics(t *testing.T) {
	srv := NewServer(computer.New(daemonfake.NewLocal(nil)), nil, clock.Real{}, slog.New(slog.DiscardHandler))
	sdk.AddTool(srv, &sdk.Tool{Name: "explode", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *sdk.CallToolRequest, map[string]any) (*sdk.CallToolResult, any, error) {
			panic("a bug in a tool")
		})
	server, client := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), server, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), client, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })

	_, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "explode", Arguments: map[string]any{}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "its log has the details")
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "list_computers", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.False(t, res.IsError)
}
