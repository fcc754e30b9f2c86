package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer"
	"fakecraft/computer/machine"
	"fakecraft/fakecrafttest"
	"fakecraft/pocket"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// The agent end to end: fakecraft computers run the real `ai` program and libsandboxai
// against the real gateway binary, whose agent module talks to the fake opencode; the
// fake's model calls the gateway's real /mcp for its tools.

const (
	aiModel      = "fake/m"
	aiOCPassword = "opencode-pw-e2e-ai-31"
	aiDeskID     = 7
	aiDeskLabel  = "desk"
	aiDesk       = "7:desk"
)

// asker is the traposId the gateway's system text names.
var askerInSystem = regexp.MustCompile(`traposId "([^"]+)"`)

// ownerInSystem finds the settings the gateway's system text says, "(sandbox.allow_files read)".
var ownerInSystem = regexp.MustCompile(`\(sandbox\.[a-z_]+ [a-z]+\)`)

// aiLongAnswer is 200 000 characters of short lines, as a model streams them.
var aiLongAnswer = strings.Repeat("The quick brown fox jumps over the lazy dog again.\n", 4000)[:200000]

// aiLongFile is a program of 200 lines the "edit" question changes one line of.
var aiLongFile = func() string {
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&b, "print(%d)\n", i)
	}
	return b.String()
}()

// aiBlob is the bytes 0x00-0x1F and 0x80-0xFF the "blob" question writes.
var aiBlob = func() []byte {
	var b []byte
	for c := 0; c < 256; c++ {
		if c < 0x20 || c >= 0x80 {
			b = append(b, byte(c))
		}
	}
	return b
}()

// aiMarkdown is an answer as a model writes one: paragraphs, lists, a fence, a long word
// (aiLongWord, last), UTF-8.
const aiMarkdown = "## L'été à la porte\n\nDeux façons ☃:\n\n- tirez le levier à gauche de la porte d'entrée\n" +
	"- ou lancez:\n\n  ```lua\n  while true do\n    redstone.setOutput(\"left\", redstone.getInput(\"back\"))\n  end\n  ```\n\n\n" +
	"日本 Voilà: " + aiLongWord + "\n"

// aiInline is an answer with inline code, bold, italic, a link and a backslash escape, and a
// fence at the margin after a list item, which ends the item: the indented line after it is
// code. my\_door.lua begins a line of its own: a word that reaches a row's end may arrive
// in two polls, and ai shows its first part before each wait (docs/ai.md), so where it
// breaks would be the machine's timing.
const aiInline = "Tapez `door` **ici**, puis `sandbox status`.\n" +
	"Voir [la doc](https://tweaked.cc/module/redstone.html), _pas_\nmy\\_door.lua.\n\n- ou:\n```\ndoor open\n```\n" +
	"    redstone.setOutput(\"left\", false)\n"

// aiTable is an answer with a table, UTF-8 in its cells (each character one column on the
// computer, as the gateway's text rule makes it one byte) and inline code in one.
const aiTable = "Les côtés:\n\n| côté | effet |\n|------|------:|\n| gauche | ouvre la porte d'entrée ☃ |\n" +
	"| arrière | `lit` le levier |\n\nFin.\n"

// deltas cuts s into deltas of n bytes or a few more, as a model streams: each a JSON string,
// so whole characters.
func deltas(s string, n int) []string {
	var chunks []string
	for s != "" {
		k := min(n, len(s))
		for k < len(s) && !utf8.RuneStart(s[k]) {
			k++
		}
		chunks = append(chunks, s[:k])
		s = s[k:]
	}
	return chunks
}

// aiLongWord is longer than a computer's row. It comes whole, in one delta with the line break
// after it: a word cut across the computer's polls is shown at each wait (ai.md: one split
// across a pause may break at the edge), so in pieces it broke after "Voilà:" or not as the
// computer's polls fell, and the test read the machine's timing (once in CI).
const aiLongWord = "abcdefghijklmnopqrstuvwxyzéabcdefghijklmnopqrstuvwxyz"

// aiToolErrors holds, by the asking computer, the error the model read of the "save"
// question's write_file.
var aiToolErrors sync.Map

