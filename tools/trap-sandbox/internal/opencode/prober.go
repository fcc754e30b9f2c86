// Package opencode checks whether the opencode server the sandbox talks to is reachable and
// healthy, and explains in one line why when it is not (Prober, shared by probe_gateway's
// answer and the agent, whose own check that its model is there rides on the probe:
// AgentCheck). It is also the one reading of opencode's address (ParseURL) for every part of
// the gateway that talks to opencode.
package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
)

// DefaultProbeTimeout bounds one probe: the opencode web client uses the same 5 s.
const DefaultProbeTimeout = 5 * time.Second

// DefaultUsername is opencode's default Basic Auth user (OPENCODE_SERVER_USERNAME).
const DefaultUsername = "opencode"

// healthPath is the route opencode answers with {"healthy":true,"version":...}. Any unknown
// path answers 200 with the HTML web UI, so the body has to be checked, not just the status.
const healthPath = "global/health"

// probeIdleConnTimeout closes the kept-alive probe connection when no probe has used it for
// this long, so a gateway that nobody probes holds no upstream connection. Should the server
// end it first, the next probe simply dials again (TestProbeKeptAliveConnectionTellsTheTruth).
const probeIdleConnTimeout = 5 * time.Second

// maxHealthBody caps how much of the answer is read: the real body is ~40 bytes.
const maxHealthBody = 64 << 10

// Health is the outcome of one probe.
type Health struct {
	// OK is true only for a 200 application/json answer whose healthy field is true.
	OK bool
	// Version is the server's version when OK.
	Version string
	// Detail names the URL and the cause when not OK, on one line. It never holds a secret.
	Detail string
	// Status is the HTTP status of the server's answer, 0 when none came (nothing listens,
	// a timeout): 401 is a password to fix, where 0 may be a server still starting.
	Status int
	// NoAnswerWithin is the probe's timeout when the server accepted it and answered nothing
	// within it (Detail says "no answer within" it), 0 otherwise. Server is Detail's subject,
	// "opencode at <URL>" (without a password), so a caller can say what else went unanswered.
	NoAnswerWithin time.Duration
	Server         string
	// AIDetail, only when OK, is what keeps the agent from working though opencode answers
	// (its model missing there), as the agent's check (SetAgentCheck) last said it; "" when
	// nothing does, or no check is set.
	AIDetail string
}

// AgentRecheck is how long the agent's check's word that nothing keeps the agent from working
// stands: the first upstream probe at least this long after the check last ran runs it again,
// so a model opencode loses while it goes on answering (restarted between two probes without
// the provider's key) is said within it. It costs one GET /config/providers a minute at most,
// and only while probes come (probe_gateway's quick answers, within Fresh, run none).
const AgentRecheck = time.Minute

// DefaultAgentWait bounds how long a probe waits for the agent's check to say again a fault it
// found (ProberConfig.AgentWait): on an opencode that has loaded the directory the check
// answers within milliseconds; a freshly started one took 6 s to list its providers, which
// every sandbox health waited for on top of its own health's answer (up to 10 s, the
// computer's limit). Past it the answer says nothing of the fault, as of one the check could
// not confirm, and the check's word is in the answers after it ends.
const DefaultAgentWait = time.Second

// AgentCheck says, asking opencode, what keeps the agent from working though opencode
// answers ("" nothing); known is false when opencode gave no answer to judge by (a timeout: a
// fresh opencode lists its providers for seconds the first time), and the check is asked
// again at the next probe. The agent sets one (SetAgentCheck).
type AgentCheck func(ctx context.Context) (detail string, known bool)

// ProberConfig configures a Prober.
type ProberConfig struct {
	// URL is the opencode server's base URL, e.g. http://127.0.0.1:4242.
	URL string
	// Username and Password are sent as Basic Auth, only when Password is non-empty (a server
	// without a password ignores the header, one with a password rejects a missing one).
	Username string
	Password string
	// Timeout bounds each probe; zero means DefaultProbeTimeout.
	Timeout time.Duration
	// Transport is the HTTP transport; nil means one that keeps a single idle connection.
	Transport http.RoundTripper
	// Clock is what Recent measures a result's age by, the agent's check's word its age
	// (AgentRecheck), and a probe's request its Timeout by (a test moves it past a probe that
	// opencode takes and never answers, where a short Timeout of the wall clock could pass on
	// a loaded machine before the connection was made); nil means clock.Real. The agent's
	// check's own bound (Timeout too) and AgentWait run on the wall clock.
	Clock clock.Clock
	// AgentWait bounds a probe's wait for the agent's check while its last word is a fault;
	// zero means DefaultAgentWait.
	AgentWait time.Duration
}

