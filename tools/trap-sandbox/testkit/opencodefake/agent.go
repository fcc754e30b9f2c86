package opencodefake

// The agent half of the fake: opencode's conversation routes as opencode 1.18.33 answers them
// (/work/shared/reference/opencode-prompting.md), with a scripted model. What it reproduces:
// instances per ?directory= that read the directory's opencode.json and connect its MCP
// servers once, when the instance starts, never again on their own (POST /mcp/{name}/connect
// does); sessions with permission rules (findLast, session rules after the config's, "*"
// deny hides a tool); the sync prompt (200 with info.error on a provider failure, a bare 500
// for an unknown model with the reason only on the stream) and prompt_async (204); /event
// (one directory's) and /global/event (every directory's, each frame wrapped with its
// directory) with text deltas, tool parts (pending → running → completed/error) and permission asks that
// carry no arguments (the tool part with the input comes right after the ask); replies
// once/reject (with and without a message)/always (instance-wide); abort; retries; a
// provider that stalls; a second prompt on a busy session queued, not refused; session.idle
// twice in a row after an error or an abort; an event stream that closes mid-turn (DropStreams);
// GET /session/{id}/message (every step of a turn, where the sync reply has only the last);
// GET /session/status (the sessions not idle); GET /config/providers (the providers configured);
// POST /instance/dispose (the instance goes, its sessions stay; a turn running there is aborted).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HostTools are opencode's own tools a model is offered unless the rules deny them.
var HostTools = []string{"bash", "edit", "write", "read", "glob", "grep", "list", "webfetch", "websearch", "task",
	"todowrite", "question", "skill"}

// DefaultModel is what opencode uses when neither the prompt nor the config names a model:
// OpenCode Zen's free model, an external service.
const DefaultModel = "opencode/big-pickle"

// Rule is an opencode permission rule.
type Rule struct {
	Permission string `json:"permission"`
	Pattern    string `json:"pattern"`
	Action     string `json:"action"`
}

// Model scripts one turn: it is called for every prompt, in a goroutine of its own, and
// drives the turn through t; the turn ends when it returns.
type Model func(t *Turn)

// Agent is the fake's agent half (see Server.Agent).
type Agent struct {
	// BeforePrompt, when set (before the first request), runs in each prompt's request before
	// its turn starts: a test holds a prompt there to make an abort overtake it.
	BeforePrompt func()
	// BeforeProviders, when set (before the first request), runs in each GET /config/providers
	// before it answers: a test holds it there, as a fresh opencode lists its providers slowly.
	BeforeProviders func(r *http.Request)

	srv   *Server
	model Model

	mu sync.Mutex
	// models are the PROVIDER/MODEL names the fake knows (AddModel adds one); a prompt naming
	// another is the real server's bare 500.
	models    []string
	instances map[string]*instance
	starts    map[string]int // instance starts per directory, disposed instances' too
	disposes  map[string]int
	// noDispose: an opencode older than POST /instance/dispose (WithoutDispose).
	noDispose atomic.Bool
	sessions  map[string]*Session
	asks      map[string]*ask
	subs      map[*subscriber]struct{}
	seq       int

	abortSeen   chan struct{} // closed at the first abort
	abortOnce   sync.Once
	prompts     atomic.Int64
	running     atomic.Int64
	queued      atomic.Int64
	aborts      atomic.Int64
	defaultUsed atomic.Int64
	always      atomic.Int64
}

type instance struct {
	dir      string
	mcpURL   string
	headers  map[string]string
	status   map[string]any // GET /mcp's entry for trap-sandbox
	mcp      *sdk.ClientSession
	tools    []string // the MCP tools, as opencode names them
	cfgPerm  []Rule
	approved map[string]bool // "always" answers: instance-wide
	// started is closed once the instance has read its opencode.json and connected its MCP
	// server: a request that arrives meanwhile waits, as opencode's requests wait for an
	// instance that is starting (mcpURL, headers and cfgPerm are written only before it).
	started chan struct{}
}

// sessionTime is a session's time field, in epoch milliseconds.
type sessionTime struct {
	Created int64 `json:"created"`
	Updated int64 `json:"updated"`
}

// Session is one fake session.
type Session struct {
	ID         string      `json:"id"`
	Slug       string      `json:"slug"`
	ProjectID  string      `json:"projectID"`
	Directory  string      `json:"directory"`
	Path       string      `json:"path"`
	Cost       float64     `json:"cost"`
	Tokens     any         `json:"tokens"`
	Title      string      `json:"title"`
	Version    string      `json:"version"`
	Time       sessionTime `json:"time"`
	Permission []Rule      `json:"permission,omitempty"` // absent when the session has none

	busy  chan struct{} // closed when the running turn ends; nil when idle
	abort context.CancelFunc
	// dropped is the last turn's end when it was aborted or failed: the prompts queued behind
	// it (waiting on its busy) answer its result.
	dropped *droppedBy
	// retry is the running turn's session.status while it waits to retry its provider
	// (Turn.Retry), nil otherwise: GET /session/status lists it instead of busy.
	retry    map[string]any
	history  []string
	messages []*message
}

// droppedBy is a turn that ended aborted or failed, and what its prompt answered.
type droppedBy struct {
	busy chan struct{}
	res  turnResult
}

// message is one stored message, as GET /session/{id}/message lists it: its info and its
// parts in order, each as its last message.part.updated carried it.
type message struct {
	info  map[string]any
	parts []map[string]any
}

// store appends a message to s (under a.mu).
func (a *Agent) store(s *Session, info map[string]any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s.messages = append(s.messages, &message{info: maps.Clone(info)})
}

// storePart records a part of s's message msgID: a part with a new id is appended, a known
// one replaced, as opencode keeps a part's latest state.
func (a *Agent) storePart(s *Session, msgID string, p map[string]any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range s.messages {
		if m.info["id"] != msgID {
			continue
		}
		for i, old := range m.parts {
			if old["id"] == p["id"] {
				m.parts[i] = maps.Clone(p)
				return
			}
		}
		m.parts = append(m.parts, maps.Clone(p))
		return
	}
}