// e2eModel answers by the prompt's first word.
func e2eModel(t *opencodefake.Turn) {
	words := strings.Fields(t.Prompt())
	asker := ""
	if m := askerInSystem.FindStringSubmatch(t.System()); m != nil {
		asker = m[1]
	}
	if len(words) == 0 {
		return
	}
	switch words[0] {
	case "hello":
		t.Text("Hello from ", "the agent.")
	case "tools":
		t.Text("offered: " + strings.Join(t.Offered(), " "))
	case "door": // write /door.lua on the asking computer
		r := t.Tool("trap-sandbox_write_file", map[string]any{"traposId": asker, "path": "/door.lua",
			"content": "redstone.setOutput('left', true)"})
		if r.State == "completed" {
			t.Text("Wrote the door program.")
		} else {
			t.Text("Could not write it: " + r.Error)
		}
	case "edit": // changes line 50 of the asking computer's /long.lua (aiLongFile)
		r := t.Tool("trap-sandbox_write_file", map[string]any{"traposId": asker, "path": "/long.lua",
			"content": strings.Replace(aiLongFile, "print(50)\n", "print('fifty')\n", 1)})
		t.Text("edit " + r.State)
	case "blob": // bytes 0x00-0x1F and 0x80-0xFF, as a model sends bytes
		r := t.Tool("trap-sandbox_write_file", map[string]any{"traposId": asker, "path": "/blob.bin",
			"contentBase64": base64.StdEncoding.EncodeToString(aiBlob)})
		t.Text("blob " + r.State)
	case "save": // writes /door.lua; refused, does as it is told: the code in its answer
		r := t.Tool("trap-sandbox_write_file", map[string]any{"traposId": asker, "path": "/door.lua",
			"content": "redstone.setOutput('left', true)"})
		aiToolErrors.Store(asker, r.Error)
		t.Text("Save this as door.lua:\n\n```lua\nredstone.setOutput('left', true)\n```\n")
	case "markdown": // aiMarkdown, in deltas cut at every 7th byte of its UTF-8, as a model streams it
		t.Text(append(deltas(strings.TrimSuffix(aiMarkdown, aiLongWord+"\n"), 7), aiLongWord+"\n")...)
	case "inline": // aiInline in deltas of 3 bytes: its marks cut from their words
		t.Text(deltas(aiInline, 3)...)
	case "table": // aiTable in deltas of 4 bytes
		t.Text(deltas(aiTable, 4)...)
	case "vault": // aimed at another computer
		r := t.Tool("trap-sandbox_read_file", map[string]any{"traposId": "9:vault", "path": "/secret.txt"})
		t.Text("vault " + r.State + ": " + r.Error)
	case "owner": // what the gateway told the model the owner allows: its "(sandbox.x level)"s
		t.Text(strings.Join(ownerInSystem.FindAllString(t.System(), -1), " "))
	case "history":
		t.Text(strings.Join(t.History(), " | "))
	case "stall":
		t.Stall()
	case "long":
		chunks := make([]string, 0, len(aiLongAnswer)/500)
		for i := 0; i < len(aiLongAnswer); i += 500 {
			chunks = append(chunks, aiLongAnswer[i:min(i+500, len(aiLongAnswer))])
		}
		t.Text(chunks...)
	}
}

type aiWorld struct {
	oc    *opencodefake.Server
	agent *opencodefake.Agent
	dir   string
}

func newAIWorld(t *testing.T) aiWorld {
	oc := opencodefake.Start(t, opencodefake.Options{Password: aiOCPassword})
	return aiWorld{oc: oc, agent: oc.Agent(e2eModel, aiModel), dir: t.TempDir()}
}

func (w aiWorld) gateway(t *testing.T, opts harness.Options) *harness.Gateway {
	t.Helper()
	opts.Args = append([]string{"--password", sandboxPassword, "--opencode-url", w.oc.URL, "--ai-model", aiModel,
		"--ai-dir", w.dir}, opts.Args...)
	opts.Env = append(opts.Env, "OPENCODE_SERVER_PASSWORD="+aiOCPassword)
	return harness.Start(t, gatewayBin, opts)
}

