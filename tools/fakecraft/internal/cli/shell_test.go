package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"fakecraft/console/consoletest"
	"fakecraft/fakecrafttest"
)

// shellTimeout bounds one whole pty session; every step waits for the screen, not a clock.
const shellTimeout = 60 * time.Second

// ptyShell is `fakecraft shell` running on the terminal side of a pseudo-terminal, with
// the test typing on the other side and reading the screen back as a terminal would.
type ptyShell struct {
	t       *testing.T
	ctx     context.Context
	ptmx    *os.File
	tty     *os.File // the terminal side, fakecraft's stdin and stdout
	screen  *consoletest.Screen
	status  chan int
	ended   chan struct{} // closed when fakecraft shell has returned
	stderr  *fakecrafttest.Output
	readEnd chan struct{}
}

func startShell(t *testing.T, args ...string) *ptyShell {
	t.Helper()
	return startShellSized(t, 80, 24, args...)
}

// startShellSized is startShell in a terminal of cols x rows.
func startShellSized(t *testing.T, cols, rows int, args ...string) *ptyShell {
	t.Helper()
	t.Setenv("TERM", "xterm-256color") // whatever the test's own terminal is
	master, slave, err := pty.Open()
	require.NoError(t, err)
	ptmx, tty := pollable(t, master), pollable(t, slave)
	require.NoError(t, pty.Setsize(ptmx, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}))
	ctx, cancel := context.WithTimeout(context.Background(), shellTimeout)
	s := &ptyShell{
		t: t, ctx: ctx, ptmx: ptmx, tty: tty, screen: consoletest.NewScreen(cols, rows),
		status: make(chan int, 1), ended: make(chan struct{}), stderr: &fakecrafttest.Output{}, readEnd: make(chan struct{}),
	}
	go func() {
		defer close(s.readEnd)
		_, _ = io.Copy(s.screen, ptmx)
	}()
	go func() {
		defer close(s.ended)
		s.status <- MainWithInput(append([]string{"shell"}, args...), tty, tty, s.stderr)
	}()
	// A test that stopped early leaves the computer on: closing its terminal ends its input,
	// which turns it off; the session must have returned before the test ends.
	t.Cleanup(func() {
		cancel()
		_ = tty.Close()
		_ = ptmx.Close()
		<-s.readEnd
		<-s.ended
	})
	return s
}

// typeText sends bytes as the keyboard would.
func (s *ptyShell) typeText(text string) {
	s.t.Helper()
	_, err := s.ptmx.Write([]byte(text))
	require.NoError(s.t, err)
}

// waitFor waits until the screen satisfies ok, failing the test with the screen when the
// session's time runs out.
func (s *ptyShell) waitFor(what string, ok func(screen string) bool) {
	s.t.Helper()
	for {
		if ok(s.screen.Text()) {
			return
		}
		select {
		case <-s.screen.Changed():
		case <-s.ctx.Done():
			s.t.Fatalf("screen never showed %s; it shows:\n%s\nstderr: %s", what, s.screen.Text(), s.stderr.String())
		}
	}
}

// waitText waits until the screen contains text.
func (s *ptyShell) waitText(text string) {
	s.t.Helper()
	s.waitFor(text, func(screen string) bool { return strings.Contains(screen, text) })
}

// waitLine waits until some row of the screen is exactly line.
func (s *ptyShell) waitLine(line string) {
	s.t.Helper()
	s.waitFor("the line "+line, func(screen string) bool {
		for _, row := range strings.Split(screen, "\n") {
			if row == line {
				return true
			}
		}
		return false
	})
}

// rowOf is the 1-based row showing exactly line, or 0.
func (s *ptyShell) rowOf(line string) int {
	for i, row := range strings.Split(s.screen.Text(), "\n") {
		if row == line {
			return i + 1
		}
	}
	return 0
}

// waitPrompt waits for the shell's prompt on the lowest non-empty row.
func (s *ptyShell) waitPrompt(prompt string) {
	s.t.Helper()
	s.waitFor("the prompt "+prompt, func(screen string) bool {
		rows := strings.Split(strings.TrimRight(screen, "\n"), "\n")
		return rows[len(rows)-1] == prompt
	})
}

// exit waits for fakecraft shell to return its status.
func (s *ptyShell) exit() int {
	s.t.Helper()
	select {
	case code := <-s.status:
		return code
	case <-s.ctx.Done():
		s.t.Fatalf("fakecraft shell did not exit; screen:\n%s", s.screen.Text())
		return -1
	}
}

