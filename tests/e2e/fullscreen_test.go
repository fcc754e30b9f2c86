package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"

	"tests/internal/harness"
)

// Fixtures of the full-screen tests: a computer whose player sits at a shell prompt while the
// host runs programs that take the whole screen or wait for input.
const (
	deskTraposID = "11:desk"
	// markerAtPrompt: the computer is connected and the player's shell is at its prompt.
	markerAtPrompt = "e2e: at the prompt"
	// markerPlayerRan is what the player's command prints.
	markerPlayerRan = "e2e: the player's shell ran hello"
	// deskProgram connects, then gives the player an interactive shell (its lines come from
	// the test, typed as a player would).
	deskProgram = `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
print("` + markerAtPrompt + `")
shell.run("shell")
`
	// doorProgram is the file the host opens in edit.
	doorProgram = `redstone.setOutput("left", true) -- open the door`
	// clearLoop redraws every row of the screen, forever; the tight version never yields.
	clearLoop = `
while true do
  term.clear();
  local _, height = term.getSize();
  for y = 1, height do
    term.setCursorPos(1, y);
    term.write("row " .. y);
  end
  %s
end
`
	// askProgram waits for a line, or for e2e_give_up; it says which came first. Run as
	// "ask TAG", it makes the file /asking-TAG first.
	askProgram = `
local tag = ...;
if tag then fs.open("/asking-" .. tag, "w").close(); end
print("name?");
local answer;
parallel.waitForAny(function() answer = read(); end, function() os.pullEvent("e2e_give_up"); end);
print(answer and ("read: " .. answer) or "gave up");
`
	// hostRunTimeout is how long each host call may take; the computer stops the run 2 s
	// before (computer.RunSlack), at 8000 ms on its clock, which runs timeScale times fast.
	hostRunTimeout = "10s"
)

// drawnRows is the screen clearLoop leaves: "row 1" to "row 19", one per row.
func drawnRows() string {
	rows := make([]string, computer.TermHeight)
	for y := range rows {
		rows[y] = fmt.Sprintf("row %d", y+1)
	}
	return strings.Join(rows, "\n")
}