// desk is the asking computer: files writable by the host, its disk in overlay.
func desk(t *testing.T, g *harness.Gateway, overlay string, input computer.Input, program string, args ...string) machine.Options {
	opts := computerOptions(t, g, sandboxPassword, program, args...)
	opts.ID, opts.Label = aiDeskID, aiDeskLabel
	opts.Settings["sandbox.allow_files"] = "write"
	opts.Overlay = overlay
	opts.Input = input
	opts.Files = map[string]string{"/busy.lua": busyProgram}
	return opts
}

// busyProgram asks twice on one conversation through libsandboxai: the second question,
// while the first turn runs, is refused with busy; then it aborts the first.
const busyProgram = `
local libsandbox = require('/apis/libsandbox')
libsandbox.awaitConnection()
local ai = libsandbox.ai
local first, err = ai.ask("stall")
print("first: " .. (first and "asked" or err.code))
local second, err2 = ai.ask("hello")
print("second: " .. (err2 and err2.code or "asked"))
ai.abort(first)
local after, reason = 0, nil
while reason == nil do
  local events, perr = ai.poll(first, after, 5000)
  if events == nil then print("poll failed: " .. perr.code) break end
  for _, e in ipairs(events) do
    after = e.seq
    if e.kind == "done" then reason = e.reason end
  end
end
print("first ended: " .. tostring(reason))
`

