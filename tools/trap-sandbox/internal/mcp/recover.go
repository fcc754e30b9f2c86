package mcp

import (
	"context"
	"log/slog"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// errHandlerPanicked is what a client gets for a call whose handler panicked.
var errHandlerPanicked = &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
	Message: "internal error in trap-sandbox's MCP server; its log has the details"}

// recoverPanics answers a call whose handler panicked with JSON-RPC's internal error and logs
// the panic with its stack (nil logger: slog's default, the bridge's stderr). The SDK runs
// handlers on goroutines of its own, out of reach of net/http's recovery: a panic there would
// end the gateway and drop every computer of every account.
func recoverPanics(logger *slog.Logger) sdk.Middleware {
	if logger == nil {
		logger = slog.Default()
	}
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (res sdk.Result, err error) {
			defer func() {
				if p := recover(); p != nil {
					logger.Error("mcp: a call's handler panicked; it was answered with an internal error",
						"method", method, "panic", p, "stack", string(debug.Stack()))
					res, err = nil, errHandlerPanicked
				}
			}()
			return next(ctx, method, req)
		}
	}
}
