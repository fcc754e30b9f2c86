package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// maxReplyBytes caps what is read of one opencode reply. A sync prompt's reply carries the
// whole answer (200 KB for a 200 000-character one), so the cap is generous; past it the reply
// is cut and only its error fields matter anyway.
const maxReplyBytes = 8 << 20

// client is the gateway's opencode HTTP client: every call names its directory (?directory=D,
// a computer's: in), except the global event stream, and carries the Basic credentials, which
// never leave the host.
type client struct {
	base     *url.URL
	dir      string
	username string
	password string
	http     *http.Client
}

// apiError is a non-2xx answer from opencode: its status and, when the body is one of
// opencode's error objects, its name and message (never the body itself: a provider's 401
// echoes headers and body, keys included).
type apiError struct {
	status  int
	name    string
	message string
}

func (e *apiError) Error() string {
	if e.message != "" {
		return fmt.Sprintf("opencode answered HTTP %d (%s: %s)", e.status, e.name, e.message)
	}
	return fmt.Sprintf("opencode answered HTTP %d", e.status)
}

// namedError is opencode's error object: {"name":"APIError","data":{"message":…}}. Only name
// and data.message are read.
type namedError struct {
	Name string `json:"name"`
	Data struct {
		Message string `json:"message"`
	} `json:"data"`
}

// errorOf reads the name and message of an opencode error body. opencode 1.18.33 has two
// shapes: {"name":"NotFoundError","data":{"message":…}} (sessions, prompts) and
// {"_tag":"PermissionNotFoundError","message":…} (permission replies, MCP servers), where
// a "name" field, if any, is the thing not found, not the error's name.
func errorOf(data []byte) (name, message string) {
	var e struct {
		Tag     string `json:"_tag"`
		Message string `json:"message"`
		namedError
	}
	if json.Unmarshal(data, &e) != nil {
		return "", ""
	}
	if e.Tag != "" {
		return e.Tag, firstLine(e.Message)
	}
	return e.Name, firstLine(e.Data.Message)
}

// notJSONError is a 2xx answer that is not the JSON expected: opencode answers a route it
// does not have (an older one) with its web UI, 200 in HTML.
type notJSONError struct{ err error }

func (e *notJSONError) Error() string { return e.err.Error() }
func (e *notJSONError) Unwrap() error { return e.err }

// Rule is one opencode permission rule.
type Rule struct {
	Permission string `json:"permission"`
	Pattern    string `json:"pattern"`
	Action     string `json:"action"`
}

// ocSession is what opencode answers about a session (the fields the gateway reads).
type ocSession struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Directory  string `json:"directory"`
	ParentID   string `json:"parentID,omitempty"`
	Permission []Rule `json:"permission"`
}

// in returns the client of directory dir.
func (c *client) in(dir string) *client {
	d := *c
	d.dir = dir
	return &d
}

func (c *client) url(path string, query url.Values) string {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	if query == nil {
		query = url.Values{}
	}
	if c.dir != "" {
		query.Set("directory", c.dir)
	}
	u.RawQuery = query.Encode()
	return u.String()
}

func (c *client) newRequest(ctx context.Context, method, path string, query url.Values, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url(path, query), rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.password != "" {
		req.SetBasicAuth(c.username, c.password)
	}
	return req, nil
}

// do sends req. A request that got no answer is said without its URL, whose query holds the
// host's directory (a computer reads such an error when opencode's probe passes).
func (c *client) do(req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	var ue *url.Error
	if errors.As(err, &ue) {
		return nil, fmt.Errorf("opencode did not answer %s %s: %w", req.Method, req.URL.Path, ue.Err)
	}
	return resp, err
}

