// Package computer is the one host-side client of a computer's vocabulary (docs/capabilities.md):
// typed calls (Info, List, Read, Write, Delete, Move, MakeDir, Exec, Run, Ping) and the raw
// Request, with their chunking, their timeouts and the text rule (internal/cctext) applied in
// one place. The HTTP API, the CLI and MCP are thin layers over a Client, and the agent and the
// screen module make their calls to a computer through one too.
//
// A Client reaches computers through a Transport: the gateway in-process, or the gateway's
// HTTP API from another process (both in internal/hostapi). The account is the Transport's
// business, not the calls': the in-process one reaches the computers of the caller in each
// call's context (account.CallerFrom, put there by the server's API auth), the HTTP one those
// its API token reaches.
package computer

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// Time bounds, one meaning everywhere: a timeout is how long the whole call may take. Every
// surface (the HTTP API's timeoutMs, MCP's timeoutMs, the CLI's --timeout) uses these.
const (
	// DefaultTimeout bounds a call that sends one request, when the caller gives no timeout.
	DefaultTimeout = 10 * time.Second
	// TransferTimeout bounds a whole Read or Write (one request per chunk) by default. It is
	// MaxTimeout, so that every surface can grant it: an HTTP request may last 75 s in all.
	TransferTimeout = MaxTimeout
	// MaxTimeout caps any timeout a caller gives (the HTTP API's cap on timeoutMs).
	MaxTimeout = 60 * time.Second
	// RunSlack is how much earlier than the call's end the computer is told to stop an Exec or
	// Run, so that its own timeout answer arrives before the caller gives up. The HTTP
	// transport waits the same slack past a request's timeout for the gateway's answer.
	RunSlack = 2 * time.Second
)

// WithTimeoutFix is a timeout's message with fix (how each surface gives a call longer) after
// it: on the same line, or on a line of its own after a message of several lines. A lua.exec
// or shell.run past its timeout ends its message with its screen's rows (an editor's status
// bar last), and a fix on that row read as part of the screen.
func WithTimeoutFix(message, fix string) string {
	if strings.Contains(message, "\n") {
		return message + "\n" + fix
	}
	return message + " " + fix
}

// Transport carries one request to one computer: the gateway in-process, or the HTTP API's
// client. It knows the account; the calls do not.
type Transport interface {
	// Computers lists the connected computers, sorted by account and traposId.
	Computers(ctx context.Context) ([]Computer, error)
	// Request sends a request of type typ with a JSON-object payload (wire strings: see
	// cctext) to computer traposID and waits at most timeout (and until ctx ends) for its
	// answer. It returns the answer's payload when the computer served it (ok:true). A
	// refusal or failure is a *protocol.Error: the computer's ok:false with ByComputer set,
	// or the gateway's not_connected, timeout, busy, internal. Any other error means the
	// transport could not reach the gateway.
	Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error)
}

// TypedIDTransport is a Transport whose traposIds are as a person types them (the CLI's over
// the HTTP API, whose path reads a typed id's escapes: cctext.TraposID, so 7:a\x41 is 7:aA),
// where TypedIDs says so. Every other transport takes a traposId as the lists give it, the
// computer's own (the gateway in-process, and so MCP; the stdio bridge's HTTP API client):
// 7:a\x41 is the label's own four characters.
type TypedIDTransport interface {
	TypedIDs() bool
}

// listedID is traposID, as c's transport takes it, as the lists give it: the computer's own
// traposId, which its answers name (computer.info's traposId).
func (c *Client) listedID(traposID string) string {
	if t, ok := c.transport.(TypedIDTransport); ok && t.TypedIDs() {
		return cctext.TraposID(traposID)
	}
	return cctext.ListedTraposID(traposID)
}

// shownID is traposID, as c's transport takes it, as every list shows it
// (cctext.ShowTraposID): how c's messages name the computer. Shown as it was given, a typed
// 7:kitchen\x20 (the CLI's, the label's trailing space) was named 7:kitchen\x5cx20, another id.
func (c *Client) shownID(traposID string) string {
	return cctext.ShowTraposID(c.listedID(traposID))
}

