// Package agent is the gateway's agent module: it carries a computer's questions to opencode
// and the answers back (the ai.* request types, docs/protocol.md), safely. The computer never
// sees opencode's credentials; every session is created with rules that offer the model only
// the trap-sandbox tools acting on one computer; the gateway answers each tool call's
// permission ask itself, once, only for the asking computer (after the player's confirmation
// for writes, deletes and runs); one turn runs at a time per session, under the gateway's own
// deadline. GET /trapos/ai/turns (TurnsPath) lists the computers with a turn running. It is
// off unless the operator names a model (--ai-model); docs/ai.md is the operator's guide.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/logthrottle"
	"trap-sandbox/internal/opencode"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// Request types of the module (docs/protocol.md, "The agent").
const (
	TypeAsk     = "ai.ask"
	TypePoll    = "ai.poll"
	TypeAbort   = "ai.abort"
	TypeReset   = "ai.reset"
	TypeApprove = "ai.approve"
)

// Types lists them in the order the docs give.
var Types = []string{TypeAsk, TypePoll, TypeAbort, TypeReset, TypeApprove}

// Limits and defaults of the contract.
const (
	// MaxPromptBytes caps a question.
	MaxPromptBytes = 4096
	// DefaultSession is the conversation of a program that names none.
	DefaultSession = "main"
	// MaxPollWait is ai.poll's longest wait (and its default): well under the 10 s request
	// timeout.
	MaxPollWait = 5 * time.Second
	// DefaultTurnDeadline is longer than opencode's own provider retries (62–70 s), so a
	// failing provider reaches the player as its own message, not as the gateway's timeout.
	DefaultTurnDeadline = 180 * time.Second
	// DefaultConfirmTimeout is how long a confirmation waits for the player.
	DefaultConfirmTimeout = 60 * time.Second
	// DefaultAnswerCap is the most answer text relayed per turn.
	DefaultAnswerCap = 64 << 10
	// KeepFinished is how long a finished turn's events stay for late polls.
	KeepFinished = 2 * time.Minute
	// DefaultRateEvery and DefaultRateBurst: a computer may start DefaultRateBurst turns at
	// once, then one per DefaultRateEvery. A player typing questions never gets there.
	DefaultRateEvery = 3 * time.Second
	DefaultRateBurst = 20
	// DefaultMaxTurns is the most turns the gateway runs at once, all computers together
	// (--ai-max-turns): the per-computer limit does not bound a player who says hello under
	// ever new traposIds with the shared password, each of them asking.
	DefaultMaxTurns = 100
)

// Module-internal timings.
const (
	// readyWait bounds the wait for the event stream before a turn's first prompt.
	readyWait = 10 * time.Second
	// abortWait bounds the wait for opencode's reply after an abort; abortEvery is how often
	// the abort is repeated until it comes.
	abortWait  = 5 * time.Second
	abortEvery = time.Second
	// defaultClosingAbortWait bounds an abort sent while the gateway stops (Config's
	// ClosingAbortWait), so a stuck opencode holds the stop only so long.
	defaultClosingAbortWait = 2 * time.Second
	// orphanPoll is how often a turn found running on a conversation is asked whether it has
	// stopped after its abort.
	orphanPoll = 100 * time.Millisecond
	// callTimeout bounds the short opencode calls (sessions, replies, MCP status).
	callTimeout = 10 * time.Second
	// idleWait bounds the wait for the stream to catch up with the sync reply.
	idleWait = 2 * time.Second
	// lateErrorWait bounds the wait for a session.error after a bare 500 (it carries the reason).
	lateErrorWait = 2 * time.Second
)

// New error codes of the ai.* types.
const (
	CodeAIDisabled    protocol.Code = "ai_disabled"
	CodeAIUnavailable protocol.Code = "ai_unavailable"
	CodeUnknownTurn   protocol.Code = "unknown_turn"
)

// Causes a turn ends with before opencode ends it.
var (
	errAborted      = errors.New("aborted by the computer")
	errDeadline     = errors.New("the turn's deadline passed")
	errDisconnected = errors.New("the computer disconnected")
	errClosing      = errors.New("the gateway is shutting down")
)

// Prober explains in one line why opencode is down; *opencode.Prober implements it.
type Prober interface {
	Probe(ctx context.Context) opencode.Health
}

// Handlers is the gateway's handler table (*gateway.Gateway).
type Handlers interface {
	Handle(typ string, h protocol.RequestHandler)
}

// Config configures the module.
type Config struct {
	// Model is PROVIDER/MODEL; empty turns the module off (every ai.* answers ai_disabled).
	Model string
	// OpencodeURL, Username, Password reach opencode serve (Basic auth when Password is set).
	OpencodeURL, Username, Password string
	// Dir is the agent's directory: each computer's conversations live in a directory of its
	// own below it (ComputerDir), whose opencode.json the module writes.
	Dir string
	// MCPURL is the gateway's /mcp as opencode reaches it.
	MCPURL string
	// Passes grants each computer's pass, which its directory's opencode.json sends to
	// MCPURL; the server's API auth must honour the same Passes. Nil: the module keeps its
	// own (and its tools reach no computer).
	Passes *account.Passes
	// AllowHostTools lets the model use opencode's own tools on the host (bash, edit…):
	// --ai-allow-host-tools, off by default.
	AllowHostTools bool
	// TurnDeadline, ConfirmTimeout, AnswerCap, RateEvery, RateBurst: zero means the default.
	TurnDeadline   time.Duration
	ConfirmTimeout time.Duration
	AnswerCap      int
	RateEvery      time.Duration
	RateBurst      int
	// ClosingAbortWait bounds each abort Close sends to opencode; zero means 2 s. A test on a
	// loaded machine gives more, so that what it checks is that the abort is sent, not how
	// fast the machine answers it.
	ClosingAbortWait time.Duration
	// MaxTurns is the most turns running at once, all computers together (a turn counts
	// until opencode stopped it); zero means DefaultMaxTurns.
	MaxTurns int
	// IdleAfter is how long a computer's agent state (and its opencode instance) stays after
	// its last use (idle.go); zero means DefaultIdleAfter.
	IdleAfter time.Duration
	// MaxComputers is the most computers with agent state at once; zero means
	// DefaultMaxComputers.
	MaxComputers int
	// MaxDirs is the most computers' directories an account keeps (dirs.go); zero means
	// DefaultMaxDirs.
	MaxDirs int
	// HeldElsewhere reports whether another replica holds the socket of the computer of an
	// account and traposId (with --nats; nil: none does). A computer released here that moved
	// there keeps its opencode instance: replicas that share the agent's directory share its
	// instance, and a dispose would abort the turn it runs there.
	HeldElsewhere func(accountID, traposID string) bool
	// Prober words ai_unavailable; nil: the error's own words.
	Prober Prober
	// Transport reaches opencode; nil: a default one.
	Transport http.RoundTripper
	// Clock paces the WARN lines of failing turns and times computers' idleness; nil: the
	// wall clock.
	Clock clock.Clock
}