// Prober probes opencode's /global/health. Concurrent Probe calls share one upstream request.
// Close must be called when done: it stops an in-flight probe and waits for it.
type Prober struct {
	healthURL *url.URL
	username  string
	password  string
	timeout   time.Duration
	agentWait time.Duration
	client    *http.Client

	// base parents every upstream request, so Close can stop one no caller waits for any more.
	base   context.Context
	cancel context.CancelFunc
	// mu guards current and closed, and orders inflight.Add before Close's Wait.
	mu sync.Mutex
	// current is the upstream probe in flight, which new callers join; nil when none runs.
	current *flight
	closed  bool
	// last is the result of the last upstream probe to finish, and lastAt when it did
	// (Recent; zero before the first).
	last   Health
	lastAt time.Time
	clock  clock.Clock
	// inflight counts running upstream probes (they outlive a caller that gave up).
	inflight sync.WaitGroup
	// agentCheck is the agent's check; it and the rest of the agent's fields are guarded by
	// mu. agentDetail, agentChecked and agentCheckedAt are the check's last word, whether it
	// holds (it is asked again after an opencode that did not answer, on every flight while it
	// found fault, and once it is AgentRecheck old), and when it was said (the prober's clock).
	// agentRunning is closed when the check running beside the flights (one at a time) ends,
	// nil when none runs; agentEpoch counts flights that found opencode down, so a check that
	// began before one does not set its word after it.
	agentCheck     AgentCheck
	agentDetail    string
	agentChecked   bool
	agentCheckedAt time.Time
	agentRunning   chan struct{}
	agentEpoch     uint64
	// agentStale asks the next healthy flight to run the check whatever its word (RecheckAgent).
	agentStale atomic.Bool
}

// flight is one upstream probe and everyone waiting for it.
type flight struct {
	done    chan struct{} // closed when health is set
	health  Health
	callers int // how many Probe calls wait on it (guarded by Prober.mu; tests wait on it)
}

// ParseURL reads opencode's base URL as every part of the gateway that talks to opencode
// needs it: http or https with a host. Its errors never repeat a password given in the URL
// (url.Parse's own error quotes the whole URL), so they can be printed and logged as they are.
func ParseURL(raw string) (*url.URL, error) {
	base, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("opencode url: not a URL (%w)", errors.Unwrap(err))
	}
	if base.Scheme != "http" && base.Scheme != "https" {
		return nil, fmt.Errorf("opencode url %s: scheme must be http or https", base.Redacted())
	}
	if base.Host == "" {
		return nil, fmt.Errorf("opencode url %s: no host", base.Redacted())
	}
	return base, nil
}

// NewProber validates cfg and returns a Prober.
func NewProber(cfg ProberConfig) (*Prober, error) {
	base, err := ParseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultProbeTimeout
	}
	if cfg.Username == "" {
		cfg.Username = DefaultUsername
	}
	transport := cfg.Transport
	if transport == nil {
		// One kept-alive connection: a new TCP connection per probe cost the gateway more
		// than the rest of a probe_gateway round trip (docs/performance.md). Reuse does not
		// hide an outage: a stopped server closes the idle connection (the next probe dials
		// anew), and a GET that fails on a reused connection is retried on a fresh one.
		transport = &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			MaxIdleConnsPerHost: 1, // probes are coalesced: one runs at a time
			IdleConnTimeout:     probeIdleConnTimeout,
		}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.AgentWait <= 0 {
		cfg.AgentWait = DefaultAgentWait
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Prober{
		clock:     cfg.Clock,
		healthURL: base.JoinPath(healthPath),
		username:  cfg.Username,
		password:  cfg.Password,
		timeout:   cfg.Timeout,
		agentWait: cfg.AgentWait,
		client: &http.Client{
			Transport: transport,
			// A redirect is not what opencode does; report it instead of following it.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		base:   ctx,
		cancel: cancel,
	}, nil
}

// URL returns the probed URL as the gateway shows it (shown).
func (p *Prober) URL() string {
	return shown(*p.healthURL)
}

// shown is u as a log line or a computer's probe_gateway answer shows it: without its
// password, and without its query's values, which may be secrets too (a proxy's
// ?token=…: every player who types sandbox health read it).
func shown(u url.URL) string {
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	u.Fragment, u.RawFragment = "", ""
	return u.Redacted()
}

// Probe checks opencode once, or joins a probe already running. It returns when the probe is
// done or when ctx ends, whichever is first: within the configured timeout, and AgentWait more
// while the agent's check last found a fault, which the flight waits to hear again (fly).
func (p *Prober) Probe(ctx context.Context) Health {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return Health{Detail: p.describe("the prober is closed (shutting down)")}
	}
	f := p.current
	if f == nil {
		f = &flight{done: make(chan struct{})}
		p.current = f
		p.inflight.Add(1)
		go p.fly(f)
	}
	f.callers++
	p.mu.Unlock()
	select {
	case <-f.done:
		return f.health
	case <-ctx.Done():
		return Health{Detail: p.describe("the probe was abandoned: " + ctx.Err().Error())}
	}
}