func TestAIOnAComputer(t *testing.T) {
	ctx := testContext(t)
	w := newAIWorld(t)
	g := w.gateway(t, harness.Options{})

	t.Run("ai hello prints the streamed answer", func(t *testing.T) {
		ok, out := runCommand(ctx, t, desk(t, g, t.TempDir(), nil, "ai", "hello"))
		assert.True(t, ok, out)
		assert.Contains(t, lines(out), "Hello from the agent.")
	})

	t.Run("the model is offered no host tool", func(t *testing.T) {
		_, out := runCommand(ctx, t, desk(t, g, t.TempDir(), nil, "ai", "tools"))
		offered := strings.Fields(strings.TrimPrefix(strings.Join(lines(out), " "), "offered: "))
		require.NotEmpty(t, offered, out)
		for _, tool := range offered {
			if tool == "Thinking..." {
				continue
			}
			assert.True(t, strings.HasPrefix(tool, "trap-sandbox_"), "offered %q; transcript:\n%s", tool, out)
		}
		assert.Contains(t, offered, "trap-sandbox_write_file")
	})

	t.Run("a write happens after the player's y", func(t *testing.T) {
		overlay := t.TempDir()
		ok, out := runCommand(ctx, t, desk(t, g, overlay, computer.LinesOf("y"), "ai", "door"))
		assert.True(t, ok, out)
		// the player reads what it writes before they answer
		assert.Contains(t, strings.Join(lines(out), "\n"), "The agent wants to write a new file /door.lua (32\nbytes):\n"+
			"redstone.setOutput('left', true)\nAllow? [y/N] y")
		assert.Contains(t, out, "Wrote the door program.")
		data, err := os.ReadFile(filepath.Join(overlay, "door.lua"))
		require.NoError(t, err, "the file on the asking computer; transcript:\n%s", out)
		assert.Equal(t, "redstone.setOutput('left', true)", string(data))
	})

	t.Run("an edit of a long file there shows only the lines it changes", func(t *testing.T) {
		overlay := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(overlay, "long.lua"), []byte(aiLongFile), 0o644))
		ok, out := runCommand(ctx, t, desk(t, g, overlay, computer.LinesOf("y"), "ai", "edit"))
		assert.True(t, ok, out)
		assert.Contains(t, strings.Join(lines(out), "\n"), "The agent wants to change /long.lua (2092 -> 2097\nbytes):\n"+
			"    (47 lines the same)\n 48 print(48)\n 49 print(49)\n-   print(50)\n+50 print('fifty')\n"+
			" 51 print(51)\n 52 print(52)\n    (148 lines the same)\nAllow? [y/N] y")
		assert.NotContains(t, out, "print(53)", "only what changes")
		assert.Contains(t, lines(out), "edit completed")
		data, err := os.ReadFile(filepath.Join(overlay, "long.lua"))
		require.NoError(t, err)
		assert.Contains(t, string(data), "print('fifty')")
	})

	t.Run("a write of bytes shows each control byte as \\xNN, none raw", func(t *testing.T) {
		overlay := t.TempDir()
		ok, out := runCommand(ctx, t, desk(t, g, overlay, computer.LinesOf("y"), "ai", "blob"))
		assert.True(t, ok, out)
		shown := strings.Join(lines(out), "") // an escape may break across rows
		assert.Contains(t, strings.Join(lines(out), " "), "The agent wants to write a new file /blob.bin (160 bytes):")
		assert.Contains(t, shown, `\x00\x01\x02`)
		assert.Contains(t, shown, `\x1e\x1f\x80\x81`)
		assert.Contains(t, shown, `\x9e\x9f`+"\u00a0\u00a1", "Latin-1 shows as itself")
		assert.NotRegexp(t, "[\x00-\x08\x0b-\x1f\u0080-\u009f]", out, "no raw control byte")
		data, err := os.ReadFile(filepath.Join(overlay, "blob.bin"))
		require.NoError(t, err)
		assert.Equal(t, aiBlob, data)
	})

	t.Run("a write is refused after the player's n", func(t *testing.T) {
		overlay := t.TempDir()
		_, out := runCommand(ctx, t, desk(t, g, overlay, computer.LinesOf("n"), "ai", "door"))
		assert.Contains(t, out, "The agent wants to write a new file /door.lua")
		assert.Contains(t, strings.Join(lines(out), " "), "Could not write it: "+opencodefake.RejectFeedbackPrefix+"The player refused")
		// The player's line carries the gateway's reason, not opencode's words around it.
		assert.Contains(t, strings.Join(lines(out), " "), "* write_file /door.lua failed: The player refused this write (write_file /door.lua).")
		_, err := os.Stat(filepath.Join(overlay, "door.lua"))
		assert.True(t, os.IsNotExist(err), "nothing written; transcript:\n%s", out)
	})

	t.Run("a write the owner's setting forbids is said once, as the owner's, with its set line", func(t *testing.T) {
		opts := desk(t, g, t.TempDir(), nil, "ai", "save")
		opts.Settings["sandbox.allow_files"] = "read"
		_, out := runCommand(ctx, t, opts)
		const setLine = "set sandbox.allow_files write"
		// The player reads the refusal once, the tool's line, the setting and its line in it.
		shown := strings.Join(lines(out), " ")
		assert.Contains(t, shown, "* write_file /door.lua failed: forbidden: fs.write needs sandbox.allow_files write (it is read); the owner can allow it with: "+setLine+".", out)
		assert.Equal(t, 1, strings.Count(shown, setLine), out)
		assert.Contains(t, lines(out), "redstone.setOutput('left', true)")
		// The model reads whose refusal it is (opencode says "The user rejected"), the setting
		// and its line once, and that the player sees them already.
		told, ok := aiToolErrors.Load(aiDesk)
		require.True(t, ok, out)
		assert.True(t, strings.HasPrefix(told.(string), opencodefake.RejectFeedbackPrefix+"forbidden: fs.write needs sandbox.allow_files write (it is read)"), told)
		assert.Equal(t, 1, strings.Count(told.(string), setLine), told)
		assert.Contains(t, told, "This is the computer owner's setting, not the player's answer.")
		assert.Contains(t, told, "The player's screen shows this refusal and its set line already: do not retry the call, and do not repeat the line")
	})

	t.Run("an answer in Markdown reads as a terminal shows it, on a computer and a pocket computer", func(t *testing.T) {
		ok, out := runCommand(ctx, t, desk(t, g, t.TempDir(), nil, "ai", "markdown"))
		assert.True(t, ok, out)
		// CC's characters: é is one (E9), ☃ and each of 日本 a ?; the fence not shown
		assert.Equal(t, []string{
			"## L'été à la porte",
			"Deux façons ?:",
			"- tirez le levier à gauche de la porte d'entrée",
			"- ou lancez:",
			"  while true do",
			"    redstone.setOutput(\"left\",",
			"    >redstone.getInput(\"back\"))",
			"  end",
			"?? Voilà:",
			"abcdefghijklmnopqrstuvwxyzéabcdefghijklmnopqrstuvwx",
			"yz",
		}, aiAnswerRows(out), out)
		opts := desk(t, g, t.TempDir(), nil, "ai", "markdown")
		opts.Pocket = pocket.New(nil)
		ok, out = runCommand(ctx, t, opts)
		assert.True(t, ok, out)
		assert.Equal(t, []string{
			"## L'été à la porte",
			"Deux façons ?:",
			"- tirez le levier à gauche",
			"  de la porte d'entrée",
			"- ou lancez:",
			"  while true do",
			"    redstone.setOutput(\"le",
			"    >ft\", redstone.getInpu",
			"    >t(\"back\"))",
			"  end",
			"?? Voilà:",
			"abcdefghijklmnopqrstuvwxyz",
			"éabcdefghijklmnopqrstuvwxy",
			"z",
		}, aiAnswerRows(out), out)
	})

	t.Run("inline code, bold and italic show without their marks, a link as its text and URL, and a fence at the margin ends a list item", func(t *testing.T) {
		ok, out := runCommand(ctx, t, desk(t, g, t.TempDir(), nil, "ai", "inline"))
		assert.True(t, ok, out)
		assert.Equal(t, []string{
			"Tapez door ici, puis sandbox status.",
			"Voir la doc",
			"(https://tweaked.cc/module/redstone.html), pas",
			"my_door.lua.",
			"- ou:",
			"door open",
			"    redstone.setOutput(\"left\", false)",
		}, aiAnswerRows(out), out)
		opts := desk(t, g, t.TempDir(), nil, "ai", "inline")
		opts.Pocket = pocket.New(nil)
		ok, out = runCommand(ctx, t, opts)
		assert.True(t, ok, out)
		// the code line's further row after a >: code, not the item's text going on under it
		assert.Equal(t, []string{
			"Tapez door ici, puis",
			"sandbox status.",
			"Voir la doc",
			"(https://tweaked.cc/module",
			"/redstone.html), pas",
			"my_door.lua.",
			"- ou:",
			"door open",
			"    redstone.setOutput(\"le",
			"    >ft\", false)",
		}, aiAnswerRows(out), out)
	})

	t.Run("a table shows in columns where they fit, and as a line a cell on a pocket computer", func(t *testing.T) {
		ok, out := runCommand(ctx, t, desk(t, g, t.TempDir(), nil, "ai", "table"))
		assert.True(t, ok, out)
		assert.Equal(t, []string{
			"Les côtés:",
			"côté                         effet",
			"-------  -------------------------",
			"gauche   ouvre la porte d'entrée ?",
			"arrière              lit le levier",
			"Fin.",
		}, aiAnswerRows(out), out)
		opts := desk(t, g, t.TempDir(), nil, "ai", "table")
		opts.Pocket = pocket.New(nil)
		ok, out = runCommand(ctx, t, opts)
		assert.True(t, ok, out)
		assert.Equal(t, []string{
			"Les côtés:",
			"côté: gauche",
			"effet: ouvre la porte",
			"       d'entrée ?",
			"côté: arrière",
			"effet: lit le levier",
			"Fin.",
		}, aiAnswerRows(out), out)
	})

	t.Run("a call aimed at another computer is refused and the turn goes on", func(t *testing.T) {
		_, out := runCommand(ctx, t, desk(t, g, t.TempDir(), nil, "ai", "vault"))
		assert.Contains(t, strings.Join(lines(out), " "), "vault error: "+opencodefake.RejectFeedbackPrefix+"Refused: you may act only on computer "+aiDesk)
		assert.Contains(t, strings.Join(lines(out), " "), "* read_file /secret.txt failed: Refused: you may act only on computer "+aiDesk)
		assert.NotContains(t, out, "Allow?")
	})

	t.Run("a 200 KB answer arrives cut and paged", func(t *testing.T) {
		const keys = 400
		pages := computer.LinesOf(make([]string, keys)...) // Enter at every "Press any key"
		ok, out := runCommand(ctx, t, desk(t, g, t.TempDir(), pages, "ai", "long"))
		assert.True(t, ok, out)
		assert.Contains(t, out, "(The answer was cut")
		// 64 KiB of 51-character lines on a 19-row screen: about 70 screenfuls.
		assert.Greater(t, keys-len(pages), 60, "paged: a key pressed at each screenful")
		assert.LessOrEqual(t, strings.Count(out, "The quick brown fox"), (64<<10)/51+1, "no more than the cap")
	})

	t.Run("the agent is told what the owner allows, read at each question", func(t *testing.T) {
		opts := desk(t, g, t.TempDir(), nil, "/owner.lua")
		opts.Settings["sandbox.allow_files"] = "read"
		opts.Settings["sandbox.allow_exec"] = "true"
		opts.Settings["sandbox.ai_confirm"] = "false"
		opts.Files["/owner.lua"] = allowsAskedTwice
		ok, out := runCommand(ctx, t, opts)
		assert.True(t, ok, out)
		said := strings.Join(lines(out), " ")
		assert.Contains(t, said, "(sandbox.allow_files read) (sandbox.allow_exec true) (sandbox.allow_screen none) (sandbox.ai_confirm false)", out)
		assert.Contains(t, said, "(sandbox.allow_files write) (sandbox.allow_exec false) (sandbox.allow_screen view) (sandbox.ai_confirm true)", out)
	})

	t.Run("a second question while one runs is busy", func(t *testing.T) {
		_, out := runCommand(ctx, t, desk(t, g, t.TempDir(), nil, "/busy.lua"))
		assert.Contains(t, lines(out), "first: asked", out)
		assert.Contains(t, lines(out), "second: busy", out)
		assert.Contains(t, lines(out), "first ended: aborted", out)
	})

	assert.Zero(t, w.agent.Queued(), "never a queued prompt")
	assert.Zero(t, w.agent.DefaultModelUsed())
	assert.NotContains(t, g.Log(), "Hello from the agent", "the answer in the gateway's log")
}