// Module answers the ai.* request types.
type Module struct {
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	oc      *client
	stream  *stream
	model   modelRef
	rules   []Rule
	passes  *account.Passes
	outages *outages
	// abortClock paces the aborts of a stopped turn that opencode has not stopped yet
	// (stopOnOpencode): the wall clock, a test's fake.
	abortClock clock.Clock
	// idleClock bounds a turn's wait for its session.idle after the prompt's reply
	// (idleWait): the wall clock, a test's fake.
	idleClock clock.Clock

	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	once   sync.Once
	// janitorOnce starts the janitor (idle.go) at the first computer's question.
	janitorOnce sync.Once
	// noDispose is set once opencode showed it has no POST /instance/dispose (idle.go).
	noDispose atomic.Bool
	// modelMissing is the model check's last finding: opencode has no model cfg.Model
	// (checkModel, run in the prober's flights one at a time).
	modelMissing atomic.Bool

	mu       sync.Mutex
	sessions map[sessionKey]*session
	turns    map[string]*turn
	limiters map[callerKey]*rate.Limiter
	// running counts the sessions a turn, or a reset, holds busy (the gateway-wide cap,
	// Config.MaxTurns: holdLocked); accountRunning, those of each account but local's (its
	// share, maxAccountTurns).
	running        int
	accountRunning map[string]int
	// warns throttles the WARN line of questions refused by the gateway-wide cap.
	warns *logthrottle.Throttle

	// placeMu guards places, releasing and accountMu; it is taken before mu, never after.
	placeMu sync.Mutex
	places  map[callerKey]*place
	// releasing holds, per computer whose state was released, a channel closed once
	// opencode answered the dispose of its instance (idle.go).
	releasing map[callerKey]chan struct{}
	// accountMu holds, per account, while one of its computers' places is prepared: a
	// computer gets one pass, and a re-created account's directory is claimed once (place.go).
	accountMu map[string]*sync.Mutex
}

// positiveOr is v when it is above zero, else def: a Config field left unset.
func positiveOr[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// callerKey is a computer as the agent knows it: its account, its traposId, and its account's
// creation stamp (protocol.Requester.AccountCreated, in Unix nanoseconds; 0 for the shared
// password), so a computer of an account made again under a removed one's name is another
// caller: it shares no session, place or limiter with the removed account's.
type callerKey struct {
	account, traposID string
	created           int64
}

// callerOf is the caller a request comes from.
func callerOf(from protocol.Requester) callerKey {
	k := callerKey{account: from.AccountID, traposID: from.TraposID}
	if !from.AccountCreated.IsZero() {
		k.created = from.AccountCreated.UnixNano()
	}
	return k
}

type sessionKey struct {
	callerKey
	name string
}

// session is one conversation of one computer.
type session struct {
	key        sessionKey
	pl         *place  // the computer's
	oc         *client // names the computer's directory
	opencodeID string  // "" until found or created
	// busy is the turn running on it, until opencode's reply to its prompt came (an aborted
	// turn ends for the computer at once but keeps the session until opencode stopped, so a
	// new prompt is never queued behind it).
	busy *turn
}

// title is how a restarted gateway finds a conversation again.
func (k sessionKey) title() string {
	if k.account == "" || k.account == "local" {
		return fmt.Sprintf("trap-sandbox %s %s", k.traposID, k.name)
	}
	return fmt.Sprintf("trap-sandbox %s/%s %s", k.account, k.traposID, k.name)
}

// New returns the module; with cfg.Model empty it is off, and says so once in the log.
func New(cfg Config, logger *slog.Logger, reg prometheus.Registerer) (*Module, error) {
	m := &Module{cfg: cfg, log: logger, metrics: newMetrics(reg), sessions: map[sessionKey]*session{},
		turns: map[string]*turn{}, limiters: map[callerKey]*rate.Limiter{}, places: map[callerKey]*place{}, accountMu: map[string]*sync.Mutex{},
		accountRunning: map[string]int{},
		releasing:      map[callerKey]chan struct{}{}, passes: cfg.Passes, abortClock: clock.Real{},
		idleClock: clock.Real{}}
	if m.passes == nil {
		m.passes = account.NewPasses()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
		m.cfg.Clock = cfg.Clock
	}
	m.warns = logthrottle.New(logger, cfg.Clock)
	m.outages = newOutages(logger, logthrottle.New(logger, cfg.Clock))
	m.ctx, m.cancel = context.WithCancelCause(context.Background())
	if cfg.Model == "" {
		logger.Info("agent: off (ai.* requests answer ai_disabled): set --ai-model PROVIDER/MODEL (SANDBOX_AI_MODEL) to let computers ask the agent; docs/ai.md")
		return m, nil
	}
	provider, model, ok := strings.Cut(cfg.Model, "/")
	if !ok || provider == "" || model == "" {
		return nil, fmt.Errorf("--ai-model (SANDBOX_AI_MODEL) %q: give PROVIDER/MODEL as opencode names it (e.g. anthropic/claude-sonnet-4-5; opencode models lists them)", cfg.Model)
	}
	m.model = modelRef{ProviderID: provider, ModelID: model}
	// A setting left at zero (or below) takes its default.
	m.cfg.TurnDeadline = positiveOr(m.cfg.TurnDeadline, DefaultTurnDeadline)
	m.cfg.ClosingAbortWait = positiveOr(m.cfg.ClosingAbortWait, defaultClosingAbortWait)
	m.cfg.ConfirmTimeout = positiveOr(m.cfg.ConfirmTimeout, DefaultConfirmTimeout)
	m.cfg.AnswerCap = positiveOr(m.cfg.AnswerCap, DefaultAnswerCap)
	m.cfg.RateEvery = positiveOr(m.cfg.RateEvery, DefaultRateEvery)
	m.cfg.RateBurst = positiveOr(m.cfg.RateBurst, DefaultRateBurst)
	m.cfg.MaxTurns = positiveOr(m.cfg.MaxTurns, DefaultMaxTurns)
	m.cfg.IdleAfter = positiveOr(m.cfg.IdleAfter, DefaultIdleAfter)
	m.cfg.MaxComputers = positiveOr(m.cfg.MaxComputers, DefaultMaxComputers)
	m.cfg.MaxDirs = positiveOr(m.cfg.MaxDirs, DefaultMaxDirs)
	base, err := opencode.ParseURL(cfg.OpencodeURL)
	if err != nil {
		return nil, fmt.Errorf("%w: give http(s)://host:port", err)
	}
	// opencode connects to it only when a computer first asks: a URL it cannot use would fail
	// every question, so it is refused here, at start.
	// Either shows it without a password written into it (http://user:password@host, for a
	// proxy's Basic Auth): the error is printed at start, the URL logged below.
	mcpURL, err := url.Parse(cfg.MCPURL)
	if err != nil || (mcpURL.Scheme != "http" && mcpURL.Scheme != "https") || mcpURL.Host == "" {
		return nil, fmt.Errorf("--ai-mcp-url (SANDBOX_AI_MCP_URL) %q: give the gateway's /mcp as opencode reaches it, http(s)://host:port/mcp", hostapi.ShownURL(cfg.MCPURL))
	}
	// The directory itself connects to no MCP server and holds no pass (a file of an earlier
	// version, which carried the API token, is rewritten without it); each computer's
	// directory below it does (place.go).
	if err := WriteSessionDir(cfg.Dir, cfg.Model, "", "", Rules(cfg.AllowHostTools)); err != nil {
		return nil, err
	}
	username := cfg.Username
	if username == "" {
		username = opencode.DefaultUsername
	}
	transport := cfg.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	m.oc = &client{base: base, dir: cfg.Dir, username: username, password: cfg.Password, http: &http.Client{Transport: transport}}
	m.stream = newStream(m.oc, logger)
	m.rules = Rules(cfg.AllowHostTools)
	if cfg.AllowHostTools {
		logger.Warn("agent: --ai-allow-host-tools is on: the model may run shell commands, edit and read files and fetch URLs ON THIS HOST, as this gateway's opencode user, whenever a player asks; turn it off unless every player is trusted with the host")
	}
	logger.Info("agent: on", "model", cfg.Model, "dir", cfg.Dir, "mcp", mcpURL.Redacted(), "turnDeadline", m.cfg.TurnDeadline,
		"hostTools", cfg.AllowHostTools)
	if c, ok := cfg.Prober.(agentChecker); ok {
		c.SetAgentCheck(m.checkModel)
	}
	if cfg.Prober != nil {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.checkOpencode(cfg.Prober)
		}()
	}
	return m, nil
}