// lastMessage is s's last message's info and parts (copies), under a.mu.
func (a *Agent) lastMessage(s *Session, info map[string]any) (map[string]any, []any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := s.messages[len(s.messages)-1]
	maps.Copy(m.info, info)
	parts := make([]any, 0, len(m.parts))
	for _, p := range m.parts {
		parts = append(parts, maps.Clone(p))
	}
	return maps.Clone(m.info), parts
}

type ask struct {
	id      string
	session string
	reply   chan askReply
}

type askReply struct {
	reply, message string
}

type subscriber struct {
	dir    string
	global bool // /global/event: every directory's events, wrapped
	ch     chan []byte
	drop   chan struct{} // closed by DropStreams: the stream ends
}

// Agent adds the conversation routes to the fake, the model scripted by model; models are
// the PROVIDER/MODEL names it knows. Call it before the first request.
func (s *Server) Agent(model Model, models ...string) *Agent {
	a := &Agent{srv: s, model: model, models: models, instances: map[string]*instance{}, starts: map[string]int{}, disposes: map[string]int{}, sessions: map[string]*Session{},
		asks: map[string]*ask{}, subs: map[*subscriber]struct{}{}, abortSeen: make(chan struct{})}
	s.onClose = append(s.onClose, a.closeAll)
	s.Handle("GET /session", http.HandlerFunc(a.listSessions))
	s.Handle("POST /session", http.HandlerFunc(a.createSession))
	s.Handle("GET /session/{id}", http.HandlerFunc(a.getSession))
	s.Handle("DELETE /session/{id}", http.HandlerFunc(a.deleteSession))
	s.Handle("POST /session/{id}/message", http.HandlerFunc(a.promptSync))
	s.Handle("GET /session/{id}/message", http.HandlerFunc(a.listMessages))
	s.Handle("POST /session/{id}/prompt_async", http.HandlerFunc(a.promptAsync))
	s.Handle("POST /session/{id}/abort", http.HandlerFunc(a.abortSession))
	s.Handle("GET /session/status", http.HandlerFunc(a.sessionStatus))
	s.Handle("GET /event", http.HandlerFunc(a.events))
	s.Handle("GET /global/event", http.HandlerFunc(a.events))
	s.Handle("GET /permission", http.HandlerFunc(a.listAsks))
	s.Handle("POST /permission/{id}/reply", http.HandlerFunc(a.replyAsk))
	s.Handle("GET /mcp", http.HandlerFunc(a.mcpStatus))
	s.Handle("POST /mcp/{name}/connect", http.HandlerFunc(a.mcpConnect))
	s.Handle("POST /instance/dispose", http.HandlerFunc(a.dispose))
	s.Handle("GET /config/providers", http.HandlerFunc(a.providers))
	return a
}

// providers is GET /config/providers as opencode 1.18.33 answers it: the providers it has
// configured (a provider it knows of but has no credentials for is not listed), each with its
// models by id, and each provider's default model: {"providers":[{"id":"opencode","name":…,
// "models":{"big-pickle":{"id":…,"providerID":…,"name":…},…}}],"default":{"opencode":"big-pickle"}}.
// The fake's providers are those of the models it knows.
func (a *Agent) providers(w http.ResponseWriter, r *http.Request) {
	a.instanceFor(r)
	if a.BeforeProviders != nil {
		a.BeforeProviders(r)
	}
	list := []map[string]any{}
	a.mu.Lock()
	defer a.mu.Unlock()
	byID := map[string]map[string]any{}
	defaults := map[string]string{}
	for _, known := range a.models {
		provider, id, _ := strings.Cut(known, "/")
		models := byID[provider]
		if models == nil {
			models = map[string]any{}
			byID[provider] = models
			defaults[provider] = id
			list = append(list, map[string]any{"id": provider, "name": provider, "source": "config", "models": models})
		}
		models[id] = map[string]any{"id": id, "providerID": provider, "name": id}
	}
	writeJSON(w, http.StatusOK, map[string]any{"providers": list, "default": defaults})
}

// AddModel makes the fake know model (PROVIDER/MODEL) from now on, as opencode does once its
// operator gives it the provider's key (opencode auth login): its providers list it, and a
// prompt may name it.
func (a *Agent) AddModel(model string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.models = append(a.models, model)
}

// RemoveModel makes the fake forget model from now on, as an opencode restarted without the
// provider's key (or with its name changed in opencode.json) does: its providers no longer
// list it, and a prompt naming it gets "Model not found".
func (a *Agent) RemoveModel(model string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.models = slices.DeleteFunc(a.models, func(m string) bool { return m == model })
}

// Prompts counts prompts received; Queued those that arrived while their session was busy;
// Aborts the abort calls; DefaultModelUsed the prompts that named no model; Always the
// permission replies "always".
func (a *Agent) Prompts() int64          { return a.prompts.Load() }
func (a *Agent) Queued() int64           { return a.queued.Load() }
func (a *Agent) Aborts() int64           { return a.aborts.Load() }
func (a *Agent) DefaultModelUsed() int64 { return a.defaultUsed.Load() }
func (a *Agent) Always() int64           { return a.always.Load() }

// AbortSeen is closed when the first abort arrives (on a busy or an idle session).
func (a *Agent) AbortSeen() <-chan struct{} { return a.abortSeen }

// Running counts the turns whose model is at work now.
func (a *Agent) Running() int64 { return a.running.Load() }

// InstanceStarts counts how often the instance of dir started (read its config, connected).
func (a *Agent) InstanceStarts(dir string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.starts[dir]
}

// Instances lists the directories with an instance running, sorted.
func (a *Agent) Instances() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Sorted(maps.Keys(a.instances))
}

// Disposes counts the POST /instance/dispose of dir.
func (a *Agent) Disposes(dir string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.disposes[dir]
}

// WithoutDispose makes the fake an opencode older than POST /instance/dispose: the route is
// an unknown one, which opencode answers with its web UI (200, HTML).
func (a *Agent) WithoutDispose() { a.noDispose.Store(true) }