// TestAITurnsEnd: a stalled provider ends at the gateway's deadline with a clear line; Ctrl-T
// stops the turn on opencode; a restarted gateway continues the same conversation.
func TestAITurnsEnd(t *testing.T) {
	ctx := testContext(t)
	w := newAIWorld(t)
	addr, release := opencodefake.ReservePort(t)
	release() // the gateways below listen there, one after the other
	g := w.gateway(t, harness.Options{Listen: addr, Args: []string{"--ai-turn-deadline", "3s"}})

	t.Run("a stalled provider ends at the deadline, and a script can tell", func(t *testing.T) {
		opts := desk(t, g, t.TempDir(), nil, "/ask.lua")
		opts.Files["/ask.lua"] = scriptAsksAI
		_, out := runCommand(ctx, t, opts)
		assert.Contains(t, strings.Join(lines(out), " "), "The agent did not finish in 3 s: ask again later e2e: no answer")
		assert.Equal(t, int64(1), w.agent.Aborts(), "the turn was aborted on opencode")
	})
	require.NoError(t, g.Stop())
	g = w.gateway(t, harness.Options{Listen: addr}) // the default deadline from here on

	t.Run("Ctrl-T aborts the turn on opencode and leaves the daemon connected", func(t *testing.T) {
		opts := desk(t, g, t.TempDir(), nil, "/ctrlt.lua")
		opts.Files["/ctrlt.lua"] = ctrlTProgram
		c := fakecrafttest.StartWithin(t, opts, testTimeout)
		require.Eventually(t, func() bool { return aiTurnsRunning(t, g) == 1 && w.agent.Running() == 1 }, testTimeout, pollInterval,
			"the turn to reach the model")
		c.QueueString("terminate")
		c.WaitFor(ctx, "Aborted: the turn was stopped (Ctrl-T).")
		// The same Ctrl-T reached the sandbox daemon (it runs beside the shell), which keeps
		// running: the computer's own status and the gateway's list say it is connected.
		c.WaitFor(ctx, "e2e: after ai")
		c.WaitFor(ctx, "connected: true")
		assert.Contains(t, connectedComputers(t, g), aiDesk)
		// The abort reaches opencode from the gateway, after the computer's line when the
		// Ctrl-T's socket close ended the turn first (reason=disconnected): waited for.
		assert.Eventually(t, func() bool { return w.agent.Aborts() == 2 }, testTimeout, pollInterval, "the turn aborted on opencode")
	})

	t.Run("a restarted gateway continues the conversation", func(t *testing.T) {
		_, out := runCommand(ctx, t, desk(t, g, t.TempDir(), nil, "ai", "history", "one"))
		assert.Contains(t, out, "history one")
		require.NoError(t, g.Stop())
		g = w.gateway(t, harness.Options{Listen: addr})
		_, out = runCommand(ctx, t, desk(t, g, t.TempDir(), nil, "ai", "history", "two"))
		assert.Contains(t, strings.Join(lines(out), " "), "history one | history two", out)
	})
	assert.Zero(t, w.agent.Queued())
}

