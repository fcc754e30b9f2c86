package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/mcp"
)

// MCPCmd serves the MCP tools on stdin/stdout for clients that only start local commands.
type MCPCmd struct {
	APIFlags
}

// Run checks the gateway and its token once, then serves MCP on stdio until stdin ends or ctx
// does. The tools run in this process and reach the computers through the running gateway's
// HTTP API (--url, --api-token). A gateway that cannot be reached, or refuses the token, ends
// the command at once with the reason on stderr and a non-zero status, so that the MCP client
// shows the server as failed instead of connected.
func (c *MCPCmd) Run(ctx context.Context) error {
	checkCtx, cancel := context.WithTimeout(ctx, computer.DefaultTimeout)
	err := c.transport().Check(checkCtx)
	cancel()
	if err != nil {
		return fmt.Errorf("mcp: the gateway at %s cannot be used: %v", c.URL, err)
	}
	srv := mcp.NewServer(c.client(), nil)
	err = srv.Run(ctx, &sdk.StdioTransport{})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, context.Canceled) {
		return nil
	}
	return fmt.Errorf("mcp over stdio: %w", err)
}