// Computer is a connected computer: the one record of the HTTP API's GET /trapos/computers,
// the CLI's computers table and MCP's list_computers.
type Computer struct {
	AccountID      string    `json:"accountId"`
	TraposID       string    `json:"traposId"`
	ConnectedSince time.Time `json:"connectedSince"`
	RemoteAddr     string    `json:"remoteAddr"`
	// LastFrameAt is when the last frame (of any kind, even an ignored one) arrived.
	LastFrameAt time.Time `json:"lastFrameAt"`
	// Replica names the gateway replica that holds the socket (only with --nats).
	Replica string `json:"replica,omitempty"`
	// ClientVersion is the client's version from its hello; empty for an older client.
	ClientVersion string `json:"clientVersion,omitempty"`
	// Shown is TraposID as every list shows it (cctext.ShowTraposID: a no-break space, a soft
	// hyphen, a space at the label's end escaped, so one computer cannot pass for another),
	// set only when it differs from TraposID. The HTTP API and the CLI take it back as the
	// traposId (cctext.TraposID); MCP's tools take TraposID itself.
	Shown string `json:"shown,omitempty"`
}

// Matches reports whether part, compared case-insensitively, is in c's traposId (its id or
// label) or its account: how an agent finds the computer meant among thousands (MCP's
// list_computers match). An empty part matches every computer.
func (c Computer) Matches(part string) bool {
	part = strings.ToLower(part)
	return strings.Contains(strings.ToLower(c.TraposID), part) || strings.Contains(strings.ToLower(c.AccountID), part)
}

// Client makes the vocabulary's calls over a Transport. It is safe for concurrent use.
type Client struct {
	transport Transport
	inputs    inputTurns
	// removeLine is the caller's line that removes a file on a computer (WithRemoveLine).
	removeLine func(traposID, path string) string
	// readWait is how the caller's user waits for a computer to come back (WithReadWait).
	readWait string
}

// New returns a Client on t.
func New(t Transport) *Client { return &Client{transport: t} }

// WithRemoveLine makes c's failed writes name, beside what they may have left on a computer
// that could not be told to remove it, the line that removes it as c's user types it
// (the CLI's trap-sandbox rm …): line(traposID, path), path shown as cctext.ShowPath shows
// it. It returns c.
func (c *Client) WithRemoveLine(line func(traposID, path string) string) *Client {
	c.removeLine = line
	return c
}

// WithReadWait makes c word every read's request (IsRead) whose computer went away before it
// answered as a read (ReadAgain), with wait, how c's user waits for it to come back (the
// CLI's CLIBackWait), and a file's read it left midway say wait after its "read it again once
// it is back": the surface's one place for it, set where its client is made, whichever of its
// commands asks (send, where every request passes). Any request's not_connected of a
// computer whose replica stopped before anything was sent says, with wait, that it connects
// again by itself (ReplicaGoneWait). A Client without it (the gateway's, which
// MCP and the host API share and word their reads each by its own tools and routes; the stdio
// bridge's, whose tools do as MCP's) leaves the gateway's words. A write's own look at its
// path is a read too: NothingWritten and NothingDeleted word it as the write's. It returns c.
func (c *Client) WithReadWait(wait string) *Client {
	c.readWait = wait
	return c
}

// backWait is how c's user waits for a computer to come back (WithReadWait), in parentheses
// after a read's "read it again once it is back" (a file read it left midway); "" without it.
func (c *Client) backWait() string {
	if c.readWait == "" {
		return ""
	}
	return " (" + c.readWait + ")"
}

// Computers lists the connected computers.
func (c *Client) Computers(ctx context.Context) ([]Computer, error) {
	cs, err := c.transport.Computers(ctx)
	return c.shown(cs, err), err
}

// shown is cs as every list gives it: never nil without an error, each computer's Shown set.
func (c *Client) shown(cs []Computer, err error) []Computer {
	if cs == nil && err == nil {
		cs = []Computer{}
	}
	for i := range cs {
		cs[i].Shown = ""
		if shown := cctext.ShowTraposID(cs[i].TraposID); shown != cs[i].TraposID {
			cs[i].Shown = shown
		}
	}
	return cs
}