// pollable returns a non-blocking copy of f (and closes f): Go's poller then serves it, so
// Close and read deadlines interrupt a read in progress. creack/pty opens blocking files.
func pollable(t *testing.T, f *os.File) *os.File {
	t.Helper()
	fd, err := unix.Dup(int(f.Fd()))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, unix.SetNonblock(fd, true))
	return os.NewFile(uintptr(fd), f.Name())
}

func shellRepo(t *testing.T) string {
	return repo(t, map[string]string{"trapos/programs/.keep": ""})
}

// TestShellLuaAndEdit is the person at the keyboard: the Lua prompt answers 1+1 with 2,
// edit writes and saves a file, cat shows it, Ctrl-S turns the computer off.
func TestShellLuaAndEdit(t *testing.T) {
	s := startShell(t, "--root", shellRepo(t), "--no-autostart", "--colours", "256")
	s.waitText("CraftOS 1.9")
	s.waitPrompt(">")

	s.typeText("lua\r")
	s.waitText("Call exit() to exit.")
	s.waitPrompt("lua>")
	s.typeText("1+1\r")
	s.waitLine("2")
	// Colours reach the terminal: the prompt's header in yellow, typed text in white
	// (--colours 256: CC's yellow #DEDE6C is xterm 185, white #F0F0F0 is 255).
	assert.Equal(t, "38;5;185", s.screen.Foreground(1, 1), "CraftOS 1.9 in yellow")
	assert.Equal(t, "38;5;255", s.screen.Foreground(3, 2), "the typed command in white")
	s.typeText("exit()\r")
	s.waitPrompt(">")
	s.typeText("nosuch\r")
	s.waitLine("No such program")
	assert.Equal(t, "38;5;167", s.screen.Foreground(1, s.rowOf("No such program")), "errors in red (#CC4C4C)")
	s.waitPrompt(">")

	s.typeText("edit notes.txt\r")
	s.waitText("Press Ctrl or click here to access menu")
	s.typeText("hello from a pty\rsecond line")
	s.waitLine("second line")
	// One quick Ctrl-S is Ctrl and S, as in CC: Ctrl opens edit's menu, nothing shuts down.
	s.typeText("\x13")
	s.waitText("[Save] Run  Exit")
	s.typeText("\r")
	s.waitText("Saved to notes.txt")
	s.typeText("\x1b") // Esc stands for a bare Ctrl press
	s.waitText("[Save] Run  Exit")
	s.typeText("\x1b[D") // Left, from the first item round to the last
	s.waitText(" Save  Run [Exit]")
	s.typeText("\r")
	s.waitPrompt(">")

	s.typeText("cat notes.txt\r")
	s.waitLine("hello from a pty")
	s.waitLine("second line")
	s.waitPrompt(">")

	s.typeText("\x13\x13") // Ctrl-S held (a terminal repeats it)
	assert.Equal(t, ExitOK, s.exit(), s.stderr.String())
}

// TestShellKeys edits a line with the cursor keys, recalls history, and terminates a
// program with Ctrl-T.
func TestShellKeys(t *testing.T) {
	s := startShell(t, "--root", shellRepo(t), "--no-autostart")
	s.waitPrompt(">")
	s.typeText("lua\r")
	s.waitPrompt("lua>")

	// Typed "2*3", then Home and "1+" before it: 1+2*3.
	s.typeText("2*3\x1b[H1+")
	s.waitPrompt("lua> 1+2*3")
	s.typeText("\r")
	s.waitLine("7")

	// Backspace and Left/Delete: "10-4" becomes "10-1".
	s.typeText("10-4\x7f1\r")
	s.waitLine("9")
	s.typeText("10+5\x1b[D\x1b[3~2\r")
	s.waitLine("12")

	// Up recalls the previous line.
	s.typeText("\x1b[A")
	s.waitPrompt("lua> 10+2")
	s.typeText("\r")
	s.waitFor("a second 12", func(screen string) bool { return strings.Count(screen, "\n12\n") >= 2 })

	// A burst of typing faster than the computer reads (three events a key, far past CC's
	// 256-event queue) is held back, not dropped.
	s.typeText(strings.Repeat("1+", 150) + "1\r")
	s.waitLine("151")

	// A paste arrives as one paste event, not keys.
	s.typeText("\x1b[200~\"pasted\"\x1b[201~\r")
	s.waitLine(`"pasted"`)

	// Ctrl-T: the REPL's read gets terminate, the shell reports it where the cursor is.
	s.typeText("\x14\x14")
	s.waitLine("lua> Terminated")
	s.waitPrompt(">")

	s.typeText("shutdown\r")
	s.waitText("Goodbye")
	assert.Equal(t, ExitOK, s.exit(), s.stderr.String())
}