// noModel is probe_gateway's aiDetail while opencode has no model cfg.Model: for the player,
// every word of it within a pocket computer's 26 columns.
const noModel = "opencode lacks the agent's model (--ai-model): its provider has no key there, or the name is wrong"

// agentChecker is a Prober that carries the agent's check in its results (*opencode.Prober):
// probe_gateway's answer then says what keeps the agent from working though opencode answers.
type agentChecker interface {
	SetAgentCheck(check opencode.AgentCheck)
	RecheckAgent()
	// ProbeAgent probes and waits for the check: a probe's answer does not wait for it.
	ProbeAgent(ctx context.Context) opencode.Health
	// AgentWord is the check's last word once one in flight has ended, and whether it is known.
	AgentWord(ctx context.Context) (detail string, known bool)
}

// modelMayBeGone runs the agent's check again now, in a probe of its own, after a turn opencode
// failed with a bare 500 and a reason ("Model not found: …": the model lost since the check
// found it), so probe_gateway's aiDetail says it and the next question is refused at once
// (lacksModel), where each waited for its own failure until opencode.AgentRecheck passed.
func (m *Module) modelMayBeGone() {
	c, ok := m.cfg.Prober.(agentChecker)
	if !ok || m.modelMissing.Load() {
		return
	}
	c.RecheckAgent()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		ctx, cancel := context.WithTimeout(m.ctx, callTimeout)
		defer cancel()
		c.ProbeAgent(ctx)
	}()
}

// checkOpencode says at start whether opencode answers the gateway, and has its model: an
// operator who gave it the wrong password, or none, or a model opencode has no provider for,
// learnt it only from the first player's failed question (the agent touches opencode only
// when a computer asks). The model is checked in the probe's flight (checkModel), which logs
// its WARN. opencode may well start after the gateway (docs/ai.md, Start order), so the line
// says that questions fail until it answers, not that the agent is broken.
func (m *Module) checkOpencode(prober Prober) {
	ctx, cancel := context.WithTimeout(m.ctx, callTimeout)
	defer cancel()
	h := prober.Probe(ctx)
	if m.ctx.Err() != nil {
		return // the gateway stopped first
	}
	f, also := faultOpencode, ""
	switch {
	case h.OK:
		m.log.Info("agent: opencode answers", "version", h.Version)
		m.checkModelAtStart(prober)
		return
	case h.Status == http.StatusUnauthorized:
		f = m.credentialsFault()
	case h.NoAnswerWithin > 0:
		f = faultHung
	case h.Status == 0:
		f, also = faultUnreachable, "; if it is starting, nothing to do"
	}
	m.log.Warn("agent: computers' questions will fail: "+f.cause+" (fix: "+f.fix+also+")", "detail", h.Detail)
}

// startModelWait bounds the start's own look at opencode's models, when the check the start's
// probe ran beside it got no answer within the probe's timeout: a fresh opencode lists its
// providers slowly the first time in a directory (played: 10 s, opencode 1.18.33 offline).
const startModelWait = 30 * time.Second

// checkModelAtStart says at start whether opencode has the model, once the check the start's
// probe began has ended (its WARN logged by checkModel): when that check got no answer in
// time, it asks again with startModelWait, and says so when that gets none either. The start
// said nothing of the model then, a gateway whose every question would fail (a model opencode
// has no key for) as silent as one whose agent works, until a computer's sandbox health
// probed again.
func (m *Module) checkModelAtStart(prober Prober) {
	c, ok := prober.(agentChecker)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(m.ctx, startModelWait)
	defer cancel()
	if _, known := c.AgentWord(ctx); known || m.ctx.Err() != nil {
		return
	}
	if _, known := m.checkModel(ctx); !known && m.ctx.Err() == nil {
		m.log.Warn("agent: opencode did not list its models within " + startModelWait.String() + ", so whether it has " + m.cfg.Model +
			" is not known: a computer's sandbox health asks again (fix: if opencode started seconds ago, nothing to do; else see opencode's own log)")
	}
}