// PartialLister is a Transport that can tell, with its list, why the list may leave
// computers out (a replica cut off from NATS lists only the sockets it holds).
type PartialLister interface {
	// ComputersNoted is Computers and that one line, "" for a whole list.
	ComputersNoted(ctx context.Context) ([]Computer, string, error)
}

// ComputersNoted is Computers and, when the Transport tells (PartialLister), the line saying
// why the list may leave computers out; "" for a whole list or a Transport that cannot tell.
func (c *Client) ComputersNoted(ctx context.Context) ([]Computer, string, error) {
	p, ok := c.transport.(PartialLister)
	if !ok {
		cs, err := c.Computers(ctx)
		return cs, "", err
	}
	cs, partial, err := p.ComputersNoted(ctx)
	return c.shown(cs, err), partial, err
}

// Request sends one request of any type with a JSON payload given as host text: every
// string in it (keys too) follows the text rule, and the replacements come back with the
// answer; so does the type (cctext.TypeWire), which refuses a character CC cannot hold. The
// answer's payload is the computer's, as JSON; screen.read's with its monitors bounded as every
// read of the screen bounds them (BoundScreenAnswer).
func (c *Client) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, []cctext.Replacement, error) {
	typ, err := cctext.TypeWire(typ)
	if err != nil {
		return nil, nil, err
	}
	// Counted as CC's bytes: on the wire each is one code point up to U+00FF.
	if n := utf8.RuneCountInString(typ); n > protocol.MaxHostTypeBytes {
		return nil, nil, protocol.Errorf(protocol.CodeBadPayload, "the type is %d bytes long on the computer; a host request's type is at most %d (door.open, fs.read)",
			n, protocol.MaxHostTypeBytes)
	}
	wire, reps, err := cctext.WireJSON("payload", payload)
	if err != nil {
		return nil, nil, protocol.Errorf(protocol.CodeBadPayload, "%v", err)
	}
	timeout = bound(timeout, DefaultTimeout)
	if typ == protocol.TypeScreenInput {
		// Input as any other caller's: never between the parts of one caller's long input.
		var release func()
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
		if ctx, release, err = c.InputTurn(ctx, traposID); err != nil {
			return nil, nil, err
		}
		defer release()
		timeout = remaining(ctx)
	}
	answer, err := c.send(ctx, traposID, typ, wire, timeout)
	if err == nil && typ == protocol.TypeScreenRead {
		answer = BoundScreenAnswer(answer)
	}
	return answer, reps, err
}

// bound is timeout, or def when it is not positive, at most MaxTimeout.
func bound(timeout, def time.Duration) time.Duration {
	if timeout <= 0 {
		timeout = def
	}
	return min(timeout, MaxTimeout)
}

// call sends a typed payload and decodes a successful answer into out (nil: ignore it).
func (c *Client) call(ctx context.Context, traposID, typ string, payload any, timeout time.Duration, out any) error {
	raw, err := json.Marshal(payload)
	if err != nil {
		return protocol.Errorf(protocol.CodeInternal, "encode the %s payload: %v", typ, err)
	}
	answer, err := c.send(ctx, traposID, typ, raw, timeout)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		e := protocol.Errorf(protocol.CodeInternal, "computer %s answered %s with a payload this client cannot read: %s", c.shownID(traposID), typ, unreadable(err))
		e.Attributed = true // the gateway relayed the answer; this client could not read it
		return e
	}
	return nil
}

// unreadable words why a computer's answer could not be decoded: a field of the wrong type by
// its name and what it takes, as the API words a body's ("\"pocket\" must be true or false (got
// a string)"), not as Go's decoder names it ("Go struct field Info.pocket of type bool").
func unreadable(err error) string {
	if msg, ok := server.FieldTypeError(err); ok {
		return msg
	}
	return err.Error()
}

