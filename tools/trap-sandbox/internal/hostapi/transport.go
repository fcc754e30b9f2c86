package hostapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// Gateway is the computer.Transport of the gateway in this process: an adapter on
// gateway.Gateway.Request for the caller in each call's context (account.CallerFrom, put
// there by the server's API auth). A caller reaches its own account's computers, an admin
// every account's, a caller limited to one computer (account.Caller.Only) that computer alone;
// a computer it does not reach answers as one that is not connected, and stays out of the
// list (and so out of not_connected's hint).
type Gateway struct {
	gw  *gateway.Gateway
	log *slog.Logger // nil: no line per request
	// relay reaches the other replicas: an input to a computer held by one is typed there
	// (OnReplica); nil for a gateway alone.
	relay InputRelay
	// checks are the checks of the callers of the inputs relayed from here that the holder
	// asks about (stillcheck.go); nil for a gateway alone.
	checks *stillChecks
}

// NewGateway returns the in-process Transport of gw.
func NewGateway(gw *gateway.Gateway) Gateway { return Gateway{gw: gw} }

// Logging is t writing a DEBUG line per request to logger: who asked which computer for
// what, and how it ended (--log-level debug shows what the host's tools, the web console and
// the agent did on the computers; nothing else logs a request).
func (t Gateway) Logging(logger *slog.Logger) Gateway {
	t.log = logger.With("module", ModuleName)
	return t
}

// maxLoggedBytes bounds a caller's traposId or type in a request's line.
const maxLoggedBytes = 200

var _ computer.Transport = Gateway{}

// Computers implements computer.Transport: the computers the caller reaches.
func (t Gateway) Computers(ctx context.Context) ([]computer.Computer, error) {
	caller := account.CallerFrom(ctx)
	var out []computer.Computer
	for _, c := range t.gw.Computers() {
		if caller.ReachesComputer(c.AccountID, c.TraposID) {
			out = append(out, c)
		}
	}
	return out, nil
}

var _ computer.PartialLister = Gateway{}

// ComputersNoted implements computer.PartialLister: Computers and why the gateway's list may
// leave computers out (gateway.PartialList).
func (t Gateway) ComputersNoted(ctx context.Context) ([]computer.Computer, string, error) {
	partial := t.gw.PartialList()
	cs, err := t.Computers(ctx)
	return cs, partial, err
}

// accountOf returns the account whose computer traposID the caller means: its own; for an
// admin whose own account has none, or whose own account does not win (the gateway's own
// caller's, local: account.Caller.OwnWins), the one account that has it.
func (t Gateway) accountOf(caller account.Caller, traposID string) (string, error) {
	if caller.Only != "" && caller.Only != traposID {
		return "", protocol.Errorf(protocol.CodeNotConnected, "computer %s is not connected (this caller reaches only computer %s)", cctext.ShownName(traposID), cctext.ShowTraposID(caller.Only))
	}
	if !caller.Admin || t.connectedInOwnThatWins(caller, traposID) {
		// Its own, or connected in its own account: no walk over every computer (per request,
		// that walk cost 12 ms with 10 000 computers connected, 0.4 s with 100 000).
		return caller.Account, nil
	}
	owners := t.gw.AccountsOf(traposID)
	switch len(owners) {
	case 0:
		if relabelled := t.gw.RelabelledIn(traposID); len(relabelled) == 1 {
			return relabelled[0], nil // relabelled a moment ago: the gateway names its new id
		}
		return caller.Account, nil // not connected, answered by the gateway
	case 1:
		return owners[0], nil
	}
	return "", computer.ConnectedInSeveral(traposID, owners)
}

// connectedInOwnThatWins reports whether an admin caller's own account has computer traposID
// connected and so is the one it means: any such computer of an account whose own wins, local's
// (the gateway's own caller's) only while no other account has that traposId connected. One
// lookup of the registry either way: the gateway's own caller asks it for every request.
func (t Gateway) connectedInOwnThatWins(caller account.Caller, traposID string) bool {
	if caller.OwnWins() {
		return t.gw.Connected(caller.Account, traposID)
	}
	return t.gw.ConnectedAlone(caller.Account, traposID)
}