// checkModel is the agent's check (opencode.AgentCheck): whether opencode, which answers, has
// the model among the providers it has configured, and if not the line probe_gateway's
// aiDetail shows the player. The operator's log says when that changes: a WARN with the fix,
// and a line when opencode has the model again. An opencode that cannot list its models (an
// older one) is not judged on them; one that gave no answer (a timeout) is asked again at the
// next probe (known false): the prober keeps a finding that all is well meanwhile, and drops
// one that the model is missing (opencode.Prober.SetAgentCheck).
func (m *Module) checkModel(ctx context.Context) (detail string, known bool) {
	return m.checkModelIn(ctx, m.oc)
}

// checkModelIn is checkModel asking oc's directory: a turn's own check (awaitModelCheck).
func (m *Module) checkModelIn(ctx context.Context, oc *client) (detail string, known bool) {
	models, err := oc.models(ctx)
	var apiErr *apiError
	var notJSON *notJSONError
	known = err == nil || errors.As(err, &apiErr) || errors.As(err, &notJSON)
	switch {
	case err != nil:
	case slices.Contains(models, m.cfg.Model):
		if m.modelMissing.Swap(false) {
			m.log.Info("agent: opencode has the model now", "model", m.cfg.Model)
		}
	case !m.modelMissing.Swap(true):
		// opencode answers such a model's every prompt with a bare 500 ("Model not found:
		// anthropic/x. Did you mean: x?", also when only the provider's key is missing). A
		// running opencode 1.18.33 does not see a key given later in a directory it has loaded
		// (played: auth.json written, PUT /auth/anthropic; GET /config/providers still listed
		// opencode alone, until the directory's instance was disposed), so the fix restarts it.
		m.log.Warn("agent: computers' questions will fail: opencode has no model "+m.cfg.Model+" (fix: give opencode the model's provider and its key: "+
			"opencode auth login, or a provider in its opencode.json, then restart it; or set --ai-model (SANDBOX_AI_MODEL) to a model opencode models lists)",
			"providers", providersOf(models))
	}
	if m.modelMissing.Load() {
		// No model name: one longer than a pocket computer's 26 columns would break inside it
		// (anthropic/claude-sonnet-4-5), and the operator's log names it.
		return noModel, known
	}
	return "", known
}