// SetAgentCheck makes every upstream probe that finds opencode healthy carry check's word
// (Health.AIDetail) in its result, and so in Recent's. The check runs in the probe's flight
// only when its word may have changed: at the first healthy probe, after one that was not, and
// on each while it found fault (a key given to opencode later clears it at the next probe),
// until it knows, and once its word is AgentRecheck old (a model lost while opencode answers);
// otherwise the last word is carried, at no cost. The check runs beside the flight, which does
// not wait for it while its last word is that nothing is wrong: its word is in the results
// after it ends (ProbeAgent waits for it). A fault is carried only once checked again (the
// flight waits for it, AgentWait at most), and dropped when that check gets no answer. It must
// return within the probe's timeout.
func (p *Prober) SetAgentCheck(check AgentCheck) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.agentCheck = check
}

// RecheckAgent makes the next upstream probe that finds opencode healthy run the agent's check
// whatever its last word: the agent learnt that it may be wrong (a turn failed with opencode's
// "Model not found" since the check found the model).
func (p *Prober) RecheckAgent() {
	p.agentStale.Store(true)
}

// Recent returns the result of the last upstream probe if it finished at most maxAge ago,
// without waiting and without probing; false when there is none that fresh (or the prober
// is closed). Probe never reuses a result: Recent is for a caller that may answer from one
// instead (probe_gateway's quick answer, opencodehealth.Fresh).
func (p *Prober) Recent(maxAge time.Duration) (Health, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.lastAt.IsZero() || p.clock.Now().Sub(p.lastAt) > maxAge {
		return Health{}, false
	}
	return p.last, true
}

// fly runs f's upstream request and hands its result to every caller that joined. Callers
// that arrive after it finished start a new flight: Probe never reuses a result (Recent
// does, for callers that ask for it). A flight that finds opencode healthy carries the agent's
// check's last word, and starts the check beside it when that word may have changed
// (runAgentCheck), whose word the next result has: it does not wait for the check while that
// word is that nothing is wrong (a fresh opencode took the probe's 5 s to list its providers:
// every sandbox health waited on it), and waits for it while the word is a fault, AgentWait at
// most (past it the result says nothing of the fault, which the check has not confirmed).
func (p *Prober) fly(f *flight) {
	defer p.inflight.Done()
	health := p.probeOnce()
	p.mu.Lock()
	switch {
	case p.agentCheck == nil:
	case !health.OK:
		p.agentChecked = false // a restarted opencode may have other providers
		p.agentEpoch++
	default:
		if p.agentRunning == nil && (p.agentStale.Load() || !p.agentChecked || p.agentDetail != "" ||
			p.clock.Now().Sub(p.agentCheckedAt) >= AgentRecheck) {
			p.agentStale.Store(false)
			p.agentRunning = make(chan struct{})
			p.inflight.Add(1) // within this flight's count: Close's Wait waits for it too
			go p.runAgentCheck(p.agentCheck, p.agentEpoch, p.agentRunning)
		}
		confirmed := true
		if running := p.agentRunning; running != nil && p.agentDetail != "" {
			// A fault is said only as the check says it again: its operator may have fixed it
			// since (opencode restarted with the model's key, between two probes), and the
			// player reads the old word as "tell the operator" (ai alone refused to open). The
			// wait is AgentWait at most (the check's own bound is the probe's timeout): one
			// that has not answered by then has not confirmed the fault, which is not said.
			p.mu.Unlock()
			wait := time.NewTimer(p.agentWait)
			select {
			case <-running:
			case <-wait.C:
				confirmed = false
			}
			wait.Stop()
			p.mu.Lock()
			select {
			case <-running: // it ended as the wait did: its word is in agentDetail
				confirmed = true
			default:
			}
		}
		if confirmed {
			health.AIDetail = p.agentDetail
		}
	}
	p.current = nil
	p.last, p.lastAt = health, p.clock.Now()
	p.mu.Unlock()
	f.health = health
	close(f.done)
}