var _ computer.Uptimer = Gateway{}

// GatewayUptime implements computer.Uptimer: how long the gateway has run.
func (t Gateway) GatewayUptime() time.Duration { return t.gw.Uptime() }

var _ computer.Linker = Gateway{}

// ComputerCredentials implements computer.Linker: what accountID holds of computer credentials.
func (t Gateway) ComputerCredentials(ctx context.Context, accountID string) (account.Holding, error) {
	return t.gw.ComputerCredentials(ctx, accountID)
}

var _ computer.Reauthorizer = Gateway{}

// StillAuthorized implements computer.Reauthorizer: the server's check of the credentials the
// caller's request was authorized with (server.StillAuthorized).
func (t Gateway) StillAuthorized(ctx context.Context) error {
	if pe := server.StillAuthorized(ctx); pe != nil {
		return pe
	}
	return nil
}

// Request implements computer.Transport on gateway.Gateway.Request.
func (t Gateway) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	if t.log == nil || !t.log.Enabled(ctx, slog.LevelDebug) {
		return t.request(ctx, traposID, typ, payload, timeout)
	}
	start := time.Now()
	answer, err := t.request(ctx, traposID, typ, payload, timeout)
	outcome, by := "ok", ""
	if err != nil {
		outcome, by = string(protocol.CodeOf(err)), "gateway"
		if pe := (*protocol.Error)(nil); errors.As(err, &pe) && pe.ByComputer {
			by = "computer"
		}
	}
	attrs := []any{"account", account.CallerFrom(ctx).Account, "traposId", cctext.Clip(traposID, maxLoggedBytes),
		"type", cctext.Clip(typ, maxLoggedBytes), "outcome", outcome}
	if by != "" {
		attrs = append(attrs, "by", by)
	}
	t.log.Debug("host request", append(attrs, "ms", time.Since(start).Milliseconds())...)
	return answer, err
}

func (t Gateway) request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	// As POST …/requests: the caller's payload too large for a frame is the caller's to fix
	// (the gateway's own code for a frame it cannot send is internal).
	if mayExceedFrame(traposID, typ, payload) && frameTooLarge(traposID, typ, payload) {
		return nil, protocol.Errorf(protocol.CodeBadPayload, "%s", protocol.FrameTooLargeMessage)
	}
	accountID, err := t.accountOf(account.CallerFrom(ctx), traposID)
	if err != nil {
		return nil, err
	}
	if typ == protocol.TypeScreenInput {
		if answer, handled, err := t.relayedRequest(ctx, accountID, traposID, payload, timeout); handled {
			return answer, err
		}
	}
	resp, err := t.gw.RequestWithin(ctx, accountID, traposID, typ, payload, timeout)
	if err != nil {
		return nil, err
	}
	if !resp.OK {
		if resp.Error == nil {
			return nil, protocol.Errorf(protocol.CodeInternal, "computer %s answered %s with ok:false and no error", cctext.ShowTraposID(traposID), typ)
		}
		// A copy of the answer's error, so that the words the gateway added to an older
		// client's (olderClientsError's WithHostWords) stay apart from the computer's.
		answered := *resp.Error
		answered.ByComputer = true
		return nil, &answered
	}
	if len(resp.Payload) == 0 {
		return protocol.EmptyPayload, nil
	}
	return resp.Payload, nil
}

// HTTP is the computer.Transport of a gateway in another process, over its host API: what
// the CLI and the stdio MCP bridge use. The zero Client means http.DefaultClient.
type HTTP struct {
	// URL is the gateway's base URL (http://127.0.0.1:4444).
	URL string
	// Token is SANDBOX_API_TOKEN, sent as a Bearer token when set.
	Token  string
	Client *http.Client
	// ListedIDs says the traposIds it is given are as the lists give them (a computer's
	// traposId itself: MCP's, the stdio bridge's), not as a person types them (the CLI's,
	// whose escapes the API's path reads, cctext.TraposID): each is sent in its shown form
	// (cctext.ShowTraposID), which the API reads back as that very id. Sent as it was, a
	// label's own "\x41" was read as the byte 41: the bridge asked for 7:a\x41 reached 7:aA.
	ListedIDs bool
	// Clock times a request's wait for the gateway's answer (answerContext); nil: the wall
	// clock. Tests move a fake one past the wait rather than waiting it out.
	Clock clock.Clock
}