// call sends one request and decodes a 2xx JSON answer into out (nil: ignored). A non-2xx
// answer is an *apiError.
func (c *client) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	req, err := c.newRequest(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
	if err != nil {
		return fmt.Errorf("read opencode's answer to %s %s: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &apiError{status: resp.StatusCode}
		e.name, e.message = errorOf(data)
		return e
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &notJSONError{fmt.Errorf("opencode's answer to %s %s is not the JSON expected (is the URL opencode's?): %w", method, path, err)}
	}
	return nil
}

// findSession returns the root session of the directory titled exactly title, or nil.
func (c *client) findSession(ctx context.Context, title string) (*ocSession, error) {
	var list []ocSession
	q := url.Values{"search": {title}, "roots": {"true"}}
	if err := c.call(ctx, http.MethodGet, "/session", q, nil, &list); err != nil {
		return nil, err
	}
	for i := range list {
		// search is a substring match: "7:a" also finds "17:ab"'s title.
		if list[i].Title == title && list[i].ParentID == "" {
			return &list[i], nil
		}
	}
	return nil, nil
}

// listSessions returns the root sessions of the directory (a list opencode may cut).
func (c *client) listSessions(ctx context.Context) ([]ocSession, error) {
	var list []ocSession
	if err := c.call(ctx, http.MethodGet, "/session", url.Values{"roots": {"true"}}, nil, &list); err != nil {
		return nil, err
	}
	return list, nil
}

func (c *client) createSession(ctx context.Context, title string, rules []Rule) (*ocSession, error) {
	var s ocSession
	body := map[string]any{"title": title, "permission": rules}
	if err := c.call(ctx, http.MethodPost, "/session", nil, body, &s); err != nil {
		return nil, err
	}
	if s.ID == "" {
		return nil, errors.New("opencode created a session without an id")
	}
	return &s, nil
}

func (c *client) deleteSession(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodDelete, "/session/"+url.PathEscape(id), nil, nil, nil)
}

// models lists, as PROVIDER/MODEL, the models of the providers opencode has configured for
// the directory (GET /config/providers: {"providers":[{"id","models":{"<id>":{…}}}],…}). A
// provider opencode knows of but has no key for is not there: its models are not found.
func (c *client) models(ctx context.Context) ([]string, error) {
	var out struct {
		Providers []struct {
			ID     string                     `json:"id"`
			Models map[string]json.RawMessage `json:"models"`
		} `json:"providers"`
	}
	if err := c.call(ctx, http.MethodGet, "/config/providers", nil, nil, &out); err != nil {
		return nil, err
	}
	var names []string
	for _, p := range out.Providers {
		for id := range p.Models {
			names = append(names, p.ID+"/"+id)
		}
	}
	slices.Sort(names)
	return names, nil
}

// promptBody is a prompt: the text, the model (always: opencode's default would send the
// player's text to a model the operator did not choose), and the gateway's system text.
type promptBody struct {
	Parts  []textPart `json:"parts"`
	Model  modelRef   `json:"model"`
	System string     `json:"system,omitempty"`
}

type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type modelRef struct {
	ProviderID string `json:"providerID"`
	ModelID    string `json:"modelID"`
}

// promptReply is the sync prompt's answer: the turn's last assistant message. Its error is
// read, and its text parts settle what the event stream did not carry (text.go).
type promptReply struct {
	Info struct {
		ID   string `json:"id"`
		Role string `json:"role"`
		// Finish is how its model finished the message ("stop", …); "" when it did not:
		// the turn was stopped on opencode (outcome).
		Finish string      `json:"finish"`
		Error  *namedError `json:"error"`
		// ParentID is the turn's user message: every assistant message of the turn has it.
		ParentID string `json:"parentID"`
	} `json:"info"`
	Parts []ocPart `json:"parts"`
}

