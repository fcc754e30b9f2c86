package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// loudProgram prints more than a run's output keeps (16 KiB).
const loudProgram = `for i = 1, 3000 do print("line " .. i) end`

// TestMCPAgentWorksOnBootedComputers: the MCP Go SDK's client, over /mcp and over the stdio
// bridge, works through the real gateway on booted fakecraft computers running the real
// daemon: one whose owner allowed files and code, one left at the defaults (a basic one).
func TestMCPAgentWorksOnBootedComputers(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)

	open := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	open.ID, open.Label = 7, "north"
	open.Files = map[string]string{"/e2e.lua": idleProgram, "/loud.lua": loudProgram}
	open.Settings["sandbox.allow_files"] = "write"
	open.Settings["sandbox.allow_exec"] = "true"
	fakecrafttest.StartWithin(t, open, testTimeout).WaitFor(ctx, markerIdle)

	closed := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	closed.ID, closed.Label, closed.Basic = 8, "south", true
	closed.Files = map[string]string{"/e2e.lua": idleProgram}
	fakecrafttest.StartWithin(t, closed, testTimeout).WaitFor(ctx, markerIdle)

	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			var s *sdk.ClientSession
			if transport == "http" {
				s = harness.ConnectMCP(ctx, t, g, "")
			} else {
				s = harness.ConnectMCPStdio(ctx, t, gatewayBin, g)
			}
			tools, err := s.ListTools(ctx, nil)
			require.NoError(t, err)
			assert.Len(t, tools.Tools, 17, "the twelve of the vocabulary and the five of the screen")

			var list struct {
				Computers []struct {
					TraposID string `json:"traposId"`
				} `json:"computers"`
			}
			harness.ToolOK(t, harness.CallTool(ctx, t, s, "list_computers", nil), "", &list)
			var ids []string
			for _, c := range list.Computers {
				ids = append(ids, c.TraposID)
			}
			assert.ElementsMatch(t, []string{"7:north", "8:south"}, ids)

			var info map[string]any
			harness.ToolOK(t, harness.CallTool(ctx, t, s, "computer_info", map[string]any{"traposId": "7:north"}), "7:north", &info)
			assert.Equal(t, "north", info["label"])
			assert.Equal(t, float64(7), info["id"])
			assert.Equal(t, "a computer, its screen 51x19 characters", info["kind"])
			// A basic computer says what it lacks: an agent planned paint, or a menu in red.
			harness.ToolOK(t, harness.CallTool(ctx, t, s, "computer_info", map[string]any{"traposId": "8:south"}), "8:south", &info)
			assert.Equal(t, "a basic computer (no colour: it draws colours as greys; no mouse, paint or multishell), its screen 51x19 characters", info["kind"])

			// Every byte value, over several fs.write and fs.read chunks.
			data := make([]byte, 40_000)
			for i := range data {
				data[i] = byte(i * 7)
			}
			path := "/mcp/" + transport + ".bin"
			var wrote map[string]any
			harness.ToolOK(t, harness.CallTool(ctx, t, s, "write_file", map[string]any{"traposId": "7:north", "path": path,
				"contentBase64": base64.StdEncoding.EncodeToString(data)}), "7:north", &wrote)
			back := harness.ReadBytes(ctx, t, s, "7:north", path) // over one result: in parts
			assert.True(t, bytes.Equal(data, back), "read_file gave other bytes than write_file wrote (%d vs %d bytes)", len(back), len(data))

			var lua struct {
				Returns []any  `json:"returns"`
				Output  string `json:"output"`
				Error   string `json:"error"`
			}
			harness.ToolOK(t, harness.CallTool(ctx, t, s, "run_lua", map[string]any{"traposId": "7:north", "code": "1+1"}), "7:north", &lua)
			assert.Equal(t, []any{float64(2)}, lua.Returns, "an expression returns its value, as the lua prompt")
			harness.ToolOK(t, harness.CallTool(ctx, t, s, "run_lua", map[string]any{"traposId": "7:north",
				"code": `print("hello from " .. os.getComputerLabel()) return 3, "x"`}), "7:north", &lua)
			assert.Equal(t, []any{float64(3), "x"}, lua.Returns)
			assert.Equal(t, "hello from north\n", lua.Output)
			assert.Empty(t, lua.Error)
			harness.ToolOK(t, harness.CallTool(ctx, t, s, "run_lua", map[string]any{"traposId": "7:north", "code": `error("boom")`}), "7:north", &lua)
			assert.Contains(t, lua.Error, "boom", "a chunk that raised is served, with its error")
			// Each call is a chunk of its own, as run_lua's description says: its globals end with it.
			harness.ToolOK(t, harness.CallTool(ctx, t, s, "run_lua", map[string]any{"traposId": "7:north", "code": "kept = 5"}), "7:north", &lua)
			harness.ToolOK(t, harness.CallTool(ctx, t, s, "run_lua", map[string]any{"traposId": "7:north", "code": "return kept"}), "7:north", &lua)
			assert.Equal(t, []any{nil}, lua.Returns, "a global set by an earlier call is gone")

			var prog struct {
				Success bool   `json:"success"`
				Output  string `json:"output"`
			}
			harness.ToolOK(t, harness.CallTool(ctx, t, s, "run_program", map[string]any{"traposId": "7:north", "command": "sandbox status"}), "7:north", &prog)
			assert.True(t, prog.Success, "output: %s", prog.Output)
			assert.Contains(t, prog.Output, "files: write", "the program's own output comes back")

			// A run that printed more than its output keeps says where its output was cut: the
			// rows kept ran on from line 1438 to line 2982 unmarked, a flag aside.
			var loud struct {
				Output          string `json:"output"`
				OutputTruncated bool   `json:"outputTruncated"`
				OutputCut       string `json:"outputCut"`
			}
			harness.ToolOK(t, harness.CallTool(ctx, t, s, "run_lua", map[string]any{"traposId": "7:north", "code": loudProgram}), "7:north", &loud)
			assert.True(t, loud.OutputTruncated)
			assert.Contains(t, loud.Output, "line 1\n")
			assert.Contains(t, loud.Output, "line 3000\n", "the final screen is kept")
			assert.NotContains(t, loud.Output, "line 2000\n", "rows between are left out")
			const cut = "output was cut: it holds the first rows that scrolled off the run's screen, then its final screen; the rows printed between them are left out"
			assert.Contains(t, loud.OutputCut, cut)
			assert.Contains(t, loud.OutputCut, "write it to a file on the computer and read that with read_file")
			harness.ToolOK(t, harness.CallTool(ctx, t, s, "run_program", map[string]any{"traposId": "7:north", "command": "loud"}), "7:north", &loud)
			assert.True(t, loud.OutputTruncated)
			assert.Contains(t, loud.OutputCut, cut)
			var whole map[string]any
			harness.ToolOK(t, harness.CallTool(ctx, t, s, "run_program", map[string]any{"traposId": "7:north", "command": "sandbox status"}), "7:north", &whole)
			assert.NotContains(t, whole, "outputCut", "output kept whole is not said to be cut")

			msg := harness.ToolError(t, harness.CallTool(ctx, t, s, "read_file", map[string]any{"traposId": "8:south", "path": "/startup.lua"}), "forbidden")
			assert.Contains(t, msg, "sandbox.allow_files")
			refused := harness.CallTool(ctx, t, s, "run_lua", map[string]any{"traposId": "8:south", "code": "1"})
			msg = harness.ToolError(t, refused, "forbidden")
			assert.Contains(t, msg, "sandbox.allow_exec")
			// The line that allows it is the owner's: the gateway says so after the computer's words.
			texts := harness.Texts(refused)
			require.Len(t, texts, 3)
			assert.Contains(t, texts[2], "The computer's owner refused this with the setting named above; these are the owner's settings: only the owner changes them, in game; never change them yourself, not by typing set at its shell")

			// not_connected comes at once: well before the call's own 60 s timeout would end it.
			const pingTimeout = 60 * time.Second
			start := time.Now()
			harness.ToolError(t, harness.CallTool(ctx, t, s, "ping", map[string]any{"traposId": "9:gone", "timeoutMs": pingTimeout.Milliseconds()}), "not_connected")
			assert.Less(t, time.Since(start), pingTimeout, "not_connected comes at once, not at the call's timeout")
		})
	}
}