// TestShellHeldCtrlTKeysGoUpAfterTerminate: a program sees a held Ctrl-T as in CC, Ctrl's
// and T's key, the terminate, then their key_up once the hold ends (the terminal's repeats
// stop), though a terminal reports no release.
func TestShellHeldCtrlTKeysGoUpAfterTerminate(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "showkeys.lua"), []byte(`
print("ready")
local seen = {}
while true do
  local ev, code = os.pullEventRaw()
  if ev == "key" and code == keys.leftCtrl then seen = {} end
  if ev == "key" or ev == "key_up" or ev == "terminate" then
    seen[#seen + 1] = ev .. (code and " " .. code or "")
    if ev == "key_up" and code == keys.leftCtrl then break end
  end
end
print(table.concat(seen, ","))
`), 0o644))
	s := startShell(t, "--root", shellRepo(t), "--no-autostart", "--dir", dir)
	s.waitPrompt(">")
	s.typeText("showkeys\r")
	s.waitLine("ready")
	s.typeText("\x14\x14\x14") // held: the first press, then the terminal's repeats
	s.waitLine("key 341,key 84,terminate,key_up 84,key_up 341")
	s.waitPrompt(">")
	s.typeText("shutdown\r")
	s.waitText("Goodbye")
	assert.Equal(t, ExitOK, s.exit(), s.stderr.String())
}

// TestShellRebootKeepsFiles: Ctrl-R boots the computer again over the same files; Ctrl-T
// at the prompt then turns it off.
func TestShellRebootKeepsFiles(t *testing.T) {
	s := startShell(t, "--root", shellRepo(t), "--no-autostart")
	s.waitPrompt(">")
	s.typeText("mkdir kept\r")
	s.waitPrompt(">")
	s.typeText("clear\r")
	s.waitFor("a cleared screen", func(screen string) bool { return strings.TrimSpace(screen) == ">" })
	s.typeText("\x12\x12") // Ctrl-R held
	s.waitText("CraftOS 1.9")
	s.waitPrompt(">")
	s.typeText("ls\r")
	s.waitText("kept")
	// Ctrl-T at the prompt ends the shell, as in CC: the error, then the shutdown program.
	s.typeText("\x14\x14")
	s.waitLine("> Terminated")
	s.waitLine("Goodbye")
	assert.Equal(t, ExitOK, s.exit(), s.stderr.String())
}

// TestShellHelpViewer: a help topic longer than the screen opens the viewer; Down scrolls
// it, and Q closes it without the q reaching the prompt.
func TestShellHelpViewer(t *testing.T) {
	s := startShell(t, "--root", shellRepo(t), "--no-autostart")
	s.waitPrompt(">")
	s.typeText("lua\r")
	s.waitPrompt("lua>")
	s.typeText(`f = fs.open("/topics/long.txt", "w") for i = 1, 40 do f.writeLine("row " .. i) end f.close() help.setPath("/topics")` + "\r")
	s.waitPrompt("lua>")
	s.typeText("exit()\r")
	s.waitPrompt(">")

	s.typeText("help long\r")
	s.waitText("Help: long")
	s.waitText("Press Q to exit")
	s.waitLine("row 1")
	s.typeText("\x1b[B") // Down
	s.waitFor("row 1 scrolled away", func(screen string) bool {
		return strings.HasPrefix(screen, "row 2\n")
	})
	s.typeText("q")
	s.waitFor("a cleared screen with the prompt", func(screen string) bool { return strings.TrimSpace(screen) == ">" })
	s.typeText("id\r")
	s.waitLine("This is computer #0")

	s.typeText("shutdown\r")
	s.waitText("Goodbye")
	assert.Equal(t, ExitOK, s.exit(), s.stderr.String())
}

