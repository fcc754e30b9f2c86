package agent

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// TestAnAccountKeepsAtMostMaxDirsDirectories: with the shared password a player can say hello
// under ever new traposIds, each asking once, and every one left a directory under --ai-dir
// and its conversation in opencode's storage, for good. Past --ai-max-dirs a new computer's
// directory takes the place of the account's least recently used one (gone for a turn's time
// and --ai-idle-after), whose conversations go with it; a computer whose directory went starts
// afresh, with a new pass. While every directory is too recent to go, a new computer is busy.
func TestAnAccountKeepsAtMostMaxDirsDirectories(t *testing.T) {
	f := startFakeAgent(t)
	fc := clock.NewFake(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	var logs testkit.SyncBuffer
	m, passes := f.idleModule(t, fc, 0, &logs, func(cfg *Config) { cfg.MaxDirs = 2 })
	computer := func(id string) protocol.Requester { return protocol.Requester{AccountID: "local", TraposID: id} }
	dirOf := func(id string) string { return ComputerDir(f.root, "local", id) }
	exists := func(id string) bool { _, err := os.Stat(dirOf(id)); return err == nil }

	require.Equal(t, ReasonStop, ask(t, m, computer("1:a"), "first"))
	oldPass := readPass(dirOf("1:a"))
	tick(t, fc, time.Minute)
	require.Equal(t, ReasonStop, ask(t, m, computer("2:b"), "hello"))
	tick(t, fc, 14*time.Minute) // both idle: their state goes, their directories stay

	require.Equal(t, ReasonStop, ask(t, m, computer("3:c"), "hi"))
	assert.False(t, exists("1:a"), "the least recently used directory made room")
	assert.True(t, exists("2:b"))
	assert.True(t, exists("3:c"))
	assert.ElementsMatch(t, []string{"trap-sandbox 2:b main: hello", "trap-sandbox 3:c main: hi"}, f.conversations(),
		"its conversation went with it")
	assert.Contains(t, logs.String(), `level=INFO msg="agent: the least recently used computer's directory was removed, with its conversations, to make room for a new computer's (--ai-max-dirs)" account=local directory=1_3aa lastUsed=2026-12-04T12:00:00Z conversations=1 maxDirs=2`)

	require.Equal(t, ReasonStop, ask(t, m, computer("1:a"), "again"))
	assert.False(t, exists("2:b"), "1:a's new directory took 2:b's place, used before 3:c")
	newPass := readPass(dirOf("1:a"))
	assert.NotEqual(t, oldPass, newPass, "a directory that went takes its pass with it")
	_, granted := passes.Caller(newPass)
	assert.True(t, granted)
	assert.ElementsMatch(t, []string{"trap-sandbox 3:c main: hi", "trap-sandbox 1:a main: again"}, f.conversations(),
		"1:a starts afresh")

	// 1:a and 3:c have state (used just now): a fourth computer waits.
	_, err := m.handleAsk(t.Context(), computer("4:d"), payload(t, map[string]any{"prompt": "me too"}))
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, protocol.CodeBusy, pe.Code)
	assert.Equal(t, "the agent has too many computers: ask again later", pe.Message)
	assert.False(t, exists("4:d"), "nothing written for it")
	assert.True(t, exists("1:a") && exists("3:c"))
	assert.InDelta(t, 1, testutil.ToFloat64(m.metrics.refusals.WithLabelValues(refusedDirs)), 0)
	assert.Contains(t, logs.String(), `msg="agent: a new computer's question was refused: its account has as many computers' directories as --ai-max-dirs, each used within --ai-idle-after and a turn's time" maxDirs=2 account=local traposId=4:d`)
}

// An opencode that cannot delete the least recently used directory's conversations leaves
// the directory as it is (never a directory gone with its conversations still stored), and
// the new computer's question is opencode's failure, as any other.
func TestADirectoryGoesOnlyOnceItsConversationsAre(t *testing.T) {
	f := startFakeAgent(t)
	fc := clock.NewFake(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	var logs testkit.SyncBuffer
	m, _ := f.idleModule(t, fc, 0, &logs, func(cfg *Config) { cfg.MaxDirs = 1 })
	old := protocol.Requester{AccountID: "local", TraposID: "1:a"}
	require.Equal(t, ReasonStop, ask(t, m, old, "first"))
	tick(t, fc, 15*time.Minute)

	f.oc.FailWith(http.StatusBadGateway)
	_, err := m.handleAsk(t.Context(), protocol.Requester{AccountID: "local", TraposID: "2:b"}, payload(t, map[string]any{"prompt": "hi"}))
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, CodeAIUnavailable, pe.Code)
	_, statErr := os.Stat(ComputerDir(f.root, "local", "1:a"))
	assert.NoError(t, statErr, "kept, with its conversations")
	_, statErr = os.Stat(ComputerDir(f.root, "local", "2:b"))
	assert.Error(t, statErr, "nothing written for the new one")
	assert.Contains(t, logs.String(), `level=WARN msg="agent: cannot delete the conversations of the least recently used computer's directory on opencode, to make room for a new computer's (--ai-max-dirs)" traposId=2:b account=local`)

	f.oc.FailWith(0)
	require.Equal(t, ReasonStop, ask(t, m, protocol.Requester{AccountID: "local", TraposID: "2:b"}, "hi"))
	assert.Equal(t, []string{"trap-sandbox 2:b main: hi"}, f.conversations())
}