// dispose is POST /instance/dispose?directory=D, as opencode 1.18.33 answers it: true, for any
// directory (one without an instance, or that does not exist, too); the instance goes, its
// MCP connection closed, its "always" answers with it, a turn running in D is aborted (the
// sync prompt answers as for POST /session/{id}/abort), and server.instance.disposed is sent
// on the event streams. Its sessions stay: a later request in D starts a new instance (which
// reads D's opencode.json and connects its MCP server again) that continues them. (The real
// one starts an instance of D first when none runs, then disposes it.)
func (a *Agent) dispose(w http.ResponseWriter, r *http.Request) {
	if a.noDispose.Load() {
		a.srv.serveWebUI(w, r)
		return
	}
	dir := r.URL.Query().Get("directory")
	if d, err := url.PathUnescape(dir); err == nil {
		dir = d
	}
	a.mu.Lock()
	in := a.instances[dir]
	a.mu.Unlock()
	if in != nil {
		<-in.started
	}
	a.mu.Lock()
	if in != nil && a.instances[dir] == in {
		delete(a.instances, dir)
		if in.mcp != nil {
			in.mcp.Close()
			in.mcp = nil
		}
	}
	for _, s := range a.sessions {
		if s.Directory == dir && s.abort != nil {
			s.abort()
		}
	}
	a.disposes[dir]++
	a.mu.Unlock()
	a.emit(dir, "server.instance.disposed", map[string]any{"directory": dir})
	writeJSON(w, http.StatusOK, true)
}

// Sessions returns a copy of every session.
func (a *Agent) Sessions() []Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []Session{}
	for _, s := range a.sessions {
		out = append(out, Session{ID: s.ID, Directory: s.Directory, Title: s.Title, Permission: slices.Clone(s.Permission),
			history: slices.Clone(s.history)})
	}
	slices.SortFunc(out, func(x, y Session) int { return strings.Compare(x.ID, y.ID) })
	return out
}

// History is the prompts the session received, in order.
func (s Session) History() []string { return s.history }

// PendingAsks counts the permission asks not answered yet.
func (a *Agent) PendingAsks() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asks)
}

