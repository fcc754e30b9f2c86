package agent

import (
	"log/slog"
	"sync"

	"trap-sandbox/internal/logthrottle"
	"trap-sandbox/internal/opencode"
)

// fault is a cause of failed turns that only the gateway's operator can fix (not a player's
// mistake, a turn stopped, or a turn's own limit): its WARN line names the cause and the fix.
type fault struct {
	cause, fix string
}

// The faults a turn fails with.
var (
	faultUnreachable = &fault{"opencode is unreachable",
		"start opencode serve, or point --opencode-url (OPENCODE_URL) at it"}
	// faultHung is opencode that takes connections and answers nothing in the probe's timeout:
	// it runs (held by SIGSTOP, or stuck), so "start opencode serve" was the wrong fix. A
	// starting opencode 1.18.33 looks so for a few seconds too (opencodefake.Server.Unstall).
	faultHung = &fault{"opencode accepts connections but answers nothing",
		"if it started seconds ago, nothing to do; else it is hung: restart opencode serve"}
	faultCredentials        = &fault{"opencode " + opencode.CredentialsRefused, opencode.CredentialsFix}
	faultCredentialsMissing = &fault{"opencode " + opencode.CredentialsMissing, opencode.CredentialsMissingFix}
	faultOpencode           = &fault{"opencode failed",
		"the error and opencode's own log say why"}
	faultMCP = &fault{"opencode cannot reach the gateway's MCP endpoint",
		"point --ai-mcp-url (SANDBOX_AI_MCP_URL) at this gateway's /mcp as opencode's host reaches it"}
	faultModel = &fault{"the model failed",
		"check that --ai-model (SANDBOX_AI_MODEL) is a model opencode has (opencode models), that opencode's host reaches its provider, and the provider's key and quota"}
)

// message is the fault's WARN line.
func (f *fault) message() string {
	return "agent: turns fail: " + f.cause + " (fix: " + f.fix + ")"
}

// worksAgainMessage is the INFO line of the first turn that succeeds after a WARN of a fault.
const worksAgainMessage = "agent: works again: a turn succeeded after turns failed"

// outages tells the operator, at WARN, of turns failing with a fault: at most one line per
// fault per logthrottle.Every (the turns in between counted in the next line's
// suppressedSinceLast), and one INFO line when a turn succeeds again after such a WARN.
// A fault warned less than a minute ago is counted, not warned again, even across a success,
// so a fault that comes and goes (a provider's quota) writes no more than one WARN a minute.
type outages struct {
	log   *slog.Logger
	warns *logthrottle.Throttle

	mu     sync.Mutex
	failed int  // turns failed with a fault since the last turn that succeeded; guarded by mu
	warned bool // a fault was warned since the last turn that succeeded; guarded by mu
}

func newOutages(logger *slog.Logger, warns *logthrottle.Throttle) *outages {
	return &outages{log: logger, warns: warns}
}

// turnFailed counts a turn failed with f; detail is the error as the operator reads it.
func (o *outages) turnFailed(f *fault, detail string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failed++
	if o.warns.Log(slog.LevelWarn, f.cause, f.message(), "error", detail) {
		o.warned = true
	}
}

// turnSucceeded notes a turn that ended well: after a WARN, the agent works again.
func (o *outages) turnSucceeded() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.warned {
		o.log.Info(worksAgainMessage, "failedTurns", o.failed)
	}
	o.failed, o.warned = 0, false
}