// askAfterChurnProgram waits for the test's go, then asks `ai stall` (a turn that runs until
// stopped), says when ai is over and stays, its daemon running.
const askAfterChurnProgram = `
os.pullEvent("e2e_ask")
shell.run("ai", "stall")
print("e2e: after ai")
while true do os.pullEvent("e2e_never") end
`

// TestAIFindsTheGatewayBackWhileTheDaemonBacksOff: the gateway restarts during an answer, on a
// daemon whose last two connections each lasted under a minute, so it waits 20 s before its
// next try. ai, Reconnecting..., makes it try now and reads that the restarted gateway lost the
// answer: it gave up after 16 s and said "Not connected to the gateway: the gateway stopped
// (going away); the daemon retries in 5 s", the gateway back for seconds.
func TestAIFindsTheGatewayBackWhileTheDaemonBacksOff(t *testing.T) {
	ctx := testContext(t)
	w := newAIWorld(t)
	addr, release := opencodefake.ReservePort(t)
	release() // the gateways below listen there, one after the other
	g := w.gateway(t, harness.Options{Listen: addr})
	opts := desk(t, g, t.TempDir(), nil, "/ask.lua")
	opts.Files["/ask.lua"] = askAfterChurnProgram
	// Half real time: the gateway's restart takes real time, which must fit in ai's wait (16 s
	// of the computer's clock without the fix, 31 s with it) under -race on a loaded machine.
	opts.TimeScale = 2
	c := fakecrafttest.StartWithin(t, opts, testTimeout)

	// Two short connections: the daemon backs off 5 s, then 10 s, then 20 s.
	for range 2 {
		require.NoError(t, g.WaitLog(ctx, `msg="computer connected"`))
		require.NoError(t, g.Stop())
		g = w.gateway(t, harness.Options{Listen: addr})
	}
	require.NoError(t, g.WaitLog(ctx, `msg="computer connected"`))
	c.QueueString("e2e_ask")
	require.Eventually(t, func() bool { return aiTurnsRunning(t, g) == 1 && w.agent.Running() == 1 }, testTimeout, pollInterval,
		"the turn to reach the model")
	require.NoError(t, g.Stop())
	g = w.gateway(t, harness.Options{Listen: addr})

	c.WaitFor(ctx, "e2e: after ai")
	out := strings.Join(lines(c.Output()), " ")
	assert.Contains(t, out, "The gateway lost the answer (restarted?): ask again", c.Output())
	assert.NotContains(t, out, "Not connected", c.Output())
	require.NoError(t, g.WaitLog(ctx, `msg="computer connected"`), "the daemon must reconnect to the new gateway")
}