// TypedIDs says the traposIds h is given are as a person types them (computer.TypedIDTransport):
// without ListedIDs.
func (h HTTP) TypedIDs() bool { return !h.ListedIDs }

// computerPath is the API's path of the computer traposID (ListedIDs).
func (h HTTP) computerPath(traposID string) string {
	if h.ListedIDs {
		traposID = cctext.ShowTraposID(traposID)
	}
	return ComputersPath + "/" + url.PathEscape(traposID)
}

var _ computer.Transport = HTTP{}

// Computers implements computer.Transport: GET /trapos/computers.
func (h HTTP) Computers(ctx context.Context) ([]computer.Computer, error) {
	out, _, err := h.ComputersNoted(ctx)
	return out, err
}

var _ computer.PartialLister = HTTP{}

// ComputersNoted implements computer.PartialLister: GET /trapos/computers and its
// PartialListHeader.
func (h HTTP) ComputersNoted(ctx context.Context) ([]computer.Computer, string, error) {
	status, header, body, err := h.do(ctx, http.MethodGet, ComputersPath, nil)
	if err != nil {
		return nil, "", err
	}
	if status != http.StatusOK {
		return nil, "", h.Refusal(status, body)
	}
	var out []computer.Computer
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, "", fmt.Errorf("the gateway at %s answered its computer list with something else: %.200s", ShownURL(h.URL), cctext.Show(string(body), false))
	}
	return out, cctext.Show(header.Get(PartialListHeader), false), nil
}

// Check asks the gateway for its computer list once, so that a wrong URL or token shows at
// start with the fix, not at the first tool call.
func (h HTTP) Check(ctx context.Context) error {
	_, err := h.Computers(ctx)
	return err
}

// Request implements computer.Transport: POST …/requests with timeoutMs = timeout. The
// answer is awaited computer.RunSlack longer, so the gateway's own timeout answer arrives
// first. 200 carries the computer's answer; any other status, the gateway's error.
func (h HTTP) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	caller := ctx
	ctx, cancel := h.answerContext(caller, timeout)
	defer cancel()
	body, err := json.Marshal(RequestBody{Type: typ, Payload: payload, TimeoutMs: new(max(timeout.Milliseconds(), 1))})
	if err != nil {
		return nil, fmt.Errorf("encode the %s request: %w", typ, err)
	}
	status, header, data, err := h.do(ctx, http.MethodPost, h.computerPath(traposID)+"/requests", body)
	if err = h.answerError(caller, err, timeout); err != nil {
		return nil, err
	}
	var ans server.Answer
	if json.Unmarshal(data, &ans) != nil || (status == http.StatusOK && !ans.OK && ans.Error == nil) {
		return nil, h.NotTheAPI(status, data)
	}
	if status != http.StatusOK {
		return nil, withRetryAfter(h.Refusal(status, data), header)
	}
	if !ans.OK {
		return nil, ans.Error.FromTheAPI()
	}
	if len(ans.Payload) == 0 {
		return protocol.EmptyPayload, nil
	}
	return ans.Payload, nil
}

// answerError is the error of a request to the gateway that got no answer (err from do), as
// the caller sees it: a gateway silent past the request's timeout, or one not reached, is no
// computer's timeout.
func (HTTP) answerError(caller context.Context, err error, timeout time.Duration) error {
	var silent SilentGatewayError
	var unreachable UnreachableGatewayError
	switch {
	case caller.Err() != nil:
	case errors.As(err, &silent):
		// The gateway answers timeout itself once timeout has passed; RunSlack later it is the
		// gateway that has not answered, not the computer (one that is hung, or overloaded).
		return attributed(protocol.Errorf(protocol.CodeTimeout, "%v; its own timeout answer was due after %s", err, timeout))
	case errors.As(err, &unreachable):
		return attributed(protocol.Errorf(protocol.CodeTimeout, "%v", err)) // nor the computer: no gateway was reached
	}
	return err
}

