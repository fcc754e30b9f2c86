package cluster

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/testkit"
)

// The log lines of a difference, as a replica named %s logs them of another named %s.
const (
	passwordDiffers = `level=ERROR msg="another replica's SANDBOX_PASSWORD differs from this one's: a computer's hello is accepted on one and refused (unauthorized) on the other; give every replica the same SANDBOX_PASSWORD (docs/scale-out.md)" replica=%s component=cluster other=%s`
	apiTokenDiffers = `level=ERROR msg="another replica's SANDBOX_API_TOKEN differs from this one's: a host API client (the CLI, MCP, a /metrics scrape) is let in by one and refused by the other; give every replica the same SANDBOX_API_TOKEN (docs/scale-out.md)" replica=%s component=cluster other=%s`
	versionDiffers  = `level=WARN msg="another replica runs another version: upgrade every replica together (docs/scale-out.md)" replica=%s component=cluster other=%s`
	proofsDiffer    = `level=WARN msg="another replica's --password-proofs differs from this one's: a computer older than client 0.5.34 gets its proof of the gateway from one and is refused it by the other, by the replica it reached; give every replica the same --password-proofs (docs/scale-out.md)" replica=%s component=cluster other=%s`
	aiModelDiffers  = `level=WARN msg="another replica's SANDBOX_AI_MODEL differs from this one's: a computer's ai asks one model or another, or finds the agent off (ai_disabled), by the replica it reached; give every replica the same SANDBOX_AI_MODEL (docs/scale-out.md)" replica=%s component=cluster other=%s`
)

// differLine is the prefix of every line of a difference in settings.
const differLine = "differs from this one's"

// settingsSeen is what r has taken in of replica other's settings, and whether it has.
func (r *Router) settingsSeen(other string) (Settings, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.settingsOf[other]
	return s, ok
}

// waitHeartbeats waits until r has taken in n more heartbeats of replica other: each one
// arriving moves lastSeen (by the replicas' clock, real time plus an offset).
func waitHeartbeats(t *testing.T, r *Router, other string, n int) {
	t.Helper()
	lastSeen := func() time.Time {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.lastSeen[other]
	}
	last, seen := lastSeen(), 0
	require.Eventually(t, func() bool {
		if now := lastSeen(); !now.Equal(last) {
			last = now
			seen++
		}
		return seen >= n
	}, waitLimit, testkit.Poll, "%s to take in %d heartbeats of %s", r.cfg.Replica, n, other)
}