// lacksModel refuses a question at once while opencode has no model cfg.Model (checkModel,
// probe_gateway's aiDetail): taken, it made a session and sent a prompt for opencode's
// "Model not found" a turn later. Only while the last check found it missing: the refusal
// asks a fresh probe, whose flight checks again, so a key given since lets this question
// through, and a gateway whose opencode has the model pays nothing per question.
func (m *Module) lacksModel(ctx context.Context) *protocol.Error {
	if !m.modelMissing.Load() || m.cfg.Prober == nil {
		return nil
	}
	c, ok := m.cfg.Prober.(agentChecker)
	if !ok {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if h := c.ProbeAgent(pctx); h.OK && h.AIDetail != "" {
		return protocol.Errorf(CodeAIUnavailable, "the agent is unavailable: %s", h.AIDetail)
	}
	return nil
}

// awaitModelCheck is the model check's word for a turn about to prompt in oc (its computer's
// directory), where opencode may lack the model but the check has not said so yet (lacksModel
// refuses a question only once it has): a check in flight, or none answered since opencode
// was found down. Right after opencode restarted without the model, the first question was
// taken and failed a turn later with opencode's "Model not found": a freshly started opencode
// took 6 s to list its providers, past the probe's 5 s, so the prober's check never answered
// it. The turn waits for a check in flight, and while the word is still unknown checks the
// computer's directory itself, which its session has just made opencode load. "" when the
// model is there or nobody can tell; a known word costs nothing.
func (m *Module) awaitModelCheck(ctx context.Context, oc *client) string {
	c, ok := m.cfg.Prober.(agentChecker)
	if !ok {
		return ""
	}
	if detail, known := c.AgentWord(ctx); known {
		return detail
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if detail, known := m.checkModelIn(cctx, oc); known {
		return detail
	}
	return ""
}

// providersOf is the providers of PROVIDER/MODEL names, sorted, comma-separated: a
// configured provider has tens of models, which opencode models lists.
func providersOf(models []string) string {
	var providers []string
	for _, m := range models {
		p, _, _ := strings.Cut(m, "/")
		providers = append(providers, p)
	}
	slices.Sort(providers)
	return strings.Join(slices.Compact(providers), ",")
}

// Enabled reports whether a model is configured.
func (m *Module) Enabled() bool { return m.oc != nil }

// Register adds the ai.* types to the gateway's handler table.
func (m *Module) Register(h Handlers) {
	h.Handle(TypeAsk, m.handleAsk)
	h.Handle(TypePoll, m.handlePoll)
	h.Handle(TypeAbort, m.handleAbort)
	h.Handle(TypeReset, m.handleReset)
	h.Handle(TypeApprove, m.handleApprove)
}

// Name implements server.Module.
func (m *Module) Name() string { return "agent" }

// TurnsPath lists the computers with a turn running (trap-sandbox ai-turns).
const TurnsPath = "/trapos/ai/turns"

// turnsWithAgentOff is the running turns' answer while the agent is off: an empty list read
// as "no turn running yet" to an operator who waited for one that could never start.
const turnsWithAgentOff = "this gateway's agent is off (it runs without --ai-model), so no turn runs here: start it with --ai-model PROVIDER/MODEL (SANDBOX_AI_MODEL) to turn the agent on (docs/ai.md)"

// Mount implements server.Module: the running turns, behind the API auth.
func (m *Module) Mount(routes *server.Routes) {
	routes.HandleAPIFunc("GET "+TurnsPath, func(w http.ResponseWriter, r *http.Request) {
		if !m.Enabled() {
			// As the accounts' routes of a gateway without accounts: the module is off.
			server.WriteError(w, http.StatusServiceUnavailable, CodeAIDisabled, turnsWithAgentOff)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		// The caller's account's turns only (an admin's: all), as every host surface.
		caller := account.CallerFrom(r.Context())
		turns := []TurnInfo{}
		for _, t := range m.Running() {
			if caller.Reaches(t.AccountID) {
				turns = append(turns, t)
			}
		}
		server.WriteJSON(w, http.StatusOK, turns) // a session's name is a computer's text
	})
}

// Close stops every turn (aborting it on opencode, each abort given Config.ClosingAbortWait) and the
// event stream, and waits for them.
func (m *Module) Close() {
	m.cancel(errClosing)
	m.wg.Wait()
}

// TurnInfo is one running turn, as TurnsPath lists it.
type TurnInfo struct {
	AccountID string    `json:"accountId"`
	TraposID  string    `json:"traposId"`
	Session   string    `json:"session"`
	TurnID    string    `json:"turnId"`
	Started   time.Time `json:"started"`
	// Stopping is true once the computer has its answer but opencode has not stopped yet.
	Stopping bool `json:"stopping"`
}

// Running lists the sessions with a turn, sorted by computer.
func (m *Module) Running() []TurnInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []TurnInfo{}
	for k, s := range m.sessions {
		if s.busy != nil {
			out = append(out, TurnInfo{AccountID: k.account, TraposID: k.traposID, Session: k.name, TurnID: s.busy.id,
				Started: s.busy.started, Stopping: s.busy.isDone()})
		}
	}
	sortTurns(out)
	return out
}

func (m *Module) disabled() error {
	return protocol.Errorf(CodeAIDisabled, "the agent is off: its operator must set --ai-model")
}

// askPayload is ai.ask's payload.
type askPayload struct {
	Prompt  *string `json:"prompt"`
	Session *string `json:"session"`
	Screen  *struct {
		Width  int `json:"width"`
		Height int `json:"height"`
	} `json:"screen"`
	Kind   *string `json:"kind"`
	Colour *bool   `json:"colour"`
	// Allowed and Confirm (client 0.5.17) are what the owner allows, read leniently: a value
	// no client sends is left unsaid (ownerOf), never a refusal of the question.
	Allowed json.RawMessage `json:"allowed"`
	Confirm json.RawMessage `json:"confirm"`
	// Markdown (client 0.5.18): true when the asking program lays out the answer's Markdown
	// (lists, headings, code in fences), read leniently as Allowed: anything but true is
	// plain text, what every earlier client shows.
	Markdown json.RawMessage `json:"markdown"`
}

var sessionName = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

// askShape is ai.ask's payload, as a refusal shows it.
const askShape = `{prompt, session?, screen?: {width, height}, kind?, colour?, allowed?: {files, exec, screen}, confirm?, markdown?}`

// payloadError is the bad_payload of an ai.* payload that encoding/json refused: the field and
// what it must be, in the protocol's words (server.BodyError's, the API's one wording), never
// the Go type it is decoded into.
func payloadError(typ, shape string, err error) *protocol.Error {
	return protocol.Errorf(protocol.CodeBadPayload, "%s's payload: %s", typ, server.BodyError(err, shape, nil))
}

func (m *Module) handleAsk(ctx context.Context, from protocol.Requester, raw json.RawMessage) (json.RawMessage, error) {
	if !m.Enabled() {
		return nil, m.disabled()
	}
	var p askPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, payloadError(TypeAsk, askShape, err)
	}
	switch {
	case p.Prompt == nil || strings.TrimSpace(*p.Prompt) == "":
		return nil, protocol.Errorf(protocol.CodeBadPayload, "ai.ask needs a prompt (a non-empty string of at most %d bytes)", MaxPromptBytes)
	case protocol.WireLen(*p.Prompt) > MaxPromptBytes: // CC bytes: é is one, as the computer counts it
		return nil, protocol.Errorf(protocol.CodeBadPayload, "the prompt is %d bytes; the limit is %d", protocol.WireLen(*p.Prompt), MaxPromptBytes)
	case p.Kind != nil && *p.Kind != "computer" && *p.Kind != "turtle" && *p.Kind != "pocket":
		return nil, protocol.Errorf(protocol.CodeBadPayload, `kind must be "computer", "turtle" or "pocket"`)
	case p.Screen != nil && (p.Screen.Width <= 0 || p.Screen.Height <= 0 || p.Screen.Width > protocol.MaxScreenSide || p.Screen.Height > protocol.MaxScreenSide):
		// A size no computer has is told to no model: the screen.update bound, CC's largest terminal.
		return nil, protocol.Errorf(protocol.CodeBadPayload, "screen must be {width, height}, each 1 to %d (CC's largest terminal), not %d×%d",
			protocol.MaxScreenSide, p.Screen.Width, p.Screen.Height)
	}
	name := DefaultSession
	if p.Session != nil {
		if !sessionName.MatchString(*p.Session) {
			return nil, protocol.Errorf(protocol.CodeBadPayload, "session must be 1-32 characters of a-z, 0-9, _ and -")
		}
		name = *p.Session
	}
	if err := m.lacksModel(ctx); err != nil {
		return nil, err
	}
	caller := callerOf(from)
	key := sessionKey{caller, name}
	// A full gateway refuses before the computer's place is made: a new traposId's question
	// would leave a directory under --ai-dir, and an instance in opencode, for nothing.
	if err := m.roomFor(from, caller, asking); err != nil {
		return nil, err
	}
	pl, err := m.placeOf(ctx, caller)
	if err != nil {
		return nil, m.noPlace(ctx, from, err)
	}
	defer m.leave(pl)

	m.mu.Lock()
	m.sweepLocked()
	// The conversation is made only once the question is taken (below): one refused for the
	// computer's rate under ever new session names made a record each, kept while the
	// computer went on asking.
	if s := m.sessions[key]; s != nil && s.busy != nil {
		busy := s.busy
		m.mu.Unlock()
		m.metrics.refused(refusedBusy)
		if busy.stopping() {
			return nil, busy.stillStopping(inSession(name), "ask in a moment")
		}
		if name == DefaultSession {
			return nil, protocol.Errorf(protocol.CodeBusy, "the agent is busy here: wait or stop it (Q, Ctrl-T)")
		}
		return nil, protocol.Errorf(protocol.CodeBusy, "the agent is busy in session %q: wait or stop it (ai.abort)", name)
	}
	if err := m.roomForLocked(from, caller, asking); err != nil {
		m.mu.Unlock()
		return nil, err
	}
	if wait := m.spendRateLocked(caller); wait > 0 {
		m.mu.Unlock()
		m.metrics.refused(refusedRate)
		return nil, protocol.Errorf(protocol.CodeBusy, "too many questions from here: ask again in %d s", secondsOf(wait))
	}
	s := m.sessionLocked(key, pl)
	t := newTurn(newID("turn"), caller, s, m.ctx)
	t.m, t.tr = m, newTracker()
	s.busy = t
	m.holdLocked(caller)
	m.turns[t.id] = t
	m.mu.Unlock()

	// The turn ends when the computer's socket does (ctx is the socket's), at its deadline,
	// on ai.abort or at shutdown.
	stopOnDisconnect := context.AfterFunc(ctx, func() { t.cancel(errDisconnected) })
	deadline := time.AfterFunc(m.cfg.TurnDeadline, func() { t.cancel(errDeadline) })
	body := promptBody{Parts: []textPart{{Type: "text", Text: hostText(*p.Prompt)}}, Model: m.model,
		System: systemText(from.TraposID, p)}
	m.metrics.started()
	m.log.Info("agent: turn started", "accountId", from.AccountID, "traposId", from.TraposID, "session", name, "turnId", t.id,
		"promptBytes", protocol.WireLen(*p.Prompt))
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer stopOnDisconnect()
		defer deadline.Stop()
		m.runTurn(t, body)
	}()
	return json.Marshal(map[string]string{"turnId": t.id})
}