// send is the one path to the Transport: it words what went wrong the same way for every
// call (a deadline that passed is timeout; not_connected names the computer meant; a read's
// whose computer went away is a read's, and one whose replica went says the computer connects
// again by itself: WithReadWait).
func (c *Client) send(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	if timeout <= 0 {
		return nil, protocol.Errorf(protocol.CodeTimeout, "no time left to send %s to %s", typ, traposID)
	}
	if strings.TrimSpace(traposID) == "" {
		return nil, protocol.Errorf(protocol.CodeNotConnected, "no computer was named (the traposId is empty): give one as the list of connected computers shows it, e.g. 7:kitchen")
	}
	answer, err := c.transport.Request(ctx, traposID, typ, payload, timeout)
	if err == nil {
		return answer, nil
	}
	err = aboveRootExplained(err)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, protocol.Errorf(protocol.CodeTimeout, "computer %s did not answer %s in time", c.shownID(traposID), typ)
	}
	if ctx.Value(bareKey{}) == nil {
		err = c.HintNotConnected(ctx, err, traposID)
	}
	if c.readWait != "" && IsRead(typ) {
		err = ReadAgain(err, c.readWait)
	}
	if c.readWait != "" {
		err = ReplicaGoneWait(err, c.readWait)
	}
	return nil, err
}

// bareKey marks the context of a call whose not_connected comes without Hint's hint (PingBare,
// RelabelledByRun).
type bareKey struct{}

// PingBare is Ping whose not_connected comes bare, without Hint's hint and the listing of the
// connected computers the hint reads: for a caller that pings again and again until the
// computer connects (MCP ping's wait, every 250 ms), which hints only the answer it gives
// (HintNotConnected). A gateway of many computers was listed whole at every try.
func (c *Client) PingBare(ctx context.Context, traposID string, timeout time.Duration) (Ping, error) {
	return c.Ping(context.WithValue(ctx, bareKey{}, true), traposID, timeout)
}

// HintNotConnected is err with Hint's hint when it is the gateway's not_connected for
// traposID (the computer's own is left as it is), else err.
func (c *Client) HintNotConnected(ctx context.Context, err error, traposID string) error {
	if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.Code == protocol.CodeNotConnected && !pe.ByComputer {
		return c.withHint(ctx, pe, traposID)
	}
	return err
}

// withHint is Hint over the connected computers the Transport lists for the caller.
func (c *Client) withHint(ctx context.Context, pe *protocol.Error, traposID string) error {
	if pe.Hint != "" {
		return pe // no listing for a hint that would not be added
	}
	listCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hintListTimeout)
	defer cancel()
	cs, err := c.transport.Computers(listCtx)
	caller := account.CallerFrom(ctx)
	holding := account.HoldsOne
	if err == nil && len(cs) == 0 {
		holding = c.holding(listCtx, caller)
	}
	return Hint(pe, traposID, cs, err == nil, caller, c.GatewayUptime(), holding)
}

// Holding reports, for the caller in ctx (account.CallerFrom) whose token reaches one
// account's computers, what that account holds of computer credentials (Linker): with none
// that is not revoked (Unlinked) none of its computers can connect until one is linked.
// HoldsOne when the Transport cannot tell, and for any other caller.
func (c *Client) Holding(ctx context.Context) account.Holding {
	return c.holding(ctx, account.CallerFrom(ctx))
}

// holding is Holding of caller.
func (c *Client) holding(ctx context.Context, caller account.Caller) account.Holding {
	l, ok := c.transport.(Linker)
	if !ok || !reachesOneAccount(caller) {
		return account.HoldsOne
	}
	holding, err := l.ComputerCredentials(ctx, caller.Account)
	if err != nil {
		return account.HoldsOne
	}
	return holding
}

// GatewayUptime is how long the gateway has run, when the Transport knows it (Uptimer: the
// gateway in this process); 0 when not.
func (c *Client) GatewayUptime() time.Duration {
	if u, ok := c.transport.(Uptimer); ok {
		return u.GatewayUptime()
	}
	return 0
}

// hintListTimeout bounds the listing a not_connected hint needs.
const hintListTimeout = 2 * time.Second