// ocPart is one part of a message, as the sync reply and the message list carry it.
type ocPart struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`
}

// historyLimit is how many of a session's last messages the gateway reads to settle a turn's
// text: a turn has one message per step (each tool call starts a new one).
const historyLimit = 100

// messages lists the session's last historyLimit messages, oldest first (GET
// /session/{id}/message: [{info, parts}]).
func (c *client) messages(ctx context.Context, sessionID string) ([]promptReply, error) {
	var out []promptReply
	query := url.Values{"limit": {fmt.Sprint(historyLimit)}}
	if err := c.call(ctx, http.MethodGet, "/session/"+url.PathEscape(sessionID)+"/message", query, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// prompt runs one turn and returns when opencode ends it (the sync route: its answer is the
// authoritative end). It has no timeout of its own: the turn's context is the deadline.
func (c *client) prompt(ctx context.Context, sessionID string, body promptBody) (*promptReply, error) {
	var r promptReply
	if err := c.call(ctx, http.MethodPost, "/session/"+url.PathEscape(sessionID)+"/message", nil, body, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// busy reports whether the session has a turn running in the directory's instance: GET
// /session/status lists only the sessions that are not idle.
func (c *client) busy(ctx context.Context, sessionID string) (bool, error) {
	var status map[string]struct {
		Type string `json:"type"`
	}
	if err := c.call(ctx, http.MethodGet, "/session/status", nil, nil, &status); err != nil {
		return false, err
	}
	st, listed := status[sessionID]
	return listed && st.Type != "idle", nil
}

func (c *client) abort(ctx context.Context, sessionID string) error {
	return c.call(ctx, http.MethodPost, "/session/"+url.PathEscape(sessionID)+"/abort", nil, nil, nil)
}

// replyPermission answers a permission ask: "once" or "reject" (with a message, so the turn
// goes on and the model reads why). Never "always": it would hold for the whole instance.
func (c *client) replyPermission(ctx context.Context, id, reply, message string) error {
	body := map[string]string{"reply": reply}
	if message != "" {
		body["message"] = message
	}
	return c.call(ctx, http.MethodPost, "/permission/"+url.PathEscape(id)+"/reply", nil, body, nil)
}

// mcpStatus is one MCP server's state in GET /mcp: "connected", "failed" (with error),
// "disabled", "needs_auth"….
type mcpStatus struct {
	Status string `json:"status"`
	Error  string `json:"error"`
}

// ensureMCP makes sure the directory's instance is connected to the gateway's MCP server:
// opencode connects an instance's MCP servers once, when the instance starts, and never
// retries, so an instance that started while the gateway was down (or its /mcp unreachable)
// is told to connect again.
func (c *client) ensureMCP(ctx context.Context) error {
	var all map[string]mcpStatus
	if err := c.call(ctx, http.MethodGet, "/mcp", nil, nil, &all); err != nil {
		return err
	}
	if all[MCPName].Status == "connected" {
		return nil
	}
	if err := c.call(ctx, http.MethodPost, "/mcp/"+MCPName+"/connect", nil, nil, nil); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.status == http.StatusNotFound {
			// McpServerNotFoundError: the instance's config has no such server (opencode reads
			// the directory's opencode.json when the instance starts, on its own host).
			return &hostError{
				player: fmt.Sprintf("opencode has no %s MCP server for this computer: its operator must restart opencode on the gateway's host", MCPName),
				full: fmt.Sprintf("opencode has no %s MCP server for %s (it read %s before the gateway wrote it, or runs on another host): restart opencode on the gateway's host",
					MCPName, c.dir, ConfigFile)}
		}
		return err
	}
	all = nil
	if err := c.call(ctx, http.MethodGet, "/mcp", nil, nil, &all); err != nil {
		return err
	}
	if st := all[MCPName]; st.Status != "connected" {
		detail, where := st.Status, st.Status
		if detail == "" {
			detail, where = "not configured for this computer", "not configured in "+filepath.Join(c.dir, ConfigFile)
		}
		if st.Error != "" {
			detail += ": " + firstLine(st.Error)
			where += ": " + firstLine(st.Error)
		}
		he := &hostError{player: "opencode cannot reach the gateway's MCP endpoint (" + detail + ")",
			full: "opencode cannot reach the gateway's MCP endpoint (" + where + ")"}
		if st.Status == "failed" {
			// It tried the URL the gateway wrote (--ai-mcp-url), and found no MCP server there.
			he.fault = faultMCP
		}
		return he
	}
	return nil
}

// hostError is an opencode failure whose whole story names the gateway's host (a computer's
// directory there): the computer reads the player's line, which does not (a player has no
// business with the host's paths, nor can use them); the operator's log gets the whole.
type hostError struct {
	player, full string
	// fault is whose fix it is, when not opencode's own (faultOpencode).
	fault *fault
}

func (e *hostError) Error() string { return e.full }

// openEvents opens the global event stream: every directory's events, each frame wrapped as
// {"directory","payload":{type, properties}} (opencode-prompting.md, 1.6), so one stream
// serves every computer's directory.
func (c *client) openEvents(ctx context.Context) (*http.Response, error) {
	req, err := c.newRequest(ctx, http.MethodGet, "/global/event", nil, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, &apiError{status: resp.StatusCode}
	}
	return resp, nil
}

// firstLine is s up to its first line break, clipped: what reaches a computer or a log of a
// message opencode or a provider wrote.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.TrimSpace(s)
	const max = 300
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xC0 == 0x80 { // never split a UTF-8 sequence
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// heartbeatGrace is how long the event stream may stay silent before the gateway calls it
// dead: opencode sends a heartbeat every 10 s.
const heartbeatGrace = 30 * time.Second

// openGrace is how long an attempt to open the event stream may wait for its first frame,
// which opencode sends at once (stream.openGrace).
const openGrace = 5 * time.Second