// A refusal's words depend on what was refused: a question (ai.ask) or a reset (ai.reset).
type refusedWhat struct {
	// noun names it in the operator's WARN line; verb is the player's fix, "ask" or "reset";
	// later, the fix when its account has its share ("reset later" would take 52 columns,
	// one more than a computer's line).
	noun, verb, later string
}

var (
	asking    = refusedWhat{noun: "question", verb: "ask", later: "ask later"}
	resetting = refusedWhat{noun: "reset", verb: "reset", later: "reset soon"}
)

// roomFor refuses a question or reset of from (caller) while the gateway, or caller's account,
// runs its most turns at once: the check before the computer's place is made, so that a new
// traposId's refused request leaves no directory under --ai-dir, and no instance in opencode.
func (m *Module) roomFor(from protocol.Requester, caller callerKey, what refusedWhat) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.roomForLocked(from, caller, what)
}

// roomForLocked is roomFor with mu held: the check made again as the turn or reset takes its
// place (holdLocked).
func (m *Module) roomForLocked(from protocol.Requester, caller callerKey, what refusedWhat) error {
	if m.running >= m.cfg.MaxTurns {
		return m.full(from, m.running, what)
	}
	if held := m.accountRunning[caller.account]; caller.account != account.Local && held >= m.maxAccountTurns() {
		return m.accountFull(from, held, what)
	}
	return nil
}

// holdLocked counts a turn, or a reset talking to opencode, of caller against the gateway's
// most turns at once and its account's share; unholdLocked gives it back. Called with mu held.
func (m *Module) holdLocked(caller callerKey) {
	m.running++
	if caller.account != account.Local {
		m.accountRunning[caller.account]++
	}
}

func (m *Module) unholdLocked(caller callerKey) {
	m.running--
	if left := m.accountRunning[caller.account] - 1; left > 0 {
		m.accountRunning[caller.account] = left
	} else {
		delete(m.accountRunning, caller.account)
	}
}

// full refuses a question or reset of from while the gateway runs its most turns at once
// (running). The WARN line is a minute's per kind of request.
func (m *Module) full(from protocol.Requester, running int, what refusedWhat) error {
	m.metrics.refused(refusedGateway)
	m.warns.Log(slog.LevelWarn, "max turns "+what.noun, "agent: a "+what.noun+" was refused: the gateway runs its most turns at once (--ai-max-turns)",
		"running", running, "maxTurns", m.cfg.MaxTurns, "accountId", from.AccountID, "traposId", from.TraposID)
	return protocol.Errorf(protocol.CodeBusy, "the agent is busy with others: %s in a minute", what.verb)
}

// maxAccountTurns is the most turns an account other than local runs at once: half the
// gateway's (accountShareDivisor). The gateway's cap is first come first served, and one
// computer holds 20 turns at once, one per session, then one more every 3 s while they run:
// a player's account took the cap from every other player. local, every player's computers on
// the shared password, is bounded by the gateway's cap alone.
func (m *Module) maxAccountTurns() int {
	return max(1, m.cfg.MaxTurns/accountShareDivisor)
}

// accountShareDivisor: an account other than local runs at most MaxTurns divided by it.
const accountShareDivisor = 2

// accountFull refuses a question or reset of from while its account runs its share of the
// gateway's turns (held).
func (m *Module) accountFull(from protocol.Requester, held int, what refusedWhat) error {
	m.metrics.refused(refusedAccount)
	m.warns.Log(slog.LevelWarn, "account turns "+what.noun+" "+from.AccountID, "agent: a "+what.noun+" was refused: its account runs half the gateway's most turns at once (--ai-max-turns)",
		"running", held, "maxTurns", m.cfg.MaxTurns, "accountId", from.AccountID, "traposId", from.TraposID)
	return protocol.Errorf(protocol.CodeBusy, "your account has its share of the agent: %s", what.later)
}

// inSession names a conversation in a player's line, a program's own (the ai program's, main,
// goes without saying).
func inSession(name string) string {
	if name == DefaultSession {
		return ""
	}
	return fmt.Sprintf(" in session %q", name)
}

// sweepLocked forgets turns finished more than KeepFinished ago.
func (m *Module) sweepLocked() {
	for id, t := range m.turns {
		t.mu.Lock()
		old := t.done && time.Since(t.doneAt) > KeepFinished
		t.mu.Unlock()
		if old {
			delete(m.turns, id)
		}
	}
}

// turnOf finds a turn of the calling computer.
func (m *Module) turnOf(from protocol.Requester, id string) (*turn, error) {
	m.mu.Lock()
	t := m.turns[id]
	m.mu.Unlock()
	if t == nil || t.caller != callerOf(from) {
		return nil, protocol.Errorf(CodeUnknownTurn, "the gateway knows no turn %q of this computer (it ended long ago, or the gateway restarted): ask again", clipID(id))
	}
	return t, nil
}

func clipID(id string) string {
	if len(id) > 40 || !utf8.ValidString(id) {
		return clipUTF8(strings.ToValidUTF8(id, "?"), 40) + "..."
	}
	return id
}