// TestShellInASmallTerminal: a terminal smaller than the computer's 51x19 shows the screen's
// top left corner, each row cut at the terminal's edge, and says on stderr what it needs.
// The rows used to be drawn whole: past the edge they wrapped onto the next row and, at
// the bottom, scrolled the terminal, garbling it.
func TestShellInASmallTerminal(t *testing.T) {
	s := startShellSized(t, 20, 5, "--root", shellRepo(t), "--no-autostart")
	s.waitPrompt(">")
	s.typeText("id\r")
	s.waitText("This is computer #0")
	s.typeText("label set a-label-longer-than-the-terminal\r")
	s.waitFor("the label's line cut at the edge", func(screen string) bool {
		return screen == "CraftOS 1.9\n> id\nThis is computer #0\n> label set a-label-\nComputer label set t"
	})
	s.typeText("\x13\x13")
	assert.Equal(t, ExitOK, s.exit(), s.stderr.String())
	assert.Equal(t, "fakecraft: this terminal is 20x5; the computer's screen needs 51x19\r\n", s.stderr.String())
}

// TestShellNeedsATerminal: stdin and stdout must be a terminal that understands ANSI
// escape sequences, else one line says so and names `fakecraft run`. stdout a file left the
// player typing blind; TERM=dumb filled the screen with escape sequences; stdin a pipe said
// `fakecraft: fakecraft shell needs a terminal on stdin (not a terminal: inappropriate ioctl
// for device)`.
func TestShellNeedsATerminal(t *testing.T) {
	root := shellRepo(t)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	master, slave := pollable(t, ptmx), pollable(t, tty)
	defer master.Close()
	defer slave.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "screen.txt"))
	require.NoError(t, err)
	defer file.Close()
	const instead = "; `fakecraft run PROGRAM` prints a transcript instead\n"
	for _, tc := range []struct {
		name    string
		in, out *os.File
		term    string
		want    string
	}{
		{"stdin a pipe", r, slave, "xterm-256color", "fakecraft: shell needs a terminal on stdin, not a pipe or a file" + instead},
		{"stdout a file", slave, file, "xterm-256color", "fakecraft: shell draws the computer's screen on stdout, which is not a terminal" + instead},
		{"TERM=dumb", slave, slave, "dumb", "fakecraft: shell needs a terminal that understands ANSI escape sequences, and TERM is dumb" + instead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TERM", tc.term)
			var errOut bytes.Buffer
			// The time limit ends a shell that started anyway.
			code := MainWithInput([]string{"shell", "--root", root, "--no-autostart", "--time-limit", "20s"}, tc.in, tc.out, &errOut)
			assert.Equal(t, ExitUsage, code)
			assert.Equal(t, tc.want, errOut.String())
		})
	}
	mode, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	require.NoError(t, err)
	assert.NotZero(t, mode.Lflag&unix.ECHO, "the terminal was left as it was")
	info, err := file.Stat()
	require.NoError(t, err)
	assert.Zero(t, info.Size(), "nothing drawn into the file")
}

// TestShellBareComputerReboots: a bare computer's own shell at the keyboard; `reboot`
// boots it again, its label and files kept, and the screen follows the new computer.
func TestShellBareComputerReboots(t *testing.T) {
	s := startShell(t, "--root", shellRepo(t), "--bare", "--dir", t.TempDir())
	s.waitPrompt(">")
	s.typeText("label set kitchen\r")
	s.waitLine(`Computer label set to "kitchen"`)
	s.typeText("reboot\r")
	s.waitFor("the rebooted computer's first screen", func(screen string) bool {
		return strings.TrimSpace(screen) == "CraftOS 1.9\n>"
	})
	s.typeText("id\r")
	s.waitLine(`This computer is labelled "kitchen"`)
	s.typeText("\x13\x13")
	assert.Equal(t, ExitOK, s.exit(), s.stderr.String())
}

