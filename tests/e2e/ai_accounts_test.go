package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"

	"tests/internal/harness"
)

// TestAIActsAsTheAskingComputersAccount: alice's computer, on a credential of its own, asks
// the agent; the agent's tools act as alice's account limited to that computer. Its write
// lands on alice's 7:desk, not on local's 7:desk (the same traposId in another account); a
// call naming alice's other computer is refused and the turn goes on. The computer's pass,
// read from its directory on the host, reaches that one computer through /mcp and nothing
// else.
func TestAIActsAsTheAskingComputersAccount(t *testing.T) {
	ctx := testContext(t)
	dataDir := t.TempDir()
	addAccount := func(args ...string) string { // its last line: where the CLI prints a secret
		return lastLineOf(gatewayCLI(ctx, t, append(args, "--data-dir", dataDir)...))
	}
	addAccount("accounts", "add", "alice")
	deskCred, vaultCred := addAccount("credentials", "add", "alice"), addAccount("credentials", "add", "alice")
	require.True(t, strings.HasPrefix(deskCred, "tsc_"), deskCred)

	w := newAIWorld(t)
	g := w.gateway(t, harness.Options{Args: []string{"--data-dir", dataDir}})
	start := func(password string, id int, label, overlay string, files map[string]string) *fakecrafttest.Computer {
		opts := computerOptions(t, g, password, "/idle.lua")
		opts.ID, opts.Label, opts.Overlay = id, label, overlay
		opts.Settings["sandbox.allow_files"] = "write"
		opts.Files = map[string]string{"/idle.lua": idleProgram}
		for k, v := range files {
			opts.Files[k] = v
		}
		c := fakecrafttest.StartWithin(t, opts, testTimeout)
		c.WaitFor(ctx, markerIdle)
		return c
	}
	localDesk := t.TempDir()
	start(sandboxPassword, aiDeskID, aiDeskLabel, localDesk, nil)                          // local's 7:desk
	start(vaultCred, 9, "vault", t.TempDir(), map[string]string{"/secret.txt": "alice's"}) // alice's 9:vault
	aliceDesk := func(overlay string, input computer.Input, args ...string) (bool, string) {
		opts := desk(t, g, overlay, input, "ai", args...)
		opts.Settings["sandbox.password"] = deskCred
		return runCommand(ctx, t, opts)
	}

	t.Run("alice's computer gets its tool calls on itself", func(t *testing.T) {
		overlay := t.TempDir()
		ok, out := aliceDesk(overlay, computer.LinesOf("y"), "door")
		assert.True(t, ok, out)
		assert.Contains(t, out, "Wrote the door program.")
		data, err := os.ReadFile(filepath.Join(overlay, "door.lua"))
		require.NoError(t, err, "written on alice's 7:desk; transcript:\n%s", out)
		assert.Equal(t, "redstone.setOutput('left', true)", string(data))
		_, err = os.Stat(filepath.Join(localDesk, "door.lua"))
		assert.True(t, os.IsNotExist(err), "local's 7:desk untouched")
	})

	t.Run("a call naming alice's other computer is refused and the turn goes on", func(t *testing.T) {
		_, out := aliceDesk(t.TempDir(), nil, "vault")
		assert.Contains(t, strings.Join(lines(out), " "), "* read_file /secret.txt failed: Refused: you may act only on computer "+aiDesk)
		assert.Contains(t, strings.Join(lines(out), " "), "vault error:", "the model read the refusal and answered")
	})

	t.Run("the computer's pass reaches that computer alone", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(w.dir, "computers", "alice", "7_3adesk", "opencode.json"))
		require.NoError(t, err)
		var cfg struct {
			MCP map[string]struct {
				Headers map[string]string `json:"headers"`
			} `json:"mcp"`
		}
		require.NoError(t, json.Unmarshal(data, &cfg))
		pass, ok := strings.CutPrefix(cfg.MCP["trap-sandbox"].Headers["Authorization"], "Bearer ")
		require.True(t, ok && strings.HasPrefix(pass, "tsp_"), "the directory's MCP entry carries the computer's pass")
		assert.NotContains(t, g.Log(), pass, "never logged")

		start(deskCred, aiDeskID, aiDeskLabel, t.TempDir(), nil) // alice's 7:desk, connected again
		s := harness.ConnectMCP(ctx, t, g, pass)
		var list struct {
			Computers []struct {
				AccountID string `json:"accountId"`
				TraposID  string `json:"traposId"`
			} `json:"computers"`
		}
		harness.ToolOK(t, harness.CallTool(ctx, t, s, "list_computers", map[string]any{}), "", &list)
		require.Len(t, list.Computers, 1, "%+v", list)
		assert.Equal(t, "alice", list.Computers[0].AccountID)
		assert.Equal(t, aiDesk, list.Computers[0].TraposID)
		res := harness.CallTool(ctx, t, s, "read_file", map[string]any{"traposId": "9:vault", "path": "/secret.txt"})
		assert.True(t, res.IsError)
		assert.Contains(t, strings.Join(harness.Texts(res), " "), "not_connected")
	})
	assert.NotContains(t, g.Log(), "tsp_", "no pass in the gateway's log")
}