// runAgentCheck runs check once, beside the flights, and keeps its word: for the next flights,
// and in the last result (Recent) while that found opencode healthy and none found it down
// since the check began. A check that gets no answer keeps a word that all is well, and
// drops a fault (unknown again).
func (p *Prober) runAgentCheck(check AgentCheck, epoch uint64, done chan struct{}) {
	defer p.inflight.Done()
	ctx, cancel := context.WithTimeout(p.base, p.timeout)
	detail, known := check(ctx)
	cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	if epoch == p.agentEpoch {
		switch {
		case known:
			p.agentDetail, p.agentChecked, p.agentCheckedAt = detail, true, p.clock.Now()
		case p.agentDetail != "":
			// A fault the check could not confirm is not said: a restarted opencode took 6 s
			// to list its providers the first time, past the check's 5 s, and the fault its
			// operator had fixed with that restart stood (ai refused questions with it). The
			// next probe asks again.
			p.agentDetail, p.agentChecked = "", false
		}
		if p.last.OK {
			p.last.AIDetail = p.agentDetail
		}
	}
	p.agentRunning = nil
	close(done)
}

// ProbeAgent is Probe, and then waits (within ctx) for the agent's check that probe started or
// found running, and returns the result with the check's word after it: for a caller that must
// know the agent's word now (a question refused at once while opencode lacks the model), where
// a probe_gateway answers without waiting for it.
func (p *Prober) ProbeAgent(ctx context.Context) Health {
	health := p.Probe(ctx)
	if !health.OK {
		return health
	}
	if !p.awaitAgentCheck(ctx) {
		return health
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	health.AIDetail = p.agentDetail // the check may also have ended before Probe returned
	return health
}

// awaitAgentCheck waits for the agent's check in flight, if one is, to end; false when ctx
// ended first.
func (p *Prober) awaitAgentCheck(ctx context.Context) bool {
	p.mu.Lock()
	running := p.agentRunning
	p.mu.Unlock()
	if running == nil {
		return true
	}
	select {
	case <-running:
		return true
	case <-ctx.Done():
		return false
	}
}

// AgentWord is the agent's check's last word once a check in flight has ended (or ctx has):
// known is false while no check has answered since opencode was last found down (a restarted
// opencode may have other providers) or since the prober began. It asks opencode nothing.
func (p *Prober) AgentWord(ctx context.Context) (detail string, known bool) {
	p.awaitAgentCheck(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.agentDetail, p.agentChecked
}

// Close cancels any running probe, waits for it to finish and closes the idle connection.
func (p *Prober) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.inflight.Wait()
	p.client.CloseIdleConnections()
}

func (p *Prober) probeOnce() Health {
	ctx, cancel := clock.WithTimeout(p.base, p.clock, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.healthURL.String(), nil)
	if err != nil {
		return Health{Detail: p.describe("cannot build the request")}
	}
	if p.password != "" {
		req.SetBasicAuth(p.username, p.password)
	}
	req.Header.Set("Accept", "application/json")

	// Whether opencode took the connection: a probe that timed out before it did (a host that
	// drops the packets, a wrong address behind a firewall) reached no opencode to call hung.
	var connected atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
	}))

	resp, err := p.client.Do(req)
	if err != nil {
		return p.transportFailure(ctx, err, connected.Load())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHealthBody))
	if err != nil {
		return p.transportFailure(ctx, err, true)
	}
	h := p.classify(resp, body)
	h.Status = resp.StatusCode
	return h
}

// The words of opencode's 401 to the gateway's Basic Auth, the one home of them: the probe's
// Detail (sandbox health's opencodeDetail, ai alone, the gateway's log), a turn's
// ai_unavailable (ai <question>) and the agent's WARN all say it so, where a wrong password
// read "401 unauthorized (check OPENCODE_SERVER_PASSWORD / …)" on some and "opencode refused
// the gateway's credentials (…)" on others. Said as the probe's other answers are ("answered
// 404 Not Found, not opencode"). The fix is the operator's: on a computer, "check
// OPENCODE_SERVER_PASSWORD" read as the player's to do (TrapOS's old ai kept the password).
const (
	// CredentialsRefused is opencode's 401 to a password the gateway sent.
	CredentialsRefused = "answered 401, refusing the gateway's credentials"
	// CredentialsFix is CredentialsRefused's fix.
	CredentialsFix = "give the gateway opencode's server password, --opencode-password (OPENCODE_SERVER_PASSWORD), and its user if not opencode (OPENCODE_SERVER_USERNAME)"
	// CredentialsMissing is opencode's 401 to a gateway that sent no password.
	CredentialsMissing = "answered 401, wanting a password the gateway does not send"
	// CredentialsMissingFix is CredentialsMissing's fix.
	CredentialsMissingFix = "give the gateway opencode's server password, --opencode-password (OPENCODE_SERVER_PASSWORD)"
)