// TestMCPListFilesOfADirectoryTooBigForOneAnswer: a directory whose names fill more than one
// answer carries (the protocol's 128 KiB) is refused by the computer's daemon with a run's fix
// (return less, or write it to a file), which list_files cannot do; the agent is told to list
// it in parts with run_lua instead, and that code runs.
func TestMCPListFilesOfADirectoryTooBigForOneAnswer(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 7, "north"
	opts.Files = map[string]string{"/e2e.lua": idleProgram}
	// 700 names of 203 bytes: over 128 KiB, on a drive of a server's computer_space_limit
	// (they need more than CC's 1 MB).
	opts.SpaceLimit = 8 << 20
	for i := range 700 {
		opts.Files[fmt.Sprintf("/big/%s%03d", strings.Repeat("n", 200), i)] = "x"
	}
	opts.Settings["sandbox.allow_files"] = "read"
	opts.Settings["sandbox.allow_exec"] = "true"
	fakecrafttest.StartWithin(t, opts, testTimeout).WaitFor(ctx, markerIdle)
	s := harness.ConnectMCP(ctx, t, g, "")

	msg := harness.ToolError(t, harness.CallTool(ctx, t, s, "list_files", map[string]any{"traposId": "7:north", "path": "/big"}), "internal")
	assert.Contains(t, msg, "the answer to fs.list cannot be sent: Message is too large", "the computer's words stay")
	const inParts = `: /big holds more names than one answer carries, so list_files cannot list it; list it in parts with run_lua (needs the owner's sandbox.allow_exec true), e.g. local names = fs.list("/big") return #names, {table.unpack(names, 1, 200)}`
	assert.True(t, strings.HasSuffix(msg, inParts), msg)
	assert.NotContains(t, msg, "return less", "a run's fix, which list_files cannot follow")

	_, code, _ := strings.Cut(inParts, "e.g. ")
	var lua struct {
		Returns []any `json:"returns"`
	}
	harness.ToolOK(t, harness.CallTool(ctx, t, s, "run_lua", map[string]any{"traposId": "7:north", "code": code}), "7:north", &lua)
	require.Len(t, lua.Returns, 2)
	assert.Equal(t, float64(700), lua.Returns[0])
	assert.Len(t, lua.Returns[1], 200)
}

