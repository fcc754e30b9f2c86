package mcp

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
