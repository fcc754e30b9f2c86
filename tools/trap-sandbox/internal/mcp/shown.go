package mcp

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"trap-sandbox/internal/cctext"
)

// What an MCP client shows. A tool's texts hold computers' words (an error message, a label, a
// client's version, a file's name), and a client may print them to a terminal, as a person
// running trap-sandbox mcp by hand sees what it writes: no character a terminal acts on may
// reach it raw, as the CLI shows none (cctext.Show, docs/protocol.md's text rule). Go's JSON
// writes C0 controls as \u00XX but DEL, the C1 controls (U+009B is a terminal's CSI) and the
// bidirectional controls raw, and an error's text is no JSON at all. Two forms, one rule:
//
//   - A tool error's text is words, shown as the CLI shows them (cctext.Show, line breaks
//     kept): ESC is \x1b.
//   - JSON (a result's text, and all the stdio bridge writes) has them as JSON escapes,
//     \u009b, as the CLI's JSON has (cctext.ShowJSON): the same JSON value, so a file's
//     contents, a name or a traposId decode to the computer's exact text and go back as it is.

// shownErrors shows every tool error's texts, and a JSON-RPC error's message (a resource read
// that failed on the computer), as words (cctext.Show): the SDK writes a handler's error
// message as it is.
func shownErrors(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*sdk.CallToolResult); ok && r != nil && r.IsError {
			for _, c := range r.Content {
				if tc, ok := c.(*sdk.TextContent); ok {
					tc.Text = cctext.Show(tc.Text, true)
				}
			}
		}
		if je, ok := errors.AsType[*jsonrpc.Error](err); ok {
			if shown := cctext.Show(je.Message, true); shown != je.Message {
				err = &jsonrpc.Error{Code: je.Code, Message: shown, Data: je.Data}
			}
		}
		return res, err
	}
}