// answerGrace is how long past its caller's deadline a request still waits for the gateway's
// answer: the gateway answers timeout itself at the request's timeoutMs, which a transfer
// sets to the time it has left (computer.Client's remaining), so that answer comes just after
// the caller's deadline.
const answerGrace = 500 * time.Millisecond

// answerContext is the context a request to the gateway is sent and awaited on: cancelled
// with the caller's, but awaited past the caller's deadline, up to answerGrace, for the
// gateway's own timeout answer (and never past timeout and computer.RunSlack). Abandoned at
// the caller's deadline, the request was still on its way: a transfer's next request, the
// removal of its temporary file, could reach the computer first, and the abandoned chunk
// then wrote a temporary file nobody named (a put whose --timeout ran out left one in a few
// runs of a hundred).
func (h HTTP) answerContext(caller context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	wait := timeout + computer.RunSlack
	if deadline, ok := caller.Deadline(); ok {
		wait = min(wait, time.Until(deadline)+answerGrace)
	}
	c := h.Clock
	if c == nil {
		c = clock.Real{}
	}
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(caller), c, wait)
	stop := context.AfterFunc(caller, func() {
		if !errors.Is(caller.Err(), context.DeadlineExceeded) {
			cancel() // the caller left: the request goes with it
		}
	})
	return ctx, func() {
		stop()
		cancel()
	}
}

// RevokeComputer asks the gateway to revoke the credential of the connected computer
// traposID and close its socket (POST …/revoke); it returns the gateway's answer payload.
func (h HTTP) RevokeComputer(ctx context.Context, traposID string) (json.RawMessage, error) {
	status, data, err := h.Do(ctx, http.MethodPost, h.computerPath(traposID)+"/revoke", []byte("{}"))
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, h.Refusal(status, data)
	}
	var ans server.Answer
	if err := json.Unmarshal(data, &ans); err != nil || !ans.OK {
		return nil, h.NotTheAPI(status, data)
	}
	return ans.Payload, nil
}

// Do sends one call to the gateway's API (body as JSON, the Bearer token when there is one)
// and returns the status and the body; the one home of calling the API over HTTP (with
// Open), which the account API's client uses too.
func (h HTTP) Do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	status, _, data, err := h.do(ctx, method, path, body)
	return status, data, err
}

// do is Do with the answer's header too.
func (h HTTP) do(ctx context.Context, method, path string, body []byte) (int, http.Header, []byte, error) {
	resp, err := h.Open(ctx, method, path, body, "")
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, resp.Header, nil, fmt.Errorf("read the gateway's answer: %w", err)
	}
	return resp.StatusCode, resp.Header, data, nil
}

// RetryAfter is the wait a Retry-After header asks for, in whole seconds as the gateway
// writes it (server.WriteAnswer); 0 when it names none, or names it otherwise (an HTTP date,
// a negative or unreadable number). A caller bounds it: a broken or hostile gateway may ask
// for a year.
func RetryAfter(header http.Header) time.Duration {
	v := strings.TrimSpace(header.Get("Retry-After"))
	seconds, err := strconv.ParseInt(v, 10, 64)
	if err != nil || seconds <= 0 {
		return 0
	}
	return time.Duration(min(seconds, int64(math.MaxInt64/time.Second))) * time.Second
}

// withRetryAfter is err with a busy answer's RetryAfter read from its header.
func withRetryAfter(err error, header http.Header) error {
	if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.Code == protocol.CodeBusy {
		pe.RetryAfter = RetryAfter(header)
	}
	return err
}