// allowAcrossRestartProgram asks for the door program, whose write ai puts to the player,
// then says it is done.
const allowAcrossRestartProgram = `
shell.run("ai", "door")
print("e2e: after ai")
while true do os.pullEvent("e2e_never") end
`

// TestAIAReplyToAllowAfterARestartSaysTheChangeWasNotMade: the gateway restarts while ai's
// "Allow? [y/N]" is on the screen; the player's y goes to the restarted gateway, which knows no
// such turn. ai said "The gateway lost the answer (restarted?): ask again", and the player who
// had typed y could not tell whether the file was written: it says now that it was not.
func TestAIAReplyToAllowAfterARestartSaysTheChangeWasNotMade(t *testing.T) {
	ctx := testContext(t)
	w := newAIWorld(t)
	addr, release := opencodefake.ReservePort(t)
	release() // the gateways below listen there, one after the other
	g := w.gateway(t, harness.Options{Listen: addr})
	typed := make(chan string, 1)
	overlay := t.TempDir()
	opts := desk(t, g, overlay, computer.Input(typed), "/allow.lua")
	opts.Files["/allow.lua"] = allowAcrossRestartProgram
	// Real time: the question answers n by itself after 61 s of the computer's clock, which
	// the gateway's restart and the daemon's reconnect must not outlast (the tests' 4x would
	// leave 15 s of the machine's time for them).
	opts.TimeScale = 1
	c := fakecrafttest.StartWithin(t, opts, testTimeout)

	// The write's content, the row above the question (the transcript holds a row once the
	// next begins: the question's own is not there until it is answered).
	c.WaitFor(ctx, "redstone.setOutput('left', true)")
	require.NoError(t, g.Stop())
	g = w.gateway(t, harness.Options{Listen: addr})
	// The daemon tries the new gateway when asked to, as sandbox status (in another tab) asks
	// it, rather than at its reconnect timer, 5 s of real time on. It is asked until it has
	// connected: the ask is ignored until it has seen the old gateway go.
	require.Eventually(t, func() bool {
		if strings.Contains(g.Log(), `msg="computer connected"`) {
			return true
		}
		c.QueueString("trapos_sandbox_retry_now")
		return false
	}, testTimeout, pollInterval, "the daemon must reconnect to the new gateway")
	typed <- "y"

	c.WaitFor(ctx, "e2e: after ai")
	assert.Contains(t, unwrapped(c.Output()), "Allow? [y/N] y The gateway lost the answer (restarted?) before your reply to "+
		"Allow? got to it: the agent did not write /door.lua (32 bytes). Ask again", c.Output())
	assert.NoFileExists(t, filepath.Join(overlay, "door.lua"), "the write must not have been made")
}