// TestShellTabs: an advanced computer at the keyboard runs multishell, as CC's bios does.
// `fg` opens a second shell in a tab of its own and shows it, with the tab bar on the top
// row; `exit` there closes it and the first tab comes back as it was left. Clicking a
// title switches tabs.
func TestShellTabs(t *testing.T) {
	s := startShell(t, "--root", shellRepo(t), "--no-autostart")
	s.waitPrompt(">")
	s.typeText("fg\r")
	s.waitFor("the tab bar over a new shell", func(screen string) bool {
		rows := strings.Split(screen, "\n")
		return len(rows) >= 3 && rows[0] == " shell  shell" && rows[1] == "CraftOS 1.9" && rows[2] == ">"
	})
	// The tab on show is yellow on black, the other black on grey.
	assert.Equal(t, "38;5;185", s.screen.Foreground(9, 1), "the second tab's title in yellow")
	s.typeText("exit\r")
	s.waitFor("the first tab again, without the bar", func(screen string) bool {
		rows := strings.Split(screen, "\n")
		return len(rows) >= 3 && rows[0] == "CraftOS 1.9" && rows[1] == "> fg" && rows[2] == ">"
	})

	// bg opens a tab behind this one; a click on its title (xterm's mouse report) shows it,
	// a click on the first title comes back.
	s.typeText("bg\r")
	firstTab := func(screen string) bool {
		rows := strings.Split(screen, "\n")
		return len(rows) >= 5 && rows[0] == " shell  shell" && rows[2] == "> fg" && rows[3] == "> bg" && rows[4] == ">"
	}
	s.waitFor("the first tab under the bar", firstTab)
	s.typeText("\x1b[<0;10;1M\x1b[<0;10;1m")
	s.waitFor("the second tab", func(screen string) bool {
		rows := strings.Split(screen, "\n")
		return len(rows) >= 3 && rows[0] == " shell  shell" && rows[1] == "CraftOS 1.9" && rows[2] == ">"
	})
	s.typeText("\x1b[<0;2;1M\x1b[<0;2;1m")
	s.waitFor("the first tab again", firstTab)
	s.typeText("shutdown\r")
	s.waitText("Goodbye")
	assert.Equal(t, ExitOK, s.exit(), s.stderr.String())
}

// TestShellDropAtPrompt: a file dropped while the shell waits at its prompt is saved there
// (CC's shell runs import), and the prompt comes back with what was typed.
func TestShellDropAtPrompt(t *testing.T) {
	src := filepath.Join(t.TempDir(), "dropped.txt")
	require.NoError(t, os.WriteFile(src, []byte("from the host"), 0o644))
	dir := t.TempDir()
	s := startShell(t, "--root", shellRepo(t), "--no-autostart", "--dir", dir, "--drop", src)
	s.waitLine("Transferring dropped.txt")
	s.waitPrompt(">")
	s.typeText("cat dropped.txt\r")
	s.waitLine("from the host")
	s.typeText("\x13\x13")
	assert.Equal(t, ExitOK, s.exit(), s.stderr.String())
}

// TestShellLongLineScrollsSideways: a command typed right after `clear`, in the same read,
// longer than the prompt's row (52 characters after "> " on a 51-column screen) scrolls
// sideways as CC's read() does: its first 4 characters leave the row ("> ai.write…" for
// "set ai.write…", as a tester saw `ai write…` shown as `rite…`), yet every key reached the
// computer: the line runs whole.
func TestShellLongLineScrollsSideways(t *testing.T) {
	s := startShell(t, "--root", shellRepo(t), "--bare", "--dir", t.TempDir())
	s.waitPrompt(">")
	value := strings.Repeat("w", 39)
	line := "set ai.write " + value // 52 characters
	s.typeText("clear\r" + line)
	s.waitLine("> " + line[4:])
	s.typeText("\rlua\r")
	s.waitPrompt("lua>")
	s.typeText(`print(#settings.get("ai.write"))` + "\r")
	s.waitLine("39")
	s.typeText("exit()\r")
	s.waitPrompt(">")
	s.typeText("\x13\x13")
	assert.Equal(t, ExitOK, s.exit(), s.stderr.String())
}

// TestShellLooksAtAMonitorAndTouchesIt: at `fakecraft shell`, holding Ctrl-L shows the
// computer's monitor (named under it), a click there is a player's touch, so the program
// gets monitor_touch at the monitor's cell, and holding Ctrl-L again brings the computer's
// screen back, where the program printed it.
func TestShellLooksAtAMonitorAndTouchesIt(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{"touch.lua": `
local m = peripheral.wrap("top")
m.write("press here")
print(os.pullEvent("monitor_touch"))
`})
	s := startShell(t, "--bare", "--dir", dir, "--attach", "top=monitor:2:1")
	s.waitPrompt(">")
	s.typeText("touch\r")
	s.typeText("\x0c\x0c")
	s.waitText("computer 0's top, a monitor (18x5): a click touches it")
	s.waitLine("press here")
	s.typeText("\x1b[<2;4;3M\x1b[<2;4;3m")
	s.typeText("\x0c\x0c")
	s.waitLine("monitor_touch top 4 3") // print's tabs are blanks on the screen
	s.typeText("\x13\x13")
	assert.Equal(t, ExitOK, s.exit(), s.stderr.String())
}