func (a *Agent) nextID(prefix string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	return fmt.Sprintf("%s_%04dfake", prefix, a.seq)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func namedError(name, message string) map[string]any {
	return map[string]any{"name": name, "data": map[string]any{"message": message}}
}

// unknownError is the real server's answer to what it did not expect (a bare 500): the
// reason is only in its log, under ref.
func unknownError() map[string]any {
	return map[string]any{"name": "UnknownError", "data": map[string]any{
		"message": "Unexpected server error. Check server logs for details.", "ref": "err_fake"}}
}

// instanceFor returns the instance of the request's directory, starting it on first use: it
// reads the directory's opencode.json and connects its trap-sandbox MCP server, once.
//
// Like opencode 1.18.33, it decodes ?directory= once more than the query needs: a directory
// named "7%3Adesk" is taken for "7:desk".
func (a *Agent) instanceFor(r *http.Request) *instance {
	dir := r.URL.Query().Get("directory")
	if d, err := url.PathUnescape(dir); err == nil {
		dir = d
	}
	a.mu.Lock()
	in := a.instances[dir]
	if in != nil {
		a.mu.Unlock()
		<-in.started
		return in
	}
	in = &instance{dir: dir, approved: map[string]bool{}, started: make(chan struct{})}
	a.instances[dir] = in
	a.starts[dir]++
	a.mu.Unlock()
	defer close(in.started)
	in.readConfig()
	a.connect(r.Context(), in)
	return in
}

func (in *instance) readConfig() {
	data, err := os.ReadFile(filepath.Join(in.dir, "opencode.json"))
	if err != nil {
		return
	}
	var cfg struct {
		MCP map[string]struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcp"`
		Permission map[string]string `json:"permission"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return
	}
	if s, ok := cfg.MCP["trap-sandbox"]; ok && s.Type == "remote" {
		in.mcpURL, in.headers = s.URL, s.Headers
	}
	keys := make([]string, 0, len(cfg.Permission))
	for k := range cfg.Permission {
		keys = append(keys, k)
	}
	slices.Sort(keys) // "*" first, as in the files the gateway writes
	for _, k := range keys {
		in.cfgPerm = append(in.cfgPerm, Rule{Permission: k, Pattern: "*", Action: cfg.Permission[k]})
	}
}

// headerTransport sends an MCP server's configured headers, and keeps the status of an answer
// that was not 2xx: opencode's error names it.
type headerTransport struct {
	headers map[string]string
	refused *atomic.Int32
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	resp, err := (&http.Transport{DisableKeepAlives: true}).RoundTrip(r)
	if err == nil && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		h.refused.CompareAndSwap(0, int32(resp.StatusCode))
	}
	return resp, err
}

// connect connects the instance's MCP server, as opencode does when an instance starts.
func (a *Agent) connect(ctx context.Context, in *instance) {
	if in.mcpURL == "" {
		a.mu.Lock()
		in.status = nil
		a.mu.Unlock()
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "opencode", Version: Version}, nil)
	var refused atomic.Int32
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: in.mcpURL,
		HTTPClient: &http.Client{Transport: headerTransport{in.headers, &refused}}, MaxRetries: -1}, nil)
	var tools []string
	if err == nil {
		var list *sdk.ListToolsResult
		if list, err = cs.ListTools(ctx, nil); err == nil {
			for _, t := range list.Tools {
				tools = append(tools, "trap-sandbox_"+t.Name)
			}
		} else {
			cs.Close()
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if in.mcp != nil {
		in.mcp.Close()
		in.mcp = nil
	}
	if err != nil {
		// opencode 1.18.33's words: an answer that was not 2xx by its status, any other
		// failure (nothing listens there) as Bun's fetch words it.
		why := "SSE error: Unable to connect. Is the computer able to access the url?"
		if code := refused.Load(); code != 0 {
			why = fmt.Sprintf("SSE error: Non-200 status code (%d)", code)
		}
		in.status = map[string]any{"status": "failed", "error": why}
		in.tools = nil
		return
	}
	in.mcp, in.tools = cs, tools
	in.status = map[string]any{"status": "connected"}
}

func (a *Agent) mcpStatus(w http.ResponseWriter, r *http.Request) {
	in := a.instanceFor(r)
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]any{}
	if in.status != nil {
		out["trap-sandbox"] = in.status
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *Agent) mcpConnect(w http.ResponseWriter, r *http.Request) {
	in := a.instanceFor(r)
	if r.PathValue("name") != "trap-sandbox" || in.mcpURL == "" {
		writeJSON(w, http.StatusNotFound, map[string]any{"_tag": "McpServerNotFoundError", "name": r.PathValue("name"),
			"message": "MCP server not found: " + r.PathValue("name")})
		return
	}
	a.connect(r.Context(), in)
	writeJSON(w, http.StatusOK, true)
}

// closeAll ends the MCP connections (the server's Close calls it).
func (a *Agent) closeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, in := range a.instances {
		if in.mcp != nil {
			in.mcp.Close()
			in.mcp = nil
		}
	}
}

func (a *Agent) listSessions(w http.ResponseWriter, r *http.Request) {
	// Without ?directory= the list holds every directory's sessions.
	all := !r.URL.Query().Has("directory")
	in := a.instanceFor(r)
	search := r.URL.Query().Get("search")
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []*Session{}
	for _, s := range a.sessions {
		if (all || s.Directory == in.dir) && strings.Contains(s.Title, search) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(x, y *Session) int { return strings.Compare(x.ID, y.ID) })
	writeJSON(w, http.StatusOK, out)
}

func (a *Agent) createSession(w http.ResponseWriter, r *http.Request) {
	in := a.instanceFor(r)
	// A body that is not JSON is a 400 with only a tag; an unknown key is ignored (the spec
	// says additionalProperties: false, but 1.18.33 creates the session anyway).
	body := map[string]json.RawMessage{}
	if data, _ := io.ReadAll(r.Body); len(bytes.TrimSpace(data)) > 0 && json.Unmarshal(data, &body) != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"_tag": "BadRequest"})
		return
	}
	now := time.Now().UnixMilli()
	s := &Session{ID: a.nextID("ses"), Slug: "quiet-garden", ProjectID: "global", Directory: in.dir,
		Path: strings.TrimPrefix(in.dir, "/"), Version: Version, Time: sessionTime{Created: now, Updated: now},
		Tokens: map[string]any{"input": 0, "output": 0, "reasoning": 0, "cache": map[string]int{"read": 0, "write": 0}}}
	_ = json.Unmarshal(body["title"], &s.Title)
	_ = json.Unmarshal(body["permission"], &s.Permission)
	if s.Title == "" {
		s.Title = "New session" // the real server spends a model call to make one up
	}
	a.mu.Lock()
	a.sessions[s.ID] = s
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, s)
}

func (a *Agent) session(w http.ResponseWriter, r *http.Request) *Session {
	id := r.PathValue("id")
	if !strings.HasPrefix(id, "ses") {
		writeJSON(w, http.StatusInternalServerError, unknownError())
		return nil
	}
	a.mu.Lock()
	s := a.sessions[id]
	a.mu.Unlock()
	if s == nil {
		writeJSON(w, http.StatusNotFound, namedError("NotFoundError", "Session not found: "+id))
	}
	return s
}

func (a *Agent) getSession(w http.ResponseWriter, r *http.Request) {
	if s := a.session(w, r); s != nil {
		a.mu.Lock()
		defer a.mu.Unlock()
		writeJSON(w, http.StatusOK, s)
	}
}

func (a *Agent) deleteSession(w http.ResponseWriter, r *http.Request) {
	if s := a.session(w, r); s != nil {
		a.mu.Lock()
		delete(a.sessions, s.ID)
		a.mu.Unlock()
		writeJSON(w, http.StatusOK, true)
	}
}

// sessionStatus is GET /session/status in the request's directory, as opencode 1.18.33
// answers it: only the sessions that are not idle, {"ses_…":{"type":"busy"}} ({} when all are),
// a turn waiting to retry its provider as its retry status ({"type":"retry","attempt":2,…}).
func (a *Agent) sessionStatus(w http.ResponseWriter, r *http.Request) {
	in := a.instanceFor(r)
	a.mu.Lock()
	out := map[string]any{}
	for id, s := range a.sessions {
		switch {
		case s.Directory != in.dir || s.busy == nil:
		case s.retry != nil:
			out[id] = maps.Clone(s.retry)
		default:
			out[id] = map[string]string{"type": "busy"}
		}
	}
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// abortSession answers true for any ses_ id, a session it does not know (or deleted) too, as
// opencode 1.18.33 does, and says on the stream that one with no turn running is idle
// (session.status idle, session.idle); an id without the prefix is its bare 500.
func (a *Agent) abortSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !strings.HasPrefix(id, "ses") {
		writeJSON(w, http.StatusInternalServerError, unknownError())
		return
	}
	a.aborts.Add(1)
	a.mu.Lock()
	s := a.sessions[id]
	running := s != nil && s.abort != nil
	if running {
		s.abort()
	}
	a.mu.Unlock()
	if !running { // the turn's end says it of a running one
		dir := a.instanceFor(r).dir
		a.emit(dir, "session.status", map[string]any{"sessionID": id, "status": map[string]any{"type": "idle"}})
		a.emit(dir, "session.idle", map[string]any{"sessionID": id})
	}
	a.abortOnce.Do(func() { close(a.abortSeen) }) // after the abort took effect (or not)
	writeJSON(w, http.StatusOK, true)
}

// promptBody is a prompt's body.
type promptBody struct {
	Parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"parts"`
	Model *struct {
		ProviderID string `json:"providerID"`
		ModelID    string `json:"modelID"`
	} `json:"model"`
	System string `json:"system"`
}

func (a *Agent) readPrompt(w http.ResponseWriter, r *http.Request) (*Session, *promptBody) {
	s := a.session(w, r)
	if s == nil {
		return nil, nil
	}
	var raw map[string]json.RawMessage
	var body promptBody
	if json.NewDecoder(r.Body).Decode(&raw) != nil || raw["parts"] == nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"name": "BadRequest", "data": map[string]any{
			"message": "Missing key\n  at [\"parts\"]", "kind": "Payload"}})
		return nil, nil
	}
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &body)
	return s, &body
}