// Open is Do for an answer read as it comes (accept: a server-sent event stream, the screen's
// live view): it returns the response, whose body the caller reads and closes.
func (h HTTP) Open(ctx context.Context, method, path string, body []byte, accept string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	if err := CheckURL(h.URL); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(h.URL, "/")+path, rd)
	if err != nil {
		return nil, fmt.Errorf("the gateway URL %q: %w", ShownURL(h.URL), err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if why, atEnds := server.TokenFlaw(h.Token); why != "" && !atEnds {
		return nil, fmt.Errorf("the API token (--api-token or SANDBOX_API_TOKEN) %s: give the token alone", why)
	}
	if h.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.Token)
	}
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	var connected atomic.Bool // a deadline before it: no gateway took the call at all
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }}))
	resp, err := client.Do(req)
	switch {
	case err == nil:
		return resp, nil
	case errors.Is(err, context.DeadlineExceeded) && !connected.Load():
		return nil, UnreachableGatewayError{URL: ShownURL(h.URL)}
	case errors.Is(err, context.DeadlineExceeded):
		return nil, SilentGatewayError{URL: ShownURL(h.URL)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return nil, NoGatewayError{URL: ShownURL(h.URL)}
	case connected.Load() && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)):
		return nil, DroppedGatewayError{URL: ShownURL(h.URL)}
	}
	if pe := h.unreached(err); pe != nil {
		return nil, pe
	}
	return nil, fmt.Errorf("call the gateway at %s: %w", ShownURL(h.URL), err)
}

// plainHTTPToHTTPS is the error net/http gives an https:// call that a plain HTTP server
// answered (it has no exported value to compare with).
const plainHTTPToHTTPS = "server gave HTTP response to HTTPS client"

// unreached words, with the fix, the failures of a call that reached no gateway's API for an
// operator's mistake in --url, or returns nil: a host name the resolver does not know (Go's
// words named the resolver's address, "lookup gw.lan on 10.0.0.53:53: no such host"), and
// https:// for a gateway that serves plain HTTP, as every gateway does on --listen (Go's "http:
// server gave HTTP response to HTTPS client" named no fix).
func (h HTTP) unreached(err error) *protocol.Error {
	if dnsErr, ok := errors.AsType[*net.DNSError](err); ok && dnsErr.IsNotFound {
		return attributed(protocol.Errorf(protocol.CodeInternal, GatewayAt+"%s cannot be reached: this host's resolver does not know the host %q: "+
			"check the host name in --url or SANDBOX_URL", ShownURL(h.URL), dnsErr.Name))
	}
	u, perr := url.Parse(h.URL)
	if perr != nil || !strings.EqualFold(u.Scheme, "https") || !strings.Contains(err.Error(), plainHTTPToHTTPS) {
		return nil
	}
	u.Scheme = "http"
	return attributed(protocol.Errorf(protocol.CodeInternal, GatewayAt+"%s answers plain HTTP, not HTTPS (--listen serves no TLS; a reverse proxy in front of it does): "+
		"give %s, or the proxy's https:// URL (--url or SANDBOX_URL)", ShownURL(h.URL), u.Redacted()))
}

// GatewayAt begins every message of this client about the gateway itself rather than a
// computer (hung, out of reach, a token it refused); as a *protocol.Error such a message is
// attributed.
const GatewayAt = "the gateway at "

// attributed marks e as this client's own words about the gateway (protocol.Error's
// Attributed): a caller adds no computer's fix to it (more time does not help a gateway that
// does not answer).
func attributed(e *protocol.Error) *protocol.Error {
	e.Attributed = true
	return e
}

// SilentGatewayError is a call whose deadline passed before the gateway answered, on a
// connection it had taken: a gateway that is hung or overloaded. It is a
// context.DeadlineExceeded for errors.Is; its message names the gateway, not a computer.
type SilentGatewayError struct {
	URL string // as ShownURL shows it
}

func (e SilentGatewayError) Error() string {
	return fmt.Sprintf(GatewayAt+"%s did not answer in time: it may be hung or overloaded (see its log and GET /healthz)", e.URL)
}

// Unwrap makes the error a context.DeadlineExceeded.
func (SilentGatewayError) Unwrap() error { return context.DeadlineExceeded }

// UnreachableGatewayError is a call whose deadline passed before anything at the gateway's
// URL took the connection (a wrong host, a firewall that drops it): no gateway to blame. It is
// a context.DeadlineExceeded for errors.Is; its message names the address and what to check.
type UnreachableGatewayError struct {
	URL string // as ShownURL shows it
}

func (e UnreachableGatewayError) Error() string {
	return fmt.Sprintf(GatewayAt+"%s could not be reached in time (nothing took the connection): is the address right (--url or SANDBOX_URL), or does a firewall drop it?", e.URL)
}