type pollPayload struct {
	TurnID *string `json:"turnId"`
	After  *int    `json:"after"`
	WaitMs *int    `json:"waitMs"`
}

type pollReply struct {
	Events []Event `json:"events"`
	Done   bool    `json:"done"`
}

func (m *Module) handlePoll(ctx context.Context, from protocol.Requester, raw json.RawMessage) (json.RawMessage, error) {
	if !m.Enabled() {
		return nil, m.disabled()
	}
	var p pollPayload
	if err := json.Unmarshal(raw, &p); err != nil || p.TurnID == nil || p.After == nil {
		return nil, protocol.Errorf(protocol.CodeBadPayload, "ai.poll needs turnId (a string) and after (the last seq seen, 0 at first)")
	}
	t, err := m.turnOf(from, *p.TurnID)
	if err != nil {
		return nil, err
	}
	wait := MaxPollWait
	if p.WaitMs != nil {
		wait = min(max(time.Duration(*p.WaitMs)*time.Millisecond, 0), MaxPollWait)
	}
	events, done := t.poll(ctx, *p.After, wait)
	return json.Marshal(pollReply{Events: events, Done: done})
}

type turnPayload struct {
	TurnID    *string `json:"turnId"`
	ConfirmID *string `json:"confirmId"`
	Allow     *bool   `json:"allow"`
	// Reason is why the computer refused without asking (its settings); optional.
	Reason *string `json:"reason"`
}

// maxReasonBytes caps ai.approve's reason: one message of the computer's permission check.
const maxReasonBytes = 1024

func (m *Module) handleAbort(_ context.Context, from protocol.Requester, raw json.RawMessage) (json.RawMessage, error) {
	if !m.Enabled() {
		return nil, m.disabled()
	}
	var p turnPayload
	if err := json.Unmarshal(raw, &p); err != nil || p.TurnID == nil {
		return nil, protocol.Errorf(protocol.CodeBadPayload, "ai.abort needs turnId (a string)")
	}
	t, err := m.turnOf(from, *p.TurnID)
	if err != nil {
		return nil, err
	}
	t.cancel(errAborted)
	return nil, nil
}

func (m *Module) handleApprove(_ context.Context, from protocol.Requester, raw json.RawMessage) (json.RawMessage, error) {
	if !m.Enabled() {
		return nil, m.disabled()
	}
	var p turnPayload
	if err := json.Unmarshal(raw, &p); err != nil || p.TurnID == nil || p.ConfirmID == nil || p.Allow == nil {
		return nil, protocol.Errorf(protocol.CodeBadPayload, "ai.approve needs turnId and confirmId (strings) and allow (a boolean)")
	}
	a := confirmAnswer{allow: *p.Allow}
	if p.Reason != nil && !a.allow {
		if n := protocol.WireLen(*p.Reason); n > maxReasonBytes {
			return nil, protocol.Errorf(protocol.CodeBadPayload, "ai.approve's reason is %d bytes; the limit is %d", n, maxReasonBytes)
		}
		a.reason = firstLine(hostText(*p.Reason))
	}
	t, err := m.turnOf(from, *p.TurnID)
	if err != nil {
		return nil, err
	}
	if !t.answerConfirm(*p.ConfirmID, a) {
		return nil, protocol.Errorf(CodeUnknownTurn, "no confirmation %q waits on this turn (answered already, timed out, or the turn ended)", clipID(*p.ConfirmID))
	}
	return nil, nil
}