func (a *Agent) promptSync(w http.ResponseWriter, r *http.Request) {
	s, body := a.readPrompt(w, r)
	if s == nil {
		return
	}
	in := a.instanceFor(r)
	if a.BeforePrompt != nil {
		a.BeforePrompt()
	}
	res := a.run(in, s, body) // the turn does not stop when the client goes away
	a.srv.dropIfStopped()     // opencode stopped: the turn's reply never comes
	if res.status != http.StatusOK {
		writeJSON(w, res.status, res.body)
		return
	}
	writeJSON(w, http.StatusOK, res.body)
}

func (a *Agent) promptAsync(w http.ResponseWriter, r *http.Request) {
	s, body := a.readPrompt(w, r)
	if s == nil {
		return
	}
	in := a.instanceFor(r)
	go a.run(in, s, body)
	w.WriteHeader(http.StatusNoContent)
}

// turnResult is what the sync prompt answers.
type turnResult struct {
	status int
	body   any
}

// run runs one turn on s: queued behind a running one, as the real server does, and dropped
// if that one is aborted or fails: opencode 1.18.33 then answers a queued sync prompt with the
// ended turn's message, and never runs it.
func (a *Agent) run(in *instance, s *Session, body *promptBody) (res turnResult) {
	a.prompts.Add(1)
	for {
		a.mu.Lock()
		busy := s.busy
		if busy == nil {
			s.busy = make(chan struct{})
			break
		}
		a.mu.Unlock()
		a.queued.Add(1)
		select {
		case <-busy:
		case <-a.srv.released:
			return turnResult{status: http.StatusServiceUnavailable, body: namedError("UnknownError", "server closing")}
		}
		a.mu.Lock()
		dropped := s.dropped
		a.mu.Unlock()
		if dropped != nil && dropped.busy == busy {
			return dropped.res
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.abort = cancel
	text := ""
	for _, p := range body.Parts {
		text += p.Text
	}
	s.history = append(s.history, text)
	rules := append(slices.Clone(in.cfgPerm), s.Permission...)
	a.mu.Unlock()
	failed := false // the model's error or an abort: opencode 1.18.33 then sends session.idle twice in a row
	defer func() {
		cancel()
		a.mu.Lock()
		s.dropped = nil
		if failed {
			s.dropped = &droppedBy{busy: s.busy, res: res}
		}
		close(s.busy)
		s.busy, s.abort, s.retry = nil, nil, nil
		a.mu.Unlock()
		a.emit(in.dir, "session.status", map[string]any{"sessionID": s.ID, "status": map[string]any{"type": "idle"}})
		a.emit(in.dir, "session.idle", map[string]any{"sessionID": s.ID})
		if failed {
			a.emit(in.dir, "session.idle", map[string]any{"sessionID": s.ID})
		}
	}()
	go func() { // the fake's Close ends every turn
		select {
		case <-a.srv.released:
			cancel()
		case <-ctx.Done():
		}
	}()

	model := DefaultModel
	if body.Model != nil {
		model = body.Model.ProviderID + "/" + body.Model.ModelID
	} else {
		a.defaultUsed.Add(1)
	}
	userID := a.nextID("msg")
	userInfo := map[string]any{"id": userID, "sessionID": s.ID, "role": "user"}
	userPart := map[string]any{"id": a.nextID("prt"), "sessionID": s.ID, "messageID": userID, "type": "text", "text": text}
	a.store(s, userInfo)
	a.storePart(s, userID, userPart)
	a.emit(in.dir, "message.updated", map[string]any{"info": userInfo})
	a.emit(in.dir, "message.part.updated", map[string]any{"part": userPart})
	a.emit(in.dir, "session.status", map[string]any{"sessionID": s.ID, "status": map[string]any{"type": "busy"}})
	a.mu.Lock()
	known := slices.Contains(a.models, model)
	a.mu.Unlock()
	if !known {
		// One session.idle, not two as after a provider's failure (opencode 1.18.33).
		a.emit(in.dir, "session.error", map[string]any{"sessionID": s.ID, "error": namedError("UnknownError", a.modelNotFound(model))})
		return turnResult{status: http.StatusInternalServerError, body: unknownError()}
	}
	t := &Turn{a: a, in: in, s: s, ctx: ctx, prompt: text, system: body.System, model: model, rules: rules, parentID: userID}
	t.newMessage()
	a.running.Add(1)
	a.model(t)
	a.running.Add(-1)
	provider, modelID, _ := strings.Cut(model, "/")
	info := map[string]any{"id": t.msgID(), "sessionID": s.ID, "role": "assistant", "parentID": userID, "modelID": modelID,
		"providerID": provider}
	failed = ctx.Err() != nil || t.failure != nil
	a.mu.Lock()
	retrying := s.retry != nil
	a.mu.Unlock()
	switch {
	case ctx.Err() != nil && retrying:
		// Stopped while it waited to retry its provider: opencode 1.18.33 answers the
		// message as it stands, with neither an error nor a finish, and sends no
		// session.error (seen for an abort and for a dispose of its instance).
	case ctx.Err() != nil:
		info["error"] = namedError("MessageAbortedError", "Aborted")
		a.emit(in.dir, "session.error", map[string]any{"sessionID": s.ID, "error": info["error"]})
	case t.failure != nil:
		info["error"] = t.failure
		a.emit(in.dir, "session.error", map[string]any{"sessionID": s.ID, "error": t.failure})
	default:
		info["finish"] = "stop" // a message has a finish only once its model finished it
	}
	info, parts := a.lastMessage(s, info)
	a.emit(in.dir, "message.updated", map[string]any{"info": info})
	// The reply is the turn's last assistant message only, each part with its ids.
	return turnResult{status: http.StatusOK, body: map[string]any{"info": info, "parts": parts}}
}

// modelNotFound is opencode's reason for a prompt naming a model it does not know. opencode
// 1.18.33 suggests, by a fuzzy match, providers when the provider is unknown ("Model not
// found: loca/qwen2.5-coder. Did you mean: local, longcat, digitalocean?") and that
// provider's model ids when only the model is ("Model not found: local/qwen. Did you mean:
// qwen2.5-coder?"), or nothing ("Model not found: local/x."); the fake suggests every known
// provider, and the model ids that contain the one asked for.
func (a *Agent) modelNotFound(model string) string {
	provider, id, _ := strings.Cut(model, "/")
	var providers, ids []string
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, known := range a.models {
		p, m, _ := strings.Cut(known, "/")
		if !slices.Contains(providers, p) {
			providers = append(providers, p)
		}
		if p == provider && strings.Contains(m, id) {
			ids = append(ids, m)
		}
	}
	guesses := ids
	if !slices.Contains(providers, provider) {
		guesses = providers
	}
	if len(guesses) == 0 {
		return "Model not found: " + model + "."
	}
	return "Model not found: " + model + ". Did you mean: " + strings.Join(guesses, ", ") + "?"
}

// Turn is one prompt being answered; the Model drives it.
type Turn struct {
	a        *Agent
	in       *instance
	s        *Session
	ctx      context.Context
	prompt   string
	system   string
	model    string
	rules    []Rule
	parentID string

	msgMu     sync.Mutex
	messageID string
	// stepMu makes a tool call's end (its part, step-finish, the next message) one step
	// when a model calls tools in parallel.
	stepMu  sync.Mutex
	failure map[string]any
}

// Prompt is the prompt's text; System the system text the client added; ModelName the
// PROVIDER/MODEL it ran with; SessionID and Title its session's.
func (t *Turn) Prompt() string    { return t.prompt }
func (t *Turn) System() string    { return t.system }
func (t *Turn) ModelName() string { return t.model }
func (t *Turn) SessionID() string { return t.s.ID }
func (t *Turn) Title() string     { return t.s.Title }

// History is every prompt of the session so far, this one last.
func (t *Turn) History() []string {
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	return slices.Clone(t.s.history)
}

// Aborted reports whether the turn was aborted; Done is closed then.
func (t *Turn) Aborted() bool         { return t.ctx.Err() != nil }
func (t *Turn) Done() <-chan struct{} { return t.ctx.Done() }
func (t *Turn) newMessage() {
	id := t.a.nextID("msg")
	info := map[string]any{"id": id, "sessionID": t.s.ID, "role": "assistant", "parentID": t.parentID}
	t.a.store(t.s, info) // stored before a part can name it
	t.emit("message.updated", map[string]any{"info": info})
	t.msgMu.Lock()
	t.messageID = id
	t.msgMu.Unlock()
	t.part(map[string]any{"id": t.a.nextID("prt"), "type": "step-start"})
}

// msgID is the assistant message being written (a model may call tools from several
// goroutines, as parallel tool calls).
func (t *Turn) msgID() string {
	t.msgMu.Lock()
	defer t.msgMu.Unlock()
	return t.messageID
}
func (t *Turn) emit(typ string, p any) { t.a.emit(t.in.dir, typ, p) }
func (t *Turn) part(p map[string]any) {
	t.a.mu.Lock()
	t.s.retry = nil // the provider answered: the turn is busy again
	t.a.mu.Unlock()
	id := t.msgID()
	p["sessionID"], p["messageID"] = t.s.ID, id
	t.a.storePart(t.s, id, p)
	t.emit("message.part.updated", map[string]any{"part": p})
}
func (t *Turn) action(name string) string {
	action := "ask" // no matching rule
	for _, r := range t.rules {
		if (r.Permission == "*" || r.Permission == name || (strings.HasSuffix(r.Permission, "*") && strings.HasPrefix(name, strings.TrimSuffix(r.Permission, "*")))) && r.Pattern == "*" {
			action = r.Action
		}
	}
	if action == "ask" {
		t.a.mu.Lock()
		defer t.a.mu.Unlock()
		if t.in.approved[name] {
			return "allow"
		}
	}
	return action
}

// Offered is the tools the model is offered: opencode's own and the connected MCP tools,
// minus those whose last matching rule denies them.
func (t *Turn) Offered() []string {
	t.a.mu.Lock()
	all := append(slices.Clone(HostTools), t.in.tools...)
	t.a.mu.Unlock()
	var out []string
	for _, name := range all {
		if t.action(name) != "deny" {
			out = append(out, name)
		}
	}
	return out
}

// Text streams an answer: a text part, one delta per chunk, then the part with its full text.
func (t *Turn) Text(chunks ...string) {
	p := t.StartText()
	for _, c := range chunks {
		if t.Aborted() {
			return
		}
		p.Delta(c)
	}
	p.End()
}

// TextPart is a text part being streamed, step by step (Turn.StartText): a model script
// waits between its deltas for what a test needs to see first.
type TextPart struct {
	t             *Turn
	id, messageID string
	text          string
}

// StartText starts a text part in the current message: the part with an empty text.
func (t *Turn) StartText() *TextPart {
	p := &TextPart{t: t, id: t.a.nextID("prt"), messageID: t.msgID()}
	t.part(map[string]any{"id": p.id, "type": "text", "text": ""})
	return p
}

// Delta streams one chunk of the part.
func (p *TextPart) Delta(chunk string) {
	p.text += chunk
	p.t.emit("message.part.delta", map[string]any{"sessionID": p.t.s.ID, "messageID": p.messageID, "partID": p.id, "field": "text", "delta": chunk})
}

// End ends the part: the part again, with its full text.
func (p *TextPart) End() {
	p.t.part(map[string]any{"id": p.id, "type": "text", "text": p.text})
}

// Retry announces a provider retry, as session.status does: the turn waits to retry until
// its next part (GET /session/status says retry meanwhile; stopped then, its reply carries
// neither an error nor a finish).
func (t *Turn) Retry(attempt int, message string) {
	status := map[string]any{"type": "retry", "attempt": attempt, "message": message, "next": time.Now().Add(2 * time.Second).UnixMilli()}
	t.a.mu.Lock()
	t.s.retry = status
	t.a.mu.Unlock()
	t.emit("session.status", map[string]any{"sessionID": t.s.ID, "status": status})
}

// FailProvider ends the turn as a provider failure does: 200 with info.error, an APIError
// whose data echoes the provider's response headers and body (secret included).
func (t *Turn) FailProvider(message string, status int) {
	t.failure = map[string]any{"name": "APIError", "data": map[string]any{"message": message, "statusCode": status,
		"isRetryable": status >= 500, "responseHeaders": map[string]string{"x-api-key": "sk-SECRET-echoed"},
		"responseBody": `{"error":"bad key sk-SECRET-echoed"}`}}
}

// DropStreams ends every open event stream in the middle of the turn (Agent.DropStreams).
func (t *Turn) DropStreams() { t.a.DropStreams() }

// Stall waits as a provider that accepted and sends nothing does: until the turn is aborted.
func (t *Turn) Stall() { <-t.ctx.Done() }

// RejectFeedbackPrefix is what the real opencode (1.18.33) writes before a reject's message
// in the tool's error, which both the model and the tool part carry.
const RejectFeedbackPrefix = "The user rejected permission to use this specific tool call with the following feedback: "

// ToolResult is how a tool call ended: its state ("completed" or "error"), output or error.
type ToolResult struct {
	State, Output, Error string
	// Stopped is true when a reject without a message stopped the turn.
	Stopped bool
}

// Tool makes a tool call (name as opencode names it, e.g. trap-sandbox_write_file) with
// input, through the session's rules: a denied tool fails; an ask is sent without the
// arguments, the tool part with the input right after it, and the call waits for the reply;
// allowed, a trap-sandbox tool runs on the instance's MCP connection, a host tool only counts.
func (t *Turn) Tool(name string, input map[string]any) ToolResult {
	callID := t.a.nextID("call")
	partID := t.a.nextID("prt")
	t.part(map[string]any{"id": partID, "type": "tool", "tool": name, "callID": callID,
		"state": map[string]any{"status": "pending", "input": map[string]any{}, "raw": ""}})
	end := func(r ToolResult) ToolResult {
		t.stepMu.Lock()
		defer t.stepMu.Unlock()
		state := map[string]any{"status": r.State, "input": input}
		if r.State == "error" {
			state["error"] = r.Error
		} else {
			state["output"] = r.Output
		}
		t.part(map[string]any{"id": partID, "type": "tool", "tool": name, "callID": callID, "state": state})
		t.part(map[string]any{"id": t.a.nextID("prt"), "type": "step-finish", "reason": "tool-calls"})
		t.newMessage()
		return r
	}
	running := func() {
		t.part(map[string]any{"id": partID, "type": "tool", "tool": name, "callID": callID,
			"state": map[string]any{"status": "running", "input": input}})
	}
	switch t.action(name) {
	case "deny":
		running()
		return end(ToolResult{State: "error", Error: "The user has specified a rule which prevents you from using this specific tool call."})
	case "ask":
		askID := t.a.nextID("per")
		pending := &ask{id: askID, session: t.s.ID, reply: make(chan askReply, 1)}
		t.a.mu.Lock()
		t.a.asks[askID] = pending
		t.a.mu.Unlock()
		t.emit("permission.asked", map[string]any{"id": askID, "sessionID": t.s.ID, "permission": name, "patterns": []string{"*"},
			"metadata": map[string]any{}, "always": []string{"*"}, "tool": map[string]any{"messageID": t.msgID(), "callID": callID}})
		running() // the arguments come right after the ask
		select {
		case rep := <-pending.reply:
			switch rep.reply {
			case "reject":
				if rep.message == "" {
					return end(ToolResult{State: "error", Error: "The user rejected permission to use this specific tool call.", Stopped: true})
				}
				// opencode 1.18.33 puts its own words before the reply's message.
				return end(ToolResult{State: "error", Error: RejectFeedbackPrefix + rep.message})
			case "always":
				t.a.mu.Lock()
				t.in.approved[name] = true
				t.a.mu.Unlock()
			}
		case <-t.ctx.Done():
			return ToolResult{State: "error", Error: "Aborted"} // the ask stays listed, stale
		}
	default:
		running()
	}
	return end(t.execute(name, input))
}

func (t *Turn) execute(name string, input map[string]any) ToolResult {
	tool, ours := strings.CutPrefix(name, "trap-sandbox_")
	if !ours {
		return ToolResult{State: "completed", Output: "(the fake ran no host tool)"}
	}
	t.a.mu.Lock()
	cs := t.in.mcp
	t.a.mu.Unlock()
	if cs == nil {
		return ToolResult{State: "error", Error: "MCP server trap-sandbox is not connected"}
	}
	ctx, cancel := context.WithTimeout(t.ctx, 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: input})
	if err != nil {
		return ToolResult{State: "error", Error: err.Error()}
	}
	if res.IsError {
		return ToolResult{State: "error", Error: toolErrorText(res.Content)}
	}
	return ToolResult{State: "completed", Output: toolText(res.Content)}
}

// toolErrorText is a failed tool's result (isError) as opencode 1.18.33 reports it: its MCP
// tool wrapper throws an error of the result's texts that are not blank, joined by a blank
// line, or of "MCP tool returned an error" when none is left, and the session writes the
// thrown message as the tool part's error, in state "error" (read in its bundle: the
// wrapper's `if(B.isError)throw Error(…filter((K)=>K.trim()).join(…)||"MCP tool returned an
// error")`, and the processor's failToolCall, which the AI SDK's tool-error reaches). It is
// never a completed part whose output is the error: a player's `ai` reads it as failed.
func toolErrorText(contents []sdk.Content) string {
	texts := slices.DeleteFunc(toolTexts(contents), func(text string) bool { return strings.TrimSpace(text) == "" })
	if len(texts) == 0 {
		return "MCP tool returned an error"
	}
	return strings.Join(texts, "\n\n")
}

// toolText is an MCP tool result's text as opencode 1.18.33 gives it to the model and the
// tool part: its text contents joined by a blank line (the session's handling of an MCP
// tool's result, read in its bundle: q.join("\n\n")). Joined with nothing, a computer's error
// and the gateway's note after it read as one sentence, "No such fileComputer \"6:a\" wrote
// the message above: …", and so did the player's tool line, where the gateway shows a tool
// error's first line.
func toolText(contents []sdk.Content) string {
	return strings.Join(toolTexts(contents), "\n\n")
}

// toolTexts are an MCP tool result's text contents, the ones opencode puts in what the model
// reads (an image is an attachment, which the fake's stand-in models never read).
func toolTexts(contents []sdk.Content) []string {
	var texts []string
	for _, c := range contents {
		if tc, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return texts
}

// listMessages lists a session's messages, oldest first, each {info, parts}; ?limit=N keeps
// the last N.
func (a *Agent) listMessages(w http.ResponseWriter, r *http.Request) {
	s := a.session(w, r)
	if s == nil {
		return
	}
	a.mu.Lock()
	out := make([]map[string]any, 0, len(s.messages))
	for _, m := range s.messages {
		parts := make([]any, 0, len(m.parts))
		for _, p := range m.parts {
			parts = append(parts, maps.Clone(p))
		}
		out = append(out, map[string]any{"info": maps.Clone(m.info), "parts": parts})
	}
	a.mu.Unlock()
	if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && n >= 0 && n < len(out) {
		out = out[len(out)-n:]
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *Agent) listAsks(w http.ResponseWriter, _ *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []map[string]any{}
	for _, k := range a.asks {
		out = append(out, map[string]any{"id": k.id, "sessionID": k.session})
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *Agent) replyAsk(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Reply   string `json:"reply"`
		Message string `json:"message"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil {
		writeJSON(w, http.StatusInternalServerError, unknownError())
		return
	}
	if body.Reply != "once" && body.Reply != "always" && body.Reply != "reject" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"name": "BadRequest", "data": map[string]any{
			"message": fmt.Sprintf("Expected \"once\" | \"always\" | \"reject\", got %q\n  at [\"reply\"]", body.Reply), "kind": "Payload"}})
		return
	}
	id := r.PathValue("id")
	a.mu.Lock()
	k := a.asks[id]
	delete(a.asks, id)
	a.mu.Unlock()
	if k == nil { // never asked, or answered already
		writeJSON(w, http.StatusNotFound, map[string]any{"_tag": "PermissionNotFoundError", "requestID": id,
			"message": "Permission request not found: " + id})
		return
	}
	if body.Reply == "always" {
		a.always.Add(1)
	}
	rejected := []*ask{k}
	if body.Reply == "reject" && body.Message == "" {
		// A plain reject stops the turn: the session's other pending asks are rejected too.
		a.mu.Lock()
		for oid, other := range a.asks {
			if other.session == k.session {
				delete(a.asks, oid)
				rejected = append(rejected, other)
			}
		}
		a.mu.Unlock()
	}
	for _, k := range rejected {
		k.reply <- askReply{body.Reply, body.Message}
		a.emit("", "permission.replied", map[string]any{"sessionID": k.session, "requestID": k.id, "reply": body.Reply})
	}
	writeJSON(w, http.StatusOK, true)
}

// emit sends an event to the directory's /event subscribers and to every /global/event one,
// wrapped there as {"directory","project","payload"}.
func (a *Agent) emit(dir, typ string, props any) {
	ev := map[string]any{"id": a.nextID("evt"), "type": typ, "properties": props}
	data, err := json.Marshal(ev)
	if err != nil {
		panic(err)
	}
	wrapped, err := json.Marshal(map[string]any{"directory": dir, "project": "global", "payload": ev})
	if err != nil {
		panic(err)
	}
	a.mu.Lock()
	subs := make([]*subscriber, 0, len(a.subs))
	for s := range a.subs {
		if s.global || s.dir == dir || dir == "" {
			subs = append(subs, s)
		}
	}
	a.mu.Unlock()
	for _, s := range subs {
		frame := data
		if s.global {
			frame = wrapped
		}
		select {
		case s.ch <- frame:
		case <-a.srv.released:
			return
		}
	}
}

// heartbeatEvery is opencode's heartbeat period on /event.
const heartbeatEvery = 10 * time.Second

// events serves /event (one directory's, starting its instance) and /global/event (every
// directory's, starting none; each frame, server.connected and heartbeats too, wrapped in
// {"payload"}, as opencode 1.18.33 sends them).
func (a *Agent) events(w http.ResponseWriter, r *http.Request) {
	sub := &subscriber{global: r.URL.Path == "/global/event", ch: make(chan []byte, 1<<14), drop: make(chan struct{})}
	if !sub.global {
		sub.dir = a.instanceFor(r).dir
	}
	a.mu.Lock()
	a.subs[sub] = struct{}{}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.subs, sub)
		a.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header()["x-accel-buffering"] = []string{"no"} // in lower case, as sent
	flusher, _ := w.(http.Flusher)
	write := func(data []byte) bool {
		if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	own := func(ev string) []byte {
		if sub.global {
			return []byte(`{"payload":` + ev + `}`)
		}
		return []byte(ev)
	}
	if !write(own(`{"id":"evt_connected","type":"server.connected","properties":{}}`)) {
		return
	}
	heartbeat := time.NewTicker(heartbeatEvery)
	defer heartbeat.Stop()
	for {
		select {
		case data := <-sub.ch:
			if !write(data) {
				return
			}
		case <-heartbeat.C:
			if !write(own(`{"id":"evt_hb","type":"server.heartbeat","properties":{}}`)) {
				return
			}
		case <-r.Context().Done():
			return
		case <-sub.drop:
			return
		case <-a.srv.released:
			a.srv.dropIfStopped() // the stream cut, not ended
			return
		}
	}
}

// DropStreams ends every event stream open now, as opencode's stream sometimes closes
// mid-turn (anomalyco/opencode#38458): the events until a client opens a new one are lost
// to it, the turn goes on, and the sync prompt's reply still carries the answer.
func (a *Agent) DropStreams() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for sub := range a.subs {
		delete(a.subs, sub)
		close(sub.drop)
	}
}