// Unwrap makes the error a context.DeadlineExceeded.
func (UnreachableGatewayError) Unwrap() error { return context.DeadlineExceeded }

// DroppedGatewayError is a call whose connection the gateway closed before it answered: a
// gateway killed or crashed mid-request (a clean stop answers not_connected, "the gateway is
// shutting down"). What was asked may have reached the computer; its message says so.
type DroppedGatewayError struct {
	URL string // as ShownURL shows it
}

func (e DroppedGatewayError) Error() string {
	return e.WithoutMayHaveRun() + "; what was asked may have been done all the same: check before you ask again"
}

// WithoutMayHaveRun is the message without its "what was asked may have been done", for a
// caller that says what became of it instead (a write, of its file: computer.Client.Write).
func (e DroppedGatewayError) WithoutMayHaveRun() string {
	return fmt.Sprintf(GatewayAt+"%s closed the connection before it answered (it stopped or crashed: see its log)", e.URL)
}

// NoGatewayError is a call that found nothing listening at the gateway's URL (connection
// refused); its message names the fix, so a caller adds no hint of its own.
type NoGatewayError struct {
	URL string // as ShownURL shows it
}

func (e NoGatewayError) Error() string {
	return fmt.Sprintf("no gateway is listening at %s (connection refused): start it (trap-sandbox), or give its URL with --url or SANDBOX_URL", e.URL)
}

// ShownURL is raw as the client's messages show it: a password written into the URL
// (http://user:password@host, for a proxy's Basic Auth) is xxxxx; a URL that cannot be read
// is shown as it is only when it has no user part (no @), so never with a password.
func ShownURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Opaque == "" { // user:pw@host parses as opaque
		return u.Redacted()
	}
	if !strings.Contains(raw, "@") {
		return raw
	}
	return "(not shown: it has a user part)"
}

