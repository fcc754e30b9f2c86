package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/mcp"
	"trap-sandbox/internal/protocol"
)

// MCPCmd serves the MCP tools on stdin/stdout for clients that only start local commands.
type MCPCmd struct {
	APIFlags
}

// Run serves MCP on stdio until stdin ends or ctx does. The tools run in this process and
// reach the computers through the running gateway's HTTP API (--url, --api-token).
func (c *MCPCmd) Run(ctx context.Context) error {
	srv := mcp.NewServer(apiBackend{c.APIFlags}, nil)
	err := srv.Run(ctx, &sdk.StdioTransport{})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, context.Canceled) {
		return nil
	}
	return fmt.Errorf("mcp over stdio: %w", err)
}

// gatewayBackend is the mcp module's Backend on the gateway's Go API, in the serving process.
type gatewayBackend struct{ gw gateway.Caller }

// Computers implements mcp.Backend.
func (b gatewayBackend) Computers(context.Context) ([]mcp.Computer, error) {
	cs := b.gw.Computers()
	out := make([]mcp.Computer, 0, len(cs))
	for _, c := range cs {
		out = append(out, mcp.Computer{TraposID: c.TraposID, AccountID: c.AccountID, ConnectedSince: c.ConnectedSince,
			RemoteAddr: c.RemoteAddr, LastFrameAt: c.LastFrameAt, Replica: c.Replica})
	}
	return out, nil
}

// Request implements mcp.Backend.
func (b gatewayBackend) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	resp, err := b.gw.Call(ctx, traposID, typ, payload, timeout)
	if err != nil {
		var pe *protocol.Error
		if errors.As(err, &pe) {
			return nil, &mcp.RequestError{Code: pe.Code, Message: pe.Message}
		}
		return nil, err
	}
	return answerOf(resp.OK, resp.Payload, resp.Error)
}

// answerOf turns a computer's answer into the Backend's result.
func answerOf(ok bool, payload json.RawMessage, e *protocol.Error) (json.RawMessage, error) {
	if ok {
		return payload, nil
	}
	if e == nil {
		return nil, &mcp.RequestError{Code: protocol.CodeInternal, Message: "the computer answered ok:false without an error"}
	}
	return nil, &mcp.RequestError{Code: e.Code, Message: e.Message, ByComputer: true}
}

// apiBackend is the mcp module's Backend on a running gateway's HTTP API (the stdio bridge).
type apiBackend struct{ APIFlags }

// Computers implements mcp.Backend.
func (b apiBackend) Computers(ctx context.Context) ([]mcp.Computer, error) {
	var list []gateway.ComputerJSON
	if status, err := b.do(ctx, http.MethodGet, gateway.ComputersPath, nil, &list); err != nil {
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			return nil, &mcp.RequestError{Code: protocol.CodeUnauthorized, Message: err.Error()}
		}
		return nil, fmt.Errorf("list computers: %w", err)
	}
	out := make([]mcp.Computer, 0, len(list))
	for _, c := range list {
		out = append(out, mcp.Computer{TraposID: c.TraposID, AccountID: c.AccountID, ConnectedSince: c.ConnectedSince,
			RemoteAddr: c.RemoteAddr, LastFrameAt: c.LastFrameAt, Replica: c.Replica})
	}
	return out, nil
}

// Request implements mcp.Backend: an answer with HTTP 200 is the computer's, any other
// status carries the gateway's own error.
func (b apiBackend) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout+clientTimeoutSlack)
	defer cancel()
	body := map[string]any{"type": typ, "payload": payload, "timeoutMs": max(timeout.Milliseconds(), 1)}
	var out gateway.APIResponse
	status, err := b.do(ctx, http.MethodPost, "/trapos/computers/"+url.PathEscape(traposID)+"/requests", body, &out)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		if out.Error == nil {
			return nil, fmt.Errorf("the gateway answered HTTP %d", status)
		}
		return nil, &mcp.RequestError{Code: out.Error.Code, Message: out.Error.Message}
	}
	return answerOf(out.OK, out.Payload, out.Error)
}
