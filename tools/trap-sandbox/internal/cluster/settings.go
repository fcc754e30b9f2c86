package cluster

import (
	"encoding/base64"
	"log/slog"

	"trap-sandbox/internal/slowhash"
)

// Settings that must agree. Any replica may serve any computer's hello and any host request, so
// a replica started with another SANDBOX_PASSWORD refuses the hellos the others accept:
// computers behind a load balancer flicker between connected and unauthorized (and a refused
// daemon stops reconnecting until its player acts). Each replica's heartbeat carries its
// Settings; a replica that reads another's that differ from its own logs it, once per other
// replica and differing value (again when that value changes), and counts the live replicas
// that differ (trapos_gateway_replica_settings_differ). The secrets go on the bus only as
// secretTag: any client of the replicas' NATS account reads the heartbeats.

// Settings are what a replica's heartbeat says of the settings every replica must share. An
// empty field is not judged: a trap-sandbox from before this check writes none, and a router
// given none (Config) neither writes nor judges it.
type Settings struct {
	// Password is PasswordTag(SANDBOX_PASSWORD).
	Password string `json:"password,omitempty"`
	// APIToken is APITokenTag(SANDBOX_API_TOKEN).
	APIToken string `json:"apiToken,omitempty"`
	// Version names the trap-sandbox and the client it serves, as `--version` does.
	Version string `json:"version,omitempty"`
	// AIModel is AIModelTag(SANDBOX_AI_MODEL): the model the computers' agent asks, which is
	// no secret.
	AIModel string `json:"aiModel,omitempty"`
	// PasswordProofs is --password-proofs, "v1,v2" or "v2": the password's proofs the replica
	// gives, which is no secret.
	PasswordProofs string `json:"passwordProofs,omitempty"`
}

// AIModelTag is what the heartbeat says of SANDBOX_AI_MODEL: the model, or agentOff.
func AIModelTag(model string) string {
	if model == "" {
		return agentOff
	}
	return model
}

// agentOff is the AIModel of a replica without the agent: no PROVIDER/MODEL is a bare word.
const agentOff = "off"

// unsetTag is the tag of a secret that is not set: a replica without SANDBOX_PASSWORD differs
// from one with it.
const unsetTag = "none"

// tagBytes is the size of a secretTag's hash (slowhash.Sum, paid twice at a replica's start;
// each guess of someone who read a heartbeat costs as much).
const tagBytes = 16

// PasswordTag is what the heartbeat says of SANDBOX_PASSWORD.
func PasswordTag(password string) string { return secretTag("SANDBOX_PASSWORD", password) }

// APITokenTag is what the heartbeat says of SANDBOX_API_TOKEN.
func APITokenTag(token string) string { return secretTag("SANDBOX_API_TOKEN", token) }

// secretTag is a slow hash of the secret named name, so that a client reading the heartbeats
// can compare two replicas' but cannot cheaply guess a weak one offline (a fast hash of a
// password lets it try billions a second). The salt is fixed, for replicas to compare their
// tags, and names the purpose and the setting, so that a tag matches no other use of the
// secret, nor the other setting's tag of the same value. Unset: unsetTag.
func secretTag(name, secret string) string {
	if secret == "" {
		return unsetTag
	}
	return base64.RawStdEncoding.EncodeToString(slowhash.Sum(secret, "trap-sandbox replica settings check: "+name, tagBytes))
}

// settingCheck is one of the Settings, as it is judged and reported.
type settingCheck struct {
	// label is the setting's label value on trapos_gateway_replica_settings_differ.
	label string
	of    func(Settings) string
	// report logs that replica other's value (theirs) differs from this one's (mine).
	report func(log *slog.Logger, other, mine, theirs string)
}