// RefusedCredentials is opencode's 401 with its fix, after "opencode" or "opencode at <URL>:"
// (sent: whether the gateway sent a password).
func RefusedCredentials(sent bool) string {
	if !sent {
		return CredentialsMissing + ": its operator must " + CredentialsMissingFix
	}
	return CredentialsRefused + ": its operator must " + CredentialsFix
}

// classify turns a complete answer into a Health.
func (p *Prober) classify(resp *http.Response, body []byte) Health {
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return Health{Detail: p.describe(RefusedCredentials(p.password != ""))}
	case resp.StatusCode == http.StatusNotFound:
		// opencode answers every path it does not route with its web app (200 text/html), so a
		// 404 comes from another server: most often the gateway's own port or another service
		// named by mistake.
		return Health{Detail: p.describe("answered 404 Not Found, not opencode (wrong URL? set OPENCODE_URL to opencode serve's address)")}
	case resp.StatusCode != http.StatusOK:
		return Health{Detail: p.describe(fmt.Sprintf("answered status %d (opencode, or a proxy in front of it, failed: see its log)", resp.StatusCode))}
	}
	contentType := resp.Header.Get("Content-Type")
	mediaType, _, _ := mime.ParseMediaType(contentType)
	if mediaType != "application/json" {
		shown := mediaType
		if shown == "" {
			shown = "without a content type"
		}
		return Health{Detail: p.describe(fmt.Sprintf("answered 200 %s, not an opencode health response (wrong URL?)", shown))}
	}
	var health struct {
		Healthy *bool  `json:"healthy"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(body, &health); err != nil || health.Healthy == nil {
		return Health{Detail: p.describe("answered 200 application/json without a healthy field, not an opencode health response (wrong URL?)")}
	}
	if !*health.Healthy {
		return Health{Detail: p.describe("reports healthy: false")}
	}
	return Health{OK: true, Version: health.Version}
}

// transportFailure is the Health of a probe that got no complete answer; connected says
// whether the server took its connection.
func (p *Prober) transportFailure(ctx context.Context, err error, connected bool) Health {
	h := Health{Detail: p.describe(p.transportCause(ctx, err)), Server: p.server()}
	if connected && timedOut(ctx, err) {
		h.NoAnswerWithin = p.timeout
	}
	return h
}

// timedOut reports whether a probe's request failed because its timeout passed.
func timedOut(ctx context.Context, err error) bool {
	return errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)
}

// transportCause names why no complete answer arrived, without repeating the URL (which may
// be the full error text) so that the detail stays one line and free of secrets.
func (p *Prober) transportCause(ctx context.Context, err error) string {
	var dnsErr *net.DNSError
	switch {
	case timedOut(ctx, err):
		return fmt.Sprintf("no answer within %s", p.timeout)
	case errors.Is(err, context.Canceled):
		return "the probe was cancelled (shutting down)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("cannot resolve host %s", dnsErr.Name)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed without an answer"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "host unreachable"
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // url.Error repeats the URL, which may carry credentials
	}
	return "unreachable: " + oneLine(err.Error())
}

// maxCauseBytes bounds the cause in a Detail: it can quote what the server sent (a malformed
// status line, a content type), and the Detail goes into a probe_gateway answer and a log line.
const maxCauseBytes = 300

func (p *Prober) describe(cause string) string {
	return fmt.Sprintf("%s: %s", p.server(), cctext.Clip(cause, maxCauseBytes))
}

// server is what a Detail is about: "opencode at <URL>".
func (p *Prober) server() string {
	return "opencode at " + p.baseRedacted()
}

// baseRedacted is the configured base URL (not the health path), as the user wrote it, minus
// any password and query values (shown).
func (p *Prober) baseRedacted() string {
	u := *p.healthURL
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, healthPath), "/")
	u.RawPath = ""
	return shown(u)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