// differGauge is trapos_gateway_replica_settings_differ{setting} gathered from reg.
func differGauge(t *testing.T, reg *prometheus.Registry, setting string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != "trapos_gateway_replica_settings_differ" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "setting" && l.GetValue() == setting {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no trapos_gateway_replica_settings_differ{setting=%q}", setting)
	return 0
}

// settingsFor are the Settings of a replica with password and API token, of version.
func settingsFor(password, apiToken, version string) Settings {
	return Settings{Password: PasswordTag(password), APIToken: APITokenTag(apiToken), Version: version}
}

func TestReplicasWithTheSameSettingsLogNoDifference(t *testing.T) {
	tc := newTestCluster(t)
	same := settingsFor("correct horse", "", "trap-sandbox v1 (serves trapos-sandbox 0.5.4)")
	regA := prometheus.NewRegistry()
	a := tc.startReplicaSettings("a", same, regA)
	b := tc.startReplicaSettings("b", same, nil)

	waitHeartbeats(t, a.router, "b", 3)
	waitHeartbeats(t, b.router, "a", 3)
	seen, ok := a.router.settingsSeen("b")
	require.True(t, ok)
	assert.Equal(t, same, seen, "b's heartbeat says its settings")
	assert.NotContains(t, tc.logs.String(), differLine)
	assert.NotContains(t, tc.logs.String(), "another version")
	for _, setting := range []string{"password", "api_token", "version", "ai_model", "password_proofs"} {
		assert.Zero(t, differGauge(t, regA, setting), setting)
	}
}

// A replica started with another SANDBOX_PASSWORD refused the hellos the others accepted, and
// nothing said why: computers behind a load balancer flickered between connected and
// unauthorized. Now each replica logs each other one whose password differs, once, and counts
// them; the password itself is never on the bus or in a log.
func TestAReplicaWithAnotherPasswordIsLoggedOnceAndCounted(t *testing.T) {
	tc := newTestCluster(t)
	const version = "trap-sandbox v1 (serves trapos-sandbox 0.5.4)"
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	a := tc.startReplicaSettings("a", settingsFor("hunter2", "api-secret", version), regA)
	b := tc.startReplicaSettings("b", settingsFor("hunter3", "api-secret", version), regB)
	c := tc.startReplicaSettings("c", settingsFor("", "api-secret", version), nil) // no password

	for _, pair := range [][2]string{{"a", "b"}, {"a", "c"}, {"b", "a"}, {"b", "c"}, {"c", "a"}, {"c", "b"}} {
		require.Eventually(t, func() bool { return strings.Contains(tc.logs.String(), fmt.Sprintf(passwordDiffers, pair[0], pair[1])) },
			waitLimit, testkit.Poll, "%s to log that %s's password differs", pair[0], pair[1])
	}
	// Logged once, not at each heartbeat.
	for _, r := range []*replica{a, b, c} {
		for _, other := range []string{"a", "b", "c"} {
			if other != r.name {
				waitHeartbeats(t, r.router, other, 3)
			}
		}
	}
	logs := tc.logs.String()
	for _, pair := range [][2]string{{"a", "b"}, {"a", "c"}, {"b", "a"}, {"b", "c"}, {"c", "a"}, {"c", "b"}} {
		assert.Equal(t, 1, strings.Count(logs, fmt.Sprintf(passwordDiffers, pair[0], pair[1])), "%s logs %s once", pair[0], pair[1])
	}
	assert.Contains(t, logs, fmt.Sprintf(passwordDiffers, "a", "b")+" set=true otherSet=true\n")
	assert.Contains(t, logs, fmt.Sprintf(passwordDiffers, "a", "c")+" set=true otherSet=false\n")
	assert.Contains(t, logs, fmt.Sprintf(passwordDiffers, "c", "a")+" set=false otherSet=true\n")
	assert.NotContains(t, logs, "SANDBOX_API_TOKEN differs")
	assert.NotContains(t, logs, "another version")

	assert.Equal(t, 2.0, differGauge(t, regA, "password"), "b and c differ from a")
	assert.Equal(t, 2.0, differGauge(t, regB, "password"))
	assert.Zero(t, differGauge(t, regA, "api_token"))
	assert.Zero(t, differGauge(t, regA, "version"))

	// Neither a secret nor its tag is logged; the heartbeats carry the tag only.
	for _, secret := range []string{"hunter2", "hunter3", "api-secret", PasswordTag("hunter2"), PasswordTag("hunter3"), APITokenTag("api-secret")} {
		assert.NotContains(t, logs, secret)
	}
	beat, err := a.router.replicas.Get(t.Context(), escapeToken("a"))
	require.NoError(t, err)
	assert.NotContains(t, string(beat.Value()), "hunter2")
	assert.NotContains(t, string(beat.Value()), "api-secret")
	assert.Contains(t, string(beat.Value()), `"password":"`+PasswordTag("hunter2")+`"`)

	// Once c stops, a counts only b.
	c.stop()
	require.Eventually(t, func() bool { return differGauge(t, regA, "password") == 1 }, waitLimit, testkit.Poll,
		"a to stop counting c, which stopped")
}

// A replica started with another SANDBOX_AI_MODEL, or without the agent, answered a computer's
// ai with another model or ai_disabled, by the replica the computer reached, and nothing said
// why. Now each replica logs each other one whose model differs (a WARN: a change of model is
// rolled out replica by replica), once, and counts them.
func TestAReplicaWithAnotherAIModelIsLoggedOnceAndCounted(t *testing.T) {
	tc := newTestCluster(t)
	const version = "trap-sandbox v1 (serves trapos-sandbox 0.5.4)"
	withModel := func(model string) Settings {
		s := settingsFor("hunter2", "", version)
		s.AIModel = AIModelTag(model)
		return s
	}
	regA := prometheus.NewRegistry()
	a := tc.startReplicaSettings("a", withModel("local/qwen2.5-coder"), regA)
	b := tc.startReplicaSettings("b", withModel(""), nil) // the agent off
	c := tc.startReplicaSettings("c", withModel("local/qwen2.5-coder"), nil)

	require.Eventually(t, func() bool { return strings.Contains(tc.logs.String(), fmt.Sprintf(aiModelDiffers, "a", "b")) },
		waitLimit, testkit.Poll, "a to log that b's model differs")
	waitHeartbeats(t, a.router, "b", 3)
	waitHeartbeats(t, a.router, "c", 3)
	waitHeartbeats(t, b.router, "a", 1)
	waitHeartbeats(t, c.router, "b", 1)
	logs := tc.logs.String()
	assert.Equal(t, 1, strings.Count(logs, fmt.Sprintf(aiModelDiffers, "a", "b")), "logged once, not at each heartbeat")
	assert.Contains(t, logs, fmt.Sprintf(aiModelDiffers, "a", "b")+` otherAIModel=off aiModel=local/qwen2.5-coder`+"\n")
	assert.Contains(t, logs, fmt.Sprintf(aiModelDiffers, "b", "a")+` otherAIModel=local/qwen2.5-coder aiModel=off`+"\n")
	assert.Contains(t, logs, fmt.Sprintf(aiModelDiffers, "c", "b"))
	assert.NotContains(t, logs, fmt.Sprintf(aiModelDiffers, "a", "c"), "the same model")
	assert.NotContains(t, logs, "SANDBOX_PASSWORD differs", "the password agrees")
	assert.Equal(t, 1.0, differGauge(t, regA, "ai_model"), "b differs from a, c does not")
	assert.Zero(t, differGauge(t, regA, "password"))
}

// A replica that refuses the password's fast proof (--password-proofs v2) beside one that gives
// it refused a 0.5.33 computer by the replica it reached. Each replica logs the other (a WARN:
// switching it off is rolled out replica by replica), once, and counts it.
func TestAReplicaWithOtherPasswordProofsIsLoggedOnceAndCounted(t *testing.T) {
	tc := newTestCluster(t)
	const version = "trap-sandbox v1 (serves trapos-sandbox 0.5.4)"
	withProofs := func(proofs string) Settings {
		s := settingsFor("hunter2", "", version)
		s.PasswordProofs = proofs
		return s
	}
	regA := prometheus.NewRegistry()
	a := tc.startReplicaSettings("a", withProofs("v1,v2"), regA)
	b := tc.startReplicaSettings("b", withProofs("v2"), nil)

	require.Eventually(t, func() bool { return strings.Contains(tc.logs.String(), fmt.Sprintf(proofsDiffer, "a", "b")) },
		waitLimit, testkit.Poll, "a to log that b's proofs differ")
	waitHeartbeats(t, a.router, "b", 3)
	waitHeartbeats(t, b.router, "a", 1)
	logs := tc.logs.String()
	assert.Equal(t, 1, strings.Count(logs, fmt.Sprintf(proofsDiffer, "a", "b")), "logged once, not at each heartbeat")
	assert.Contains(t, logs, fmt.Sprintf(proofsDiffer, "a", "b")+` otherPasswordProofs=v2 passwordProofs=v1,v2`+"\n")
	assert.Contains(t, logs, fmt.Sprintf(proofsDiffer, "b", "a"))
	assert.Equal(t, 1.0, differGauge(t, regA, "password_proofs"))
}

// writeHeartbeat writes a heartbeat under name into the replicas' bucket by hand, as a replica
// of another trap-sandbox (or another configuration) would, and waits until r has taken it in.
func writeHeartbeat(t *testing.T, r *replica, name string, beat map[string]any, want Settings) {
	t.Helper()
	js, err := jetstream.New(r.nc)
	require.NoError(t, err)
	kv, err := js.KeyValue(t.Context(), ReplicasBucket)
	require.NoError(t, err)
	beat["replica"] = name
	beat["started"] = time.Now()
	b, err := json.Marshal(beat)
	require.NoError(t, err)
	_, err = kv.Put(t.Context(), escapeToken(name), b)
	require.NoError(t, err)
	require.Eventually(t, func() bool { s, ok := r.router.settingsSeen(name); return ok && s == want }, waitLimit, testkit.Poll,
		"%s to take in %s's heartbeat", r.name, name)
}

// A difference is logged once per value: again when the other replica's value changes, or
// comes back after it agreed. A heartbeat that says no settings (a trap-sandbox from before
// the check) is not judged. The watcher takes the heartbeats in one by one, logging as it goes:
// once it has taken one in, what it logged of the one before is in the log.
func TestADifferenceIsLoggedAgainWhenTheValueChanges(t *testing.T) {
	tc := newTestCluster(t)
	const version = "trap-sandbox v2 (serves trapos-sandbox 0.5.5)"
	mine := settingsFor("hunter2", "", version)
	reg := prometheus.NewRegistry()
	a := tc.startReplicaSettings("a", mine, reg)
	count := func(line string) int { return strings.Count(tc.logs.String(), fmt.Sprintf(line, "a", "x")) }
	counts := func() [3]int { return [3]int{count(passwordDiffers), count(apiTokenDiffers), count(versionDiffers)} }
	beat := func(s Settings) map[string]any { return map[string]any{"closesRemoved": true, "settings": s} }

	// Of an older trap-sandbox: not judged.
	writeHeartbeat(t, a, "x", map[string]any{"closesRemoved": true}, Settings{})
	assert.Zero(t, differGauge(t, reg, "password"))
	assert.Zero(t, differGauge(t, reg, "version"))

	other := Settings{Password: "tagOne", APIToken: APITokenTag(""), Version: "trap-sandbox v1 (serves trapos-sandbox 0.5.4)"}
	writeHeartbeat(t, a, "x", beat(other), other)
	require.Eventually(t, func() bool { return counts() == [3]int{1, 0, 1} }, waitLimit, testkit.Poll, "a to log x's password and version")
	assert.Contains(t, tc.logs.String(), fmt.Sprintf(versionDiffers, "a", "x")+
		` otherVersion="trap-sandbox v1 (serves trapos-sandbox 0.5.4)" version="trap-sandbox v2 (serves trapos-sandbox 0.5.5)"`+"\n")
	assert.Equal(t, 1.0, differGauge(t, reg, "password"))
	assert.Equal(t, 1.0, differGauge(t, reg, "version"))
	assert.Zero(t, differGauge(t, reg, "api_token"))

	// The same again (at each heartbeat), then another password and a token where a has none.
	writeHeartbeat(t, a, "x", beat(other), other)
	writeHeartbeat(t, a, "x", beat(other), other)
	other.Password, other.APIToken = "tagTwo", APITokenTag("api-secret")
	writeHeartbeat(t, a, "x", beat(other), other)
	require.Eventually(t, func() bool { return counts() == [3]int{2, 1, 1} }, waitLimit, testkit.Poll,
		"a to log x's new password and its token, once each, and the same settings again not at all")
	assert.Contains(t, tc.logs.String(), fmt.Sprintf(apiTokenDiffers, "a", "x")+" set=false otherSet=true\n")
	assert.Equal(t, 1.0, differGauge(t, reg, "api_token"))

	// Upgraded and fixed: agrees, and the gauges say so.
	writeHeartbeat(t, a, "x", beat(mine), mine)
	for _, setting := range []string{"password", "api_token", "version"} {
		assert.Zero(t, differGauge(t, reg, setting), setting)
	}
	// The first password again: news once more, since it agreed meanwhile.
	other = mine
	other.Password = "tagOne"
	writeHeartbeat(t, a, "x", beat(other), other)
	writeHeartbeat(t, a, "x", beat(other), other)
	writeHeartbeat(t, a, "x", beat(mine), mine) // taken in: the two before it are logged
	assert.Equal(t, [3]int{3, 1, 1}, counts())

	// Downgraded to a trap-sandbox from before the check, with another password: not judged.
	writeHeartbeat(t, a, "x", beat(other), other)
	writeHeartbeat(t, a, "x", map[string]any{"closesRemoved": true}, Settings{})
	writeHeartbeat(t, a, "x", map[string]any{"closesRemoved": true, "settings": Settings{APIToken: mine.APIToken}}, Settings{APIToken: mine.APIToken})
	assert.Equal(t, [3]int{4, 1, 1}, counts(), "the heartbeat without settings logged nothing")
	assert.Zero(t, differGauge(t, reg, "password"))
}

func TestSecretTag(t *testing.T) {
	assert.Equal(t, "none", PasswordTag(""))
	assert.Equal(t, "none", APITokenTag(""))
	tag := PasswordTag("hunter2")
	assert.Equal(t, tag, PasswordTag("hunter2"), "every replica computes the same tag")
	assert.Len(t, tag, 22, "16 bytes, base64 without padding")
	assert.NotEqual(t, tag, PasswordTag("hunter3"))
	assert.NotEqual(t, tag, APITokenTag("hunter2"), "the salt names the setting")
	assert.NotContains(t, tag, "hunter2")

	// The heartbeat, which every NATS client reads, tells nothing of the password's slow proof
	// key, which the gateway gives only to a computer that said hello with the password: another
	// salt and size, so neither the tag nor any part of it is the key or its start.
	raw, err := base64.RawStdEncoding.DecodeString(tag)
	require.NoError(t, err)
	key := gateway.PasswordProofKeyV2("hunter2")
	assert.False(t, bytes.Contains(key, raw[:8]), "the tag shares bytes with the proof key")
	assert.NotContains(t, tag, base64.RawStdEncoding.EncodeToString(key[:len(raw)]))
	assert.NotContains(t, tag, hex.EncodeToString(key[:8]))
}

// BenchmarkSecretTag is the cost of one tag, paid twice at a replica's start (settings.go).
func BenchmarkSecretTag(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		PasswordTag("correct horse battery staple")
	}
}