// settingChecks are the Settings judged, in the order they are logged.
var settingChecks = []settingCheck{
	{label: "password", of: func(s Settings) string { return s.Password }, report: func(log *slog.Logger, other, mine, theirs string) {
		log.Error("another replica's SANDBOX_PASSWORD differs from this one's: a computer's hello is accepted on one and refused (unauthorized) on the other; give every replica the same SANDBOX_PASSWORD (docs/scale-out.md)",
			"other", other, "set", mine != unsetTag, "otherSet", theirs != unsetTag)
	}},
	{label: "api_token", of: func(s Settings) string { return s.APIToken }, report: func(log *slog.Logger, other, mine, theirs string) {
		log.Error("another replica's SANDBOX_API_TOKEN differs from this one's: a host API client (the CLI, MCP, a /metrics scrape) is let in by one and refused by the other; give every replica the same SANDBOX_API_TOKEN (docs/scale-out.md)",
			"other", other, "set", mine != unsetTag, "otherSet", theirs != unsetTag)
	}},
	{label: "version", of: func(s Settings) string { return s.Version }, report: func(log *slog.Logger, other, mine, theirs string) {
		// A WARN: a rolling upgrade passes through this state.
		log.Warn("another replica runs another version: upgrade every replica together (docs/scale-out.md)",
			"other", other, "otherVersion", theirs, "version", mine)
	}},
	{label: "ai_model", of: func(s Settings) string { return s.AIModel }, report: func(log *slog.Logger, other, mine, theirs string) {
		// A WARN, as for the version: a change of model is rolled out replica by replica.
		log.Warn("another replica's SANDBOX_AI_MODEL differs from this one's: a computer's ai asks one model or another, or finds the agent off (ai_disabled), by the replica it reached; give every replica the same SANDBOX_AI_MODEL (docs/scale-out.md)",
			"other", other, "otherAIModel", theirs, "aiModel", mine)
	}},
	{label: "password_proofs", of: func(s Settings) string { return s.PasswordProofs }, report: func(log *slog.Logger, other, mine, theirs string) {
		// A WARN: switching the fast proof off is rolled out replica by replica.
		log.Warn("another replica's --password-proofs differs from this one's: a computer older than client 0.5.34 gets its proof of the gateway from one and is refused it by the other, by the replica it reached; give every replica the same --password-proofs (docs/scale-out.md)",
			"other", other, "otherPasswordProofs", theirs, "passwordProofs", mine)
	}},
}

// differs reports whether two values of a setting disagree; an empty one is not judged.
func differs(mine, theirs string) bool { return mine != "" && theirs != "" && mine != theirs }

// loggedSetting is one setting of one other replica, as settingsLogged keys it.
type loggedSetting struct{ replica, setting string }

// judgeSettings takes in the Settings of replica other's heartbeat (the watcher's goroutine)
// and logs each that differs from this replica's, unless it was logged with that value already.
func (r *Router) judgeSettings(other string, theirs Settings) {
	type finding struct {
		check        settingCheck
		mine, theirs string
	}
	var found []finding
	r.mu.Lock()
	r.settingsOf[other] = theirs
	for _, c := range settingChecks {
		k := loggedSetting{replica: other, setting: c.label}
		mine, their := c.of(r.cfg.Settings), c.of(theirs)
		if !differs(mine, their) {
			delete(r.settingsLogged, k) // agreed (or not judged): a difference later is news
			continue
		}
		if r.settingsLogged[k] == their {
			continue
		}
		r.settingsLogged[k] = their
		found = append(found, finding{check: c, mine: mine, theirs: their})
	}
	r.mu.Unlock()
	for _, f := range found {
		f.check.report(r.log, other, f.mine, f.theirs)
	}
}

// replicasDiffering counts the live replicas whose last heartbeat's setting c differs from
// this replica's (metrics).
func (r *Router) replicasDiffering(c settingCheck) int {
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for name, theirs := range r.settingsOf {
		if r.aliveLocked(name, now) && differs(c.of(r.cfg.Settings), c.of(theirs)) {
			n++
		}
	}
	return n
}