// CheckURL explains why raw cannot be the base URL of a gateway's API (--url, SANDBOX_URL),
// or returns nil.
func CheckURL(raw string) error {
	const fix = "give it as http://HOST:PORT, e.g. http://127.0.0.1:4444"
	scheme, _, found := strings.Cut(raw, "://")
	scheme = strings.ToLower(scheme)
	if !found || (scheme != "http" && scheme != "https" && scheme != "ws" && scheme != "wss") {
		return fmt.Errorf("the gateway URL %q is not an http:// or https:// URL: %s", ShownURL(raw), fix)
	}
	if scheme == "ws" || scheme == "wss" {
		return fmt.Errorf("the gateway URL %q is the computers' WebSocket URL: the API is at the same address with http:// (or https://), e.g. http://127.0.0.1:4444", ShownURL(raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("the gateway URL %q cannot be read (%s): %s", ShownURL(raw), errors.Unwrap(err), fix)
	}
	if u.Host == "" {
		return fmt.Errorf("the gateway URL %q cannot be read (no host): %s", u.Redacted(), fix)
	}
	// The API's paths are appended to the URL: after a query or a fragment they would be part
	// of it, and the gateway would answer its page at the URL's own path (a 404 read as an
	// older gateway's).
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return fmt.Errorf("the gateway URL %q has a query or a fragment (after ? or #), which the API's paths cannot follow: give the address alone, e.g. http://127.0.0.1:4444", u.Redacted())
	}
	// The URLs the gateway logs and the docs show (the computers' /trapos/ws, the install
	// line's /trapos/install, the web console's /console/) name a page of the gateway: the
	// API's paths after one of them reached no route, and the 404 named none of this.
	if base, page, ok := gatewayPageIn(u.Path); ok {
		b := *u
		b.Path, b.RawPath = base, ""
		return fmt.Errorf("the gateway URL %q ends in %s, a page of the gateway, which the API's paths cannot follow: give the address before it, %s", u.Redacted(), page, b.Redacted())
	}
	return nil
}

// trapOSPages are the gateway's paths under /trapos/ (the WebSocket, the installer and its
// files, the API's routes, docs/http-api.md), rootPages its other ones: a --url that names one
// is a page's address, not the base the API's paths are added to. A reverse proxy's base
// (https://mc.example.org/sandbox, or even …/trapos) names none of them.
var (
	trapOSPages = map[string]bool{"ws": true, "install": true, "files": true, "computers": true, "accounts": true,
		"tokens": true, "credentials": true, "link": true, "ai": true}
	rootPages = map[string]bool{"console": true, "mcp": true, "healthz": true, "metrics": true}
)

// gatewayPageIn finds the first of the gateway's own pages in a URL's path p: the base before
// it, and the page's path (/trapos/ws, /console).
func gatewayPageIn(p string) (base, page string, ok bool) {
	segs := strings.Split(p, "/")
	for i := 1; i < len(segs); i++ {
		switch {
		case segs[i] == "trapos" && i+1 < len(segs) && trapOSPages[segs[i+1]]:
			return strings.Join(segs[:i], "/"), "/trapos/" + segs[i+1], true
		case rootPages[segs[i]] && strings.Join(segs[i+1:], "") == "": // the last name, or before a final /
			return strings.Join(segs[:i], "/"), "/" + segs[i], true
		}
	}
	return "", "", false
}

// goNotFound is the body of Go's http.NotFound: what a gateway older than a route answers for
// it (today's gateway answers JSON for any path under its API, docs/http-api.md).
const goNotFound = "404 page not found\n"

// NotTheAPI is the error for an answer that is not the gateway API's: --url names another
// server (or a proxy's error page answered), or a gateway older than the route asked for. It
// is the one wording of it for every client of the API (the account API's client too); the
// *protocol.Error is attributed.
func (h HTTP) NotTheAPI(status int, body []byte) *protocol.Error {
	if status == http.StatusNotFound && string(body) == goNotFound {
		return attributed(protocol.Errorf(protocol.CodeInternal, GatewayAt+"%s has no such route (HTTP 404 page not found): "+
			"it is older than this trap-sandbox (upgrade the gateway), or --url names another server", ShownURL(h.URL)))
	}
	if title, ok := htmlTitle(body); ok && (status == http.StatusBadGateway || status == http.StatusGatewayTimeout) {
		// A reverse proxy that passed the call on (the web console's routes of
		// docs/reverse-proxy.md) and got no answer: --url is right, the gateway behind it is
		// not answering.
		return attributed(protocol.Errorf(protocol.CodeInternal, GatewayAt+"%s answered HTTP %d, a reverse proxy's page %q: "+
			"the proxy got no answer from the gateway behind it (stopped, or not at the address the proxy passes to); "+
			"start the gateway, or see why in the proxy's error log", ShownURL(h.URL), status, cctext.Clip(cctext.Show(title, false), 80)))
	}
	if len(bytes.TrimSpace(body)) == 0 {
		// Shown as the other bodies are, the message ended in ": " with nothing after it.
		return attributed(protocol.Errorf(protocol.CodeInternal, GatewayAt+"%s answered HTTP %d with an empty body, where the API answers JSON: "+
			"another server listens there (is that the gateway's URL? --url or SANDBOX_URL)", ShownURL(h.URL), status))
	}
	return attributed(protocol.Errorf(protocol.CodeInternal, GatewayAt+"%s answered HTTP %d with a body that is not the API's (is that the gateway's URL?): %s",
		ShownURL(h.URL), status, ShownBody(body)))
}

// NoGatewayBehind reports whether an answer of status with body, not the API's, is a load
// balancer's or reverse proxy's that reached no gateway behind it: a 502, 503 or 504 whose
// body is no API answer (nginx's "502 Bad Gateway" page with every replica down, HAProxy's
// 503, a balancer's plain "no healthy upstream"). A gateway's own 503 (busy) is the API's
// JSON, and not this. The live screen view waits on such an answer as on no gateway at --url.
func NoGatewayBehind(status int, body []byte) bool {
	switch status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
	default:
		return false
	}
	var ans server.Answer
	return json.Unmarshal(body, &ans) != nil || ans.Error == nil
}