// TestMCPARunHeldUpByAnEarlierLoopSaysSo: a run that times out behind an earlier run's loop
// that never yields (which holds the whole computer until CC ends it) says that the code may
// be the earlier run's: it said only "as happens to code that never yields", of return 1. The
// gateway knows that run (its answer still owed): it is named, once, after why.
func TestMCPARunHeldUpByAnEarlierLoopSaysSo(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 7, "north"
	opts.Files = map[string]string{"/e2e.lua": idleProgram}
	opts.Settings["sandbox.allow_exec"] = "true"
	// CC ends a chunk that never yields after about 7 s: here well after both calls end.
	opts.YieldTimeout = testTimeout
	fakecrafttest.StartWithin(t, opts, testTimeout).WaitFor(ctx, markerIdle)
	s := harness.ConnectMCP(ctx, t, g, "")

	const earlier = "that code may be this run's, or an earlier run's that still holds the computer (nothing else runs there meanwhile: call again once CC has ended it)"
	msg := harness.ToolError(t, harness.CallTool(ctx, t, s, "run_lua", map[string]any{"traposId": "7:north", "code": "while true do end", "timeoutMs": 2000}), "timeout")
	assert.Contains(t, msg, "as happens to code that never yields")
	assert.Contains(t, msg, earlier, "nothing was owed before it")
	msg = harness.ToolError(t, harness.CallTool(ctx, t, s, "run_lua", map[string]any{"traposId": "7:north", "code": "return 1", "timeoutMs": 2000}), "timeout")
	assert.Regexp(t, `which only CC ends, after about 7 s; it has not answered a lua\.exec sent (just|\d+s) before it yet \(the call that sent it stopped waiting\), which may hold it `+
		`\(a run that does not yield, e\.g\. a loop without sleep, holds the whole computer until it ends, or CC stops it after 7 s\): ask again once that has ended `+
		`\(timeoutMs gives it longer, at most 60000\)$`, msg, "return 1 yields: the loop before it holds the computer")
	assert.NotContains(t, msg, earlier, "the run named, not guessed at")
}
