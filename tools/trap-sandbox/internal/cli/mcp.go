package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/kong"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/mcp"
	"trap-sandbox/internal/protocol"
)

// stdinEndDrain bounds how long the stdio bridge goes on, once stdin has ended, answering the
// requests it had read: the longest tool call (a transfer or run of computer.MaxTimeout) and
// the slack its answer may take.
const stdinEndDrain = computer.MaxTimeout + 2*computer.RunSlack

// MCPCmd serves the MCP tools on stdin/stdout for clients that only start local commands.
type MCPCmd struct {
	APIFlags
}

// Run checks the gateway and its token once, then serves MCP on stdio until stdin ends or ctx
// does. The tools run in this process and reach the computers through the running gateway's
// HTTP API (--url, --api-token). A gateway that cannot be reached, or refuses the token, ends
// the command at once with the reason on stderr and a non-zero status, so that the MCP client
// shows the server as failed instead of connected. When stdin ends, the requests already read
// are answered (for at most stdinEndDrain) before the command exits: `printf '<request>\n' |
// trap-sandbox mcp` prints its answer.
func (c *MCPCmd) Run(ctx context.Context, in Stdin, out Stdout) error {
	checkCtx, cancel := context.WithTimeout(ctx, computer.DefaultTimeout)
	err := c.transport().Check(checkCtx)
	cancel()
	if err != nil {
		shown := hostapi.ShownURL(c.URL)
		why := err.Error()
		if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.Attributed {
			// The client's own words about the gateway name it already ("the gateway at URL
			// answered 401: …"): said once, without the code in front.
			why = pe.Message
			if rest, ok := strings.CutPrefix(why, hostapi.GatewayAt+shown+" "); ok {
				why = "it " + rest
			}
		}
		refusal := namedf("mcp", "the gateway at %s cannot be used: %s", shown, cctext.Show(why, false))
		refuseFirstCall(ctx, in, out, "trap-sandbox: "+refusal.Error())
		return refusal
	}
	// MCP's traposIds are a computer's own, as list_computers gives them, not typed: sent in
	// their shown form, which the API reads back as that id, and named so in a remove line
	// (the CLI's removeLine reads a typed one, so 7:a\x41 named 7:aA there).
	transport := c.transport()
	transport.ListedIDs = true
	listedRemoveLine := func(traposID, path string) string {
		return c.commandLine("rm", cctext.ShowTraposID(traposID), path)
	}
	srv := mcp.NewServer(computer.New(linking{transport}).WithRemoveLine(listedRemoveLine), streamedScreens{transport}, clock.Real{}, nil)
	// Whose computers the token reaches, which an empty list_computers words its note by
	// ("none at all", "none of account alice"): the gateway reads the token, this process
	// asks it once.
	reachCtx, cancel := context.WithTimeout(ctx, computer.DefaultTimeout)
	if caller, known := reachOf(reachCtx, c.APIFlags); known {
		srv.AddReceivingMiddleware(mcp.Reaching(caller))
	}
	cancel()
	err = srv.Run(ctx, &answerPending{Transport: &sdk.IOTransport{Reader: readCloser(in), Writer: jsonOut{out}}, wait: stdinEndDrain})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, context.Canceled) {
		return nil
	}
	return fmt.Errorf("serving on stdin/stdout: %w", err)
}

// refuseFirstCall answers the MCP client's calls up to its initialize with why the bridge
// cannot serve, as JSON-RPC errors, before the command exits: opencode shows a local server's
// stderr nowhere, and opencode mcp list said only "MCP error -32000: Connection closed"; an
// answer's error it shows ("MCP error -32603: trap-sandbox: mcp: the gateway at … answered
// 401: …"). A client of MCP 2026-07-28 (the SDK's Go client) asks server/discover first and,
// refused, initialize. A terminal's stdin is not waited for (its person reads stderr), nor a
// client that sends nothing more within computer.DefaultTimeout.
func refuseFirstCall(ctx context.Context, in Stdin, out Stdout, why string) {
	if in.Reader == nil {
		return
	}
	if f, ok := in.Reader.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return
		}
	}
	conn, err := (&sdk.IOTransport{Reader: readCloser(in), Writer: jsonOut{out}}).Connect(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, computer.DefaultTimeout)
	defer cancel()
	for {
		msg, err := conn.Read(ctx)
		if err != nil {
			return
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			_ = conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: why}})
			if req.Method == "initialize" {
				return
			}
		}
	}
}

// AnswerUsageError answers an MCP client's first requests with a usage error of the mcp
// command (a gateway URL of another shape, a misspelt flag) as their JSON-RPC error, as
// refuseFirstCall answers for a gateway the bridge cannot use: main reports it on stderr, which
// opencode shows nowhere, and opencode mcp list said only "MCP error -32000: Connection
// closed". Another command's error is left to stderr alone.
func AnswerUsageError(ctx context.Context, err error, in Stdin, out Stdout) {
	perr, ok := errors.AsType[*kong.ParseError](err)
	if !ok || perr.Context == nil {
		return
	}
	if cmd := perr.Context.Selected(); cmd == nil || cmd.Path() != "mcp" {
		return
	}
	refuseFirstCall(ctx, in, out, "trap-sandbox: "+usageText(err)+" (a usage error in the command line that starts trap-sandbox mcp: trap-sandbox mcp --help lists its flags)")
}

func readCloser(in Stdin) io.ReadCloser {
	if rc, ok := in.Reader.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(in)
}

// jsonOut is the bridge's stdout, which a person may run it at by hand: the JSON-RPC it
// writes, structured content and all, with no character a terminal acts on raw
// (cctext.ShowJSON). The SDK writes one whole message a Write, so no character is split
// between two. Closing it leaves stdout open.
type jsonOut struct{ io.Writer }

func (w jsonOut) Write(p []byte) (int, error) {
	if _, err := w.Writer.Write(cctext.ShowJSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (jsonOut) Close() error { return nil }

// answerPending is an MCP transport whose connection, when its input ends, waits until every
// request read from it has been answered (or wait has passed) before it reports the end: the
// SDK closes a connection as soon as a read fails, and answers still being worked out would
// be lost.
type answerPending struct {
	sdk.Transport
	wait time.Duration
}

// Connect implements sdk.Transport.
func (t *answerPending) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pendingConn{Connection: conn, wait: t.wait, pending: map[jsonrpc.ID]int{},
		answered: make(chan struct{}, 1), closed: make(chan struct{})}, nil
}

// pendingConn counts the calls read and not yet answered. Read runs on the SDK's one reading
// goroutine; Write and Close may run on any.
type pendingConn struct {
	sdk.Connection
	wait      time.Duration
	mu        sync.Mutex
	pending   map[jsonrpc.ID]int // guarded by mu
	answered  chan struct{}      // a token after each answer written
	closed    chan struct{}      // closed by Close
	closeOnce sync.Once
}

func (c *pendingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.IsCall() {
		c.mu.Lock()
		c.pending[req.ID]++
		c.mu.Unlock()
	}
	if errors.Is(err, io.EOF) {
		c.drain(ctx)
	}
	return msg, err
}

// drain waits until nothing read is unanswered, c.wait passes, ctx ends or c is closed.
func (c *pendingConn) drain(ctx context.Context) {
	timer := time.NewTimer(c.wait)
	defer timer.Stop()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.answered:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		case <-c.closed:
			return
		}
	}
}

func (c *pendingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		if c.pending[resp.ID]--; c.pending[resp.ID] <= 0 {
			delete(c.pending, resp.ID)
		}
		c.mu.Unlock()
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return err
}

func (c *pendingConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}