// ShownBody is an answer's body as an error message quotes it: the text rule's view, without
// the line break that ends a plain-text page (shown, it read \x0a), at most 200 bytes. An HTML
// page is no gateway's answer (it answers JSON or plain text) but a web server's or a reverse
// proxy's, as nginx's 404 for the host API's paths when --url names the public https:// name:
// it is named by its title, with where the API is (shown whole, it was markup with \x0d\x0a
// for each line break and no word of what to do).
func ShownBody(body []byte) string {
	if title, ok := htmlTitle(body); ok {
		return fmt.Sprintf("an HTML page %q, a web server's or reverse proxy's, not a trap-sandbox gateway's: the host API is on the gateway's --listen port, of which a reverse proxy set up as docs/reverse-proxy.md passes only the web console's routes (its optional part: the list, a computer's requests, screen and input); reach the rest on the gateway's machine or through an SSH tunnel (docs/public-ports.md)",
			cctext.Clip(cctext.Show(title, false), 80))
	}
	return cctext.Clip(cctext.Show(strings.TrimRight(string(body), "\r\n"), false), 200)
}

// htmlTitle is the title of an HTML page (its <title> element's text, trimmed), or false when
// body is no HTML page.
func htmlTitle(body []byte) (string, bool) {
	page := strings.TrimSpace(string(body))
	if !strings.HasPrefix(page, "<") {
		return "", false
	}
	// ASCII only, byte for byte: strings.ToLower makes each byte of a page that is not UTF-8
	// (ISO-8859-1's é) three, and lower's places were no longer page's (the title was other
	// bytes, or the cut panicked).
	lower := []byte(page)
	for i, c := range lower {
		if 'A' <= c && c <= 'Z' {
			lower[i] = c + ('a' - 'A')
		}
	}
	start := bytes.Index(lower, []byte("<title>"))
	end := bytes.Index(lower, []byte("</title>"))
	if start < 0 || end < start {
		return "", false
	}
	return strings.TrimSpace(page[start+len("<title>") : end]), true
}

// Refusal is a non-200 answer as a *protocol.Error (the gateway's own code and message); the
// API auth's refusal (unauthorized) names the gateway that refused the call and its status,
// and, of a call that sent no token, the way to give one (NeedsToken), of a token, where that
// token came from. Any other refusal, a 403 forbidden too (the gateway's refusal of what was
// asked: a computer on the shared password has no credential to revoke), is its code and
// words, as every command words the gateway's answers ("the gateway answered forbidden: …"),
// not as a refused token.
func (h HTTP) Refusal(status int, body []byte) error {
	var ans server.Answer
	if json.Unmarshal(body, &ans) != nil || ans.Error == nil {
		return h.NotTheAPI(status, body)
	}
	e := ans.Error // with what the API says besides the words (Absent, Hint, …), which a hint reads
	if e.Code == protocol.CodeUnauthorized && (status == http.StatusUnauthorized || status == http.StatusForbidden) {
		e.Message = fmt.Sprintf(GatewayAt+"%s answered %d: %s", ShownURL(h.URL), status, e.Message)
		e.Attributed = true
	}
	switch {
	case NeedsToken(h.Token != "", status, e.Code):
		e.Message += GiveToken
	case status == http.StatusUnauthorized && e.Code == protocol.CodeUnauthorized:
		// The gateway's words say what is wrong with the token; this says where it came from.
		e.Message += " (the token refused is the one given with --api-token or SANDBOX_API_TOKEN)"
	}
	return e
}

// GiveToken ends a refusal that NeedsToken says a token would fix: where the client commands
// take one. The gateway's own SANDBOX_API_TOKEN and an account's both go there.
const GiveToken = " (give the API token with --api-token or SANDBOX_API_TOKEN)"

// NeedsToken reports whether a refusal is one a token would fix: the call sent none and the
// API auth refused it (401 unauthorized, or 403 unauthorized from the loopback or Host rule).
// A refusal of a call that sent a token says itself what is wrong with it, and any other 403
// (forbidden: the caller may not do that) is not fixed by a token.
func NeedsToken(tokenSent bool, status int, code protocol.Code) bool {
	return !tokenSent && code == protocol.CodeUnauthorized &&
		(status == http.StatusUnauthorized || status == http.StatusForbidden)
}
