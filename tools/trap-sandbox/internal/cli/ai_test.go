package cli

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultMCPURLIsTheListenPort(t *testing.T) {
	assert.Equal(t, "http://127.0.0.1:4444/mcp", defaultMCPURL(&net.TCPAddr{IP: net.IPv6unspecified, Port: 4444}))
	assert.Equal(t, "http://127.0.0.1:4444/mcp", defaultMCPURL(&net.TCPAddr{Port: 4444}))
	assert.Equal(t, "http://10.0.0.5:9/mcp", defaultMCPURL(&net.TCPAddr{IP: net.ParseIP("10.0.0.5"), Port: 9}))
	assert.Equal(t, "http://[::1]:9/mcp", defaultMCPURL(&net.TCPAddr{IP: net.IPv6loopback, Port: 9}))
}

func TestAgentNeedsTheMCPModule(t *testing.T) {
	c := &ServeCmd{MCP: false, AIFlags: AIFlags{AIModel: "p/m", AITurnDeadline: 1}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	_, err = c.agentModule(nil, nil, l, nil, nil, nil)
	assert.ErrorContains(t, err, "--ai-model (SANDBOX_AI_MODEL) needs the MCP module")
}

// TestAnAgentDirectoryThatCannotBeMadeNamesItsFlag: --ai-dir naming a file (or a place the
// user cannot write) stopped the start with "create the agent's directory: mkdir …", naming
// no setting.
func TestAnAgentDirectoryThatCannotBeMadeNamesItsFlag(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	c := &ServeCmd{MCP: true, AIFlags: AIFlags{AIModel: "p/m", AITurnDeadline: time.Minute, AIMaxTurns: 1, AIIdleAfter: time.Minute,
		AIMaxComputers: 1, AIMaxDirs: 1, AIDir: filepath.Join(file, "agent")}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	_, err = c.agentModule(nil, nil, l, nil, nil, nil)
	assert.EqualError(t, err, "--ai-dir (SANDBOX_AI_DIR): cannot make the agent's directory "+filepath.Join(file, "agent")+" (not a directory): give another")
}

// TestTheMostTurnsAtOnceMustBePositive: --ai-max-turns 0 would refuse every question.
func TestTheMostTurnsAtOnceMustBePositive(t *testing.T) {
	c := &ServeCmd{MCP: true, AIFlags: AIFlags{AIModel: "p/m", AITurnDeadline: time.Minute, AIDir: t.TempDir()}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	_, err = c.agentModule(nil, nil, l, nil, nil, nil)
	assert.EqualError(t, err, "--ai-max-turns (SANDBOX_AI_MAX_TURNS) must be positive, got 0")
}

// TestTheAgentsBoundsMustBePositive: --ai-idle-after 0 would release a computer's state between
// its question and its turn's end, --ai-max-computers 0 refuse every question, --ai-max-dirs 0
// every new computer's.
func TestTheAgentsBoundsMustBePositive(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	for flags, want := range map[AIFlags]string{
		{AIMaxTurns: 1, AIIdleAfter: 0, AIMaxComputers: 1, AIMaxDirs: 1}:           "--ai-idle-after (SANDBOX_AI_IDLE_AFTER) must be positive, got 0s",
		{AIMaxTurns: 1, AIIdleAfter: time.Minute, AIMaxComputers: 0, AIMaxDirs: 1}: "--ai-max-computers (SANDBOX_AI_MAX_COMPUTERS) must be positive, got 0",
		{AIMaxTurns: 1, AIIdleAfter: time.Minute, AIMaxComputers: 1, AIMaxDirs: 0}: "--ai-max-dirs (SANDBOX_AI_MAX_DIRS) must be positive, got 0",
	} {
		flags.AIModel, flags.AITurnDeadline, flags.AIDir = "p/m", time.Minute, t.TempDir()
		c := &ServeCmd{MCP: true, AIFlags: flags}
		_, err = c.agentModule(nil, nil, l, nil, nil, nil)
		assert.EqualError(t, err, want)
	}
}