// TestFullScreenProgramsFromTheHostEndAtTheirTimeout: edit, a loop redrawing every row and a
// program waiting on read(), run through the CLI, the HTTP API and MCP, each end at their
// timeout with an answer showing their screen, or, for a loop that never yields, with CC's
// "Too long without yielding"; the player's keys stay with the player's shell; afterwards the
// computer still answers ping, runs the host's next command and the player's.
func TestFullScreenProgramsFromTheHostEndAtTheirTimeout(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 11, "desk"
	opts.Settings["sandbox.allow_exec"] = "true"
	opts.Files = map[string]string{
		"/e2e.lua":   deskProgram,
		"/hello.lua": `print("` + markerPlayerRan + `")`,
		"/door.lua":  doorProgram,
		"/ask.lua":   askProgram,
		"/tight.lua": fmt.Sprintf(clearLoop, ""),
	}
	typed := make(chan string)
	opts.Input = computer.Input(typed)
	// CC's own limit: the tight loop below must meet it (fakecrafttest's default is longer).
	opts.YieldTimeout = computer.DefaultYieldTimeout
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerAtPrompt)

	// playerTypes types line at the player's prompt and waits until the command ran.
	playerRuns := 0
	playerTypes := func(t *testing.T) {
		t.Helper()
		select {
		case typed <- "hello":
		case <-ctx.Done():
			t.Fatalf("the player's shell never asked for a line; transcript:\n%s", c.Output())
		}
		playerRuns++
		require.Eventually(t, func() bool { return strings.Count(c.Output(), markerPlayerRan) >= playerRuns },
			testTimeout, pollInterval, "the player's command did not run; transcript:\n%s", c.Output())
	}
	// stillServes checks that the computer answers ping, runs the host's next command and the
	// player's.
	stillServes := func(t *testing.T) {
		t.Helper()
		out, errOut, code := cli(ctx, t, g, nil, "ping", deskTraposID)
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "pong from "+deskTraposID)
		out, errOut, code = cli(ctx, t, g, nil, "run", deskTraposID, "ls /")
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "door.lua")
		playerTypes(t)
	}

	t.Run("run edit: timeout with the editor's screen", func(t *testing.T) {
		_, errOut, code := cli(ctx, t, g, nil, "run", deskTraposID, "edit /door.lua", "--timeout", hostRunTimeout)
		assert.NotEqual(t, 0, code)
		// The CLI indents the screen's rows under the error line.
		assert.Contains(t, errOut, "timeout: the run was stopped on the computer at its limit of 8000 ms (this call's timeout of 10000 ms less 2000 ms, so that its answer comes within the call): "+
			"it ran past its timeout of 8000 ms and was abandoned (a job gets no keyboard or mouse input); its screen showed:\n  "+doorProgram+"\n")
		assert.Regexp(t, `\n  Press Ctrl (or click here )?to access menu +Ln 1\n\(--timeout gives it longer`, errOut, "the fix on a line of its own, not on the editor's status bar")
		assert.Contains(t, errOut, doorProgram+"\n\n", "the editor's blank rows are empty lines")
		assert.NotRegexp(t, `(?m)^ +$`, errOut, "no line of spaces alone")
		stillServes(t)
	})

	t.Run("MCP run_program edit: timeout with the editor's screen", func(t *testing.T) {
		s := harness.ConnectMCP(ctx, t, g, "")
		msg := harness.ToolError(t, harness.CallTool(ctx, t, s, "run_program",
			map[string]any{"traposId": deskTraposID, "command": "edit /door.lua", "timeoutMs": 10000}), "timeout")
		assert.Contains(t, msg, "its screen showed:\n"+doorProgram+"\n")
		assert.Regexp(t, `\nPress Ctrl (or click here )?to access menu +Ln 1\n\(timeoutMs gives it longer, at most 60000; a program that waits for input never gets it here, and one that never ends \(a loop, a server\) is stopped whatever time it is given: start it on the computer's screen with send_text`, msg)
		stillServes(t)
	})

	t.Run("HTTP API lua.exec of a clear loop: timeout with its last frame", func(t *testing.T) {
		code, err := json.Marshal(fmt.Sprintf(clearLoop, "sleep(0);"))
		require.NoError(t, err)
		status, got := postRequest(ctx, t, g, deskTraposID,
			`{"type":"lua.exec","payload":{"code":`+string(code)+`,"timeoutMs":8000},"timeoutMs":20000}`)
		assert.Equal(t, http.StatusOK, status, "the computer's own timeout is an answer")
		assert.False(t, got.OK)
		require.NotNil(t, got.Error)
		assert.Equal(t, "timeout", got.Error.Code)
		assert.Equal(t, "it ran past its timeout of 8000 ms and was abandoned (a job gets no keyboard or mouse input); its screen showed:\n"+
			drawnRows(), got.Error.Message)
		stillServes(t)
	})

	t.Run("HTTP API shell.run of read(): timeout with its prompt", func(t *testing.T) {
		status, got := postRequest(ctx, t, g, deskTraposID,
			`{"type":"shell.run","payload":{"command":"ask","timeoutMs":8000},"timeoutMs":20000}`)
		assert.Equal(t, http.StatusOK, status)
		require.NotNil(t, got.Error)
		assert.Equal(t, "timeout", got.Error.Code)
		assert.True(t, strings.HasSuffix(got.Error.Message, "its screen showed:\nname?"), got.Error.Message)
		stillServes(t)
	})

	t.Run("the player's keys go to the player's shell, not to a program the host runs", func(t *testing.T) {
		var wg sync.WaitGroup
		var out, errOut string
		var code int
		wg.Go(func() {
			out, errOut, code = cli(ctx, t, g, nil, "run", deskTraposID, "ask keys", "--timeout", "58s")
		})
		// Whatever fails below, ask ends and the run with it before the test does.
		defer wg.Wait()
		defer c.QueueString("e2e_give_up")
		// ask waits on read(); the player types a command meanwhile, which their shell runs.
		for {
			asking, errOut, code := cli(ctx, t, g, nil, "exec", deskTraposID, `fs.exists("/asking-keys")`)
			require.Equal(t, 0, code, "the computer stopped answering: %s", errOut)
			if asking == "true\n" {
				break
			}
		}
		playerTypes(t)
		c.QueueString("e2e_give_up")
		wg.Wait()
		require.Equal(t, 0, code, errOut)
		assert.Equal(t, "name?\ngave up\n", out, "the host's program read the player's line")
	})

	t.Run("run of a full-screen loop that never yields: Too long without yielding", func(t *testing.T) {
		out, errOut, code := cli(ctx, t, g, nil, "run", deskTraposID, "tight", "--timeout", "58s")
		assert.NotEqual(t, 0, code)
		// The error names where the loop stopped (the screen wraps the line), which varies.
		assert.Contains(t, strings.Join(lines(out), " "), "Too long without yielding", errOut)
		stillServes(t)
	})
}

// pollInterval is how often a test polls a condition it cannot wait on as an event.
const pollInterval = 20 * time.Millisecond