// allowsAskedTwice asks `ai owner`, the owner changes the settings, and it asks again.
const allowsAskedTwice = `
shell.run("ai", "owner")
settings.set("sandbox.allow_files", "write")
settings.set("sandbox.allow_exec", false)
settings.set("sandbox.allow_screen", "view")
settings.set("sandbox.ai_confirm", true)
shell.run("ai", "owner")
`

// scriptAsksAI is docs/ai.md's script that tells a failed question: shell.run("ai", ...)
// returns false.
const scriptAsksAI = `
if not shell.run("ai", "stall") then
  printError("e2e: no answer")
end
`

// ctrlTProgram runs `ai stall` (Ctrl-T stops it), then shows the daemon's status and stays.
const ctrlTProgram = `
shell.run("ai", "stall")
print("e2e: after ai")
shell.run("sandbox", "status")
while true do os.pullEvent("e2e_never") end
`

// connectedComputers lists the traposIds the gateway has connected (GET /trapos/computers).
// aiAnswerRows are the transcript's rows after the question's Thinking..., the blank rows
// between blocks left out (lines drops them).
func aiAnswerRows(out string) []string {
	var rows []string
	for _, l := range lines(out) {
		rows = append(rows, strings.TrimPrefix(l, "Thinking... (Q stops)"))
	}
	return rows
}

func connectedComputers(t *testing.T, g *harness.Gateway) []string {
	resp, err := harness.HTTPClient().Get(g.URL("/trapos/computers"))
	require.NoError(t, err)
	defer resp.Body.Close()
	var list []struct {
		TraposID string `json:"traposId"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	ids := []string{}
	for _, c := range list {
		ids = append(ids, c.TraposID)
	}
	return ids
}

// aiTurnsRunning is how many turns the gateway lists as running (trap-sandbox ai-turns).
func aiTurnsRunning(t *testing.T, g *harness.Gateway) int {
	resp, err := harness.HTTPClient().Get(g.URL("/trapos/ai/turns"))
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var list []map[string]any
	if json.NewDecoder(resp.Body).Decode(&list) != nil {
		return -1
	}
	return len(list)
}