func (m *Module) handleReset(ctx context.Context, from protocol.Requester, raw json.RawMessage) (json.RawMessage, error) {
	if !m.Enabled() {
		return nil, m.disabled()
	}
	var p struct {
		Session *string `json:"session"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, payloadError(TypeReset, "{session?}", err)
	}
	name := DefaultSession
	if p.Session != nil {
		if !sessionName.MatchString(*p.Session) {
			return nil, protocol.Errorf(protocol.CodeBadPayload, "session must be 1-32 characters of a-z, 0-9, _ and -")
		}
		name = *p.Session
	}
	key := sessionKey{callerOf(from), name}
	// A computer without a directory under --ai-dir has no conversation at opencode (opencode
	// keeps a directory's sessions; one removed goes with its conversations, dirs.go): nothing
	// to forget, answered at once. Such a reset asks opencode nothing, makes no place, spends
	// no rate and leaves no record, so resets under ever new traposIds cost a stat each.
	if _, err := os.Stat(ComputerDir(m.cfg.Dir, key.account, key.traposID)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	// A reset talks to opencode (a search, maybe a delete; up to callTimeout), and may make
	// the computer's place: it counts as a turn against the gateway's most turns at once and
	// its account's share while it does, so resets from ever new traposIds (the shared
	// password) are bounded gateway-wide, as questions are.
	if err := m.roomFor(from, key.callerKey, resetting); err != nil {
		return nil, err
	}
	pl, err := m.placeOf(ctx, key.callerKey)
	if err != nil {
		return nil, m.noPlace(ctx, from, err)
	}
	defer m.leave(pl)
	m.mu.Lock()
	if s := m.sessions[key]; s != nil && s.busy != nil {
		busy := s.busy
		m.mu.Unlock()
		if busy.stopping() {
			return nil, busy.stillStopping(inSession(name), "reset soon")
		}
		if name == DefaultSession {
			return nil, protocol.Errorf(protocol.CodeBusy, "the agent is busy here: stop it (Q), then reset")
		}
		return nil, protocol.Errorf(protocol.CodeBusy, "the agent is busy in session %q: stop it (ai.abort), then reset", name)
	}
	// A reset asks opencode for the conversation (and deletes it): it spends the computer's
	// rate as a question does, or a computer resetting as fast as it writes frames sent
	// opencode as many requests, 16 at once on each of its sockets.
	if err := m.roomForLocked(from, key.callerKey, resetting); err != nil {
		m.mu.Unlock()
		return nil, err
	}
	if wait := m.spendRateLocked(key.callerKey); wait > 0 {
		m.mu.Unlock()
		m.metrics.refused(refusedRate)
		return nil, protocol.Errorf(protocol.CodeBusy, "too many resets and questions from here: reset again in %d s", secondsOf(wait))
	}
	s := m.sessionLocked(key, pl)
	// Held busy by a placeholder while opencode forgets the conversation, so no ask races it,
	// and counted as a turn (roomFor above).
	hold := newTurn("reset", key.callerKey, s, m.ctx)
	hold.done = true
	s.busy = hold
	m.holdLocked(key.callerKey)
	id := s.opencodeID
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		s.busy = nil
		m.unholdLocked(key.callerKey)
		m.mu.Unlock()
	}()

	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if id == "" {
		found, err := s.oc.findSession(cctx, key.title())
		if err != nil {
			return nil, m.unavailable(cctx, err)
		}
		if found == nil {
			return nil, nil // nothing to forget
		}
		id = found.ID
	}
	var ae *apiError
	if err := s.oc.deleteSession(cctx, id); err != nil && !(errors.As(err, &ae) && ae.status == http.StatusNotFound) {
		return nil, m.unavailable(cctx, err)
	}
	m.mu.Lock()
	s.opencodeID = ""
	m.mu.Unlock()
	m.log.Info("agent: conversation reset", "accountId", from.AccountID, "traposId", from.TraposID, "session", name)
	return nil, nil
}

// spendRateLocked takes one of caller's questions and resets (Config.RateBurst at once, then
// one per Config.RateEvery), or returns how long until it has one. Called with mu held.
func (m *Module) spendRateLocked(caller callerKey) time.Duration {
	lim := m.limiters[caller]
	if lim == nil {
		lim = rate.NewLimiter(rate.Every(m.cfg.RateEvery), m.cfg.RateBurst)
		m.limiters[caller] = lim
	}
	r := lim.Reserve()
	if wait := r.Delay(); wait > 0 {
		r.Cancel()
		return wait
	}
	return 0
}

// secondsOf is a wait as a player reads it: whole seconds, rounded up.
func secondsOf(wait time.Duration) int { return int(wait.Seconds()) + 1 }

// sessionLocked returns the conversation of key, made on first use in the computer's place.
func (m *Module) sessionLocked(key sessionKey, pl *place) *session {
	s := m.sessions[key]
	if s == nil {
		s = &session{key: key, pl: pl, oc: pl.oc}
		m.sessions[key] = s
	}
	return s
}

// noPlace is the answer when the computer's directory cannot be prepared: opencode's failure
// to forget a removed account's conversations is any other opencode failure (unavailable);
// otherwise the operator's log says why (a host path and a system error are no business of
// the player's).
func (m *Module) noPlace(ctx context.Context, from protocol.Requester, err error) *protocol.Error {
	if errors.Is(err, errTooManyComputers) {
		return m.tooManyComputers(from)
	}
	if errors.Is(err, errTooManyDirs) {
		return m.tooManyDirs(from)
	}
	if de := (*dirRoomError)(nil); errors.As(err, &de) {
		m.log.Warn("agent: cannot delete the conversations of the least recently used computer's directory on opencode, to make room for a new computer's (--ai-max-dirs)",
			"traposId", from.TraposID, "account", from.AccountID, "err", firstLine(de.err.Error()))
		return m.unavailable(ctx, de.err)
	}
	if errors.Is(err, errRemovedAccount) {
		m.log.Info("agent: refused a question of a removed account's computer: a newer account of its name has claimed its directory",
			"traposId", from.TraposID, "account", from.AccountID)
		return protocol.Errorf(protocol.CodeUnauthorized, "this computer's account was removed, and its name given to a new account: the agent no longer answers it")
	}
	var oe *opencodeError
	if errors.As(err, &oe) {
		m.log.Warn("agent: cannot delete a removed account's conversations on opencode; the account's computers cannot ask until it can",
			"account", from.AccountID, "err", firstLine(oe.err.Error()))
		return m.unavailable(ctx, oe.err)
	}
	m.log.Error("agent: cannot prepare a computer's directory", "traposId", from.TraposID, "account", from.AccountID, "err", err)
	return protocol.Errorf(CodeAIUnavailable, "the agent is unavailable: the gateway cannot prepare this computer's directory (its operator's log says why)")
}

// unavailable is the ai_unavailable error for a failed opencode call: the probe's one line
// when opencode is down, else the call's own.
func (m *Module) unavailable(ctx context.Context, err error) *protocol.Error {
	msg, _ := m.diagnose(ctx, err, 0)
	return protocol.Errorf(CodeAIUnavailable, "%s", msg)
}

// diagnose words a failed opencode call for the player and tells its fault: opencode down
// (the probe says so, or the call had no answer), refusing the gateway's credentials, or
// failing otherwise. waited is how long the question's call waited (0: not known): where
// neither it nor the probe got an answer, the line says both waits, as the player waited
// their sum (it said only the probe's "no answer within 5s" after 10 s or more of Thinking...).
func (m *Module) diagnose(ctx context.Context, err error, waited time.Duration) (string, *fault) {
	var ae *apiError
	refused := errors.As(err, &ae) && ae.status == http.StatusUnauthorized
	if m.cfg.Prober != nil {
		// The probe's line for a 401 too, so a question's refusal reads as sandbox health's
		// opencodeDetail and ai alone's line (opencode.RefusedCredentials), with the server.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
		defer cancel()
		if h := m.cfg.Prober.Probe(pctx); !h.OK {
			f := faultUnreachable
			if h.Status == http.StatusUnauthorized {
				f = m.credentialsFault()
			}
			if h.NoAnswerWithin > 0 {
				f = faultHung // it took the probe's connection: it runs
				if waited > 0 && ae == nil {
					return fmt.Sprintf("the agent is unavailable: %s: the question's call got no answer in %s, and the health check none in %s",
						h.Server, waited.Round(100*time.Millisecond), h.NoAnswerWithin), f
				}
			}
			return "the agent is unavailable: " + h.Detail, f
		}
	}
	if refused {
		return "the agent is unavailable: opencode " + opencode.RefusedCredentials(m.oc.password != ""), m.credentialsFault()
	}
	var he *hostError
	if errors.As(err, &he) {
		if he.fault != nil {
			return "the agent is unavailable: " + he.player, he.fault
		}
		return "the agent is unavailable: " + he.player, faultOpencode
	}
	f := faultUnreachable // no HTTP answer at all
	if ae != nil {
		f = faultOpencode
	}
	return "the agent is unavailable: " + firstLine(err.Error()), f
}

// credentialsFault is opencode's 401 as the operator's fault: to a password the gateway sent,
// or to none.
func (m *Module) credentialsFault() *fault {
	if m.oc.password == "" {
		return faultCredentialsMissing
	}
	return faultCredentials
}

// newID returns a random id with a prefix, e.g. turn_3f9a….
func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}
