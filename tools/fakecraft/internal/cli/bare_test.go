package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// bare runs `fakecraft run --bare --dir dir [args...]` with typed as standard input.
func bare(t *testing.T, dir, typed string, args ...string) (int, string, string) {
	t.Helper()
	root := repo(t, map[string]string{"trapos/.keep": ""})
	var out, errOut bytes.Buffer
	all := append([]string{"run", "--root", root, "--bare", "--dir", dir, "--allow-private", "--time-scale", "20"}, args...)
	code := MainWithInput(all, strings.NewReader(typed), &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeDisk(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
}

// TestBareComputerIsAFreshCCComputer: no trapos/ files, no TrapOS path, a prompt per line
// typed, and a shutdown when the input ends.
func TestBareComputerIsAFreshCCComputer(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := bare(t, dir, "sandbox\n")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, "CraftOS 1.9\n> sandbox\nNo such program\n> \n", out)
}

// TestTranscriptShowsALongTypedLineWhole: a typed line as long as the row or longer, which
// CC's read() scrolls left as it reaches the right edge (a 49-byte `wget run …` after "> "
// lost its w: "> get run …"), is in the transcript whole, the first typed (PROGRAM) and the
// later ones alike, as it was run; a line just short of the edge is as it was, a long
// password read with "*" shows its stars, never the password, and a row a program prints
// after a short line's echo is as it was, though it is full and ends as the line did.
func TestTranscriptShowsALongTypedLineWhole(t *testing.T) {
	dir := t.TempDir()
	page := strings.Repeat("x", 50-len("sandbox")) + "sandbox"
	writeDisk(t, dir, map[string]string{
		"args.lua": `print(select("#", ...))`,
		"pw.lua":   `write("secret: ") print(#read("*"))`,
		"page.lua": `print("` + page + `")`,
	})
	exactly := "args run http://127.0.0.1:44444/trapos/install pw" // "> " and it: the 51 columns
	require.Len(t, exactly, 49)
	longer := "args" + strings.Repeat(" abcdefghij", 10)
	secret := strings.Repeat("s", 60)
	short := "args " + strings.Repeat("y", 43) // one column to spare: no scroll
	code, out, errOut := bare(t, dir, strings.Join([]string{longer, "pw", secret, short, "page sandbox"}, "\n")+"\n", strings.Fields(exactly)...)
	assert.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, "CraftOS 1.9\n"+
		"> "+exactly+"\n3\n"+
		"> "+longer+"\n10\n"+
		"> pw\nsecret: "+strings.Repeat("*", 51-len("secret: ")-1)+"\n60\n"+
		"> "+short+"\n1\n"+
		"> page sandbox\n"+page+"\n"+
		"> \n", out)
}

// TestBareComputerNeedsNoRepository: a bare computer mounts no trapos/ and starts no
// servers, so `run --bare` works outside the repository, with no --root.
func TestBareComputerNeedsNoRepository(t *testing.T) {
	t.Chdir(t.TempDir())
	var out, errOut bytes.Buffer
	code := MainWithInput([]string{"run", "--bare", "--dir", t.TempDir(), "id"}, strings.NewReader(""), &out, &errOut)
	assert.Equal(t, ExitOK, code, errOut.String())
	assert.Equal(t, "CraftOS 1.9\n> id\nThis is computer #0\n> \n", out.String())
}

// TestMotdOnlyWhenSet: CC turns motd.enable on for computers; fakecraft keeps it off so
// transcripts stay the same from run to run (TestBareComputerIsAFreshCCComputer shows no
// message), and --set motd.enable=true prints one at boot, between the banner and the first
// prompt, as CC's startup does.
func TestMotdOnlyWhenSet(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{"motd.txt": "the only message\n"})
	code, out, errOut := bare(t, dir, "", "--set", "motd.enable=true", "--set", "motd.path=/motd.txt", "id")
	assert.Equal(t, ExitOK, code, errOut)
	lines := strings.Split(out, "\n")
	require.GreaterOrEqual(t, len(lines), 3, out)
	assert.Equal(t, "CraftOS 1.9", lines[0])
	// On four days of the year motd greets instead of picking a line.
	assert.Contains(t, []string{"the only message", "Happy new year!", "Ed Balls", "OOoooOOOoooo! Spooky!", "Merry X-mas!"}, lines[1])
	assert.Equal(t, "> id", lines[2])
}

// TestStartupRules: /startup.lua, then every file of /startup/ by name, each to completion,
// all before the first prompt; directories in /startup/ are skipped.
func TestStartupRules(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{
		"startup.lua":         `print("one")`,
		"startup/b.lua":       `sleep(0.5) print("three")`,
		"startup/a.lua":       `print("two")`,
		"startup/sub/c.lua":   `print("never")`,
		"startup/.hidden.lua": `print("hidden too")`,
	})
	code, out, errOut := bare(t, dir, "")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, "CraftOS 1.9\none\nhidden too\ntwo\nthree\n> \n", out)

	// allow_startup off runs none of them.
	code, out, _ = bare(t, dir, "", "--set", "shell.allow_startup=false")
	assert.Equal(t, ExitOK, code)
	assert.Equal(t, "CraftOS 1.9\n> \n", out)
}

// TestDiskStartupReplacesTheComputers: a disk in a drive with startup programs of its own
// runs those instead of the computer's (shell.allow_disk_startup, on by default), even with
// shell.allow_startup off, as CC's does; a disk without any leaves the computer's. They
// never ran: fakecraft's ROM had no disk startup.
func TestDiskStartupReplacesTheComputers(t *testing.T) {
	dir, floppy, empty := t.TempDir(), t.TempDir(), t.TempDir()
	writeDisk(t, dir, map[string]string{"startup.lua": `print("computer")`})
	writeDisk(t, floppy, map[string]string{
		"startup.lua":   `print("disk", shell.getRunningProgram())`,
		"startup/a.lua": `print("disk a")`,
	})
	writeDisk(t, empty, map[string]string{"notes.txt": "x"})
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"disk", []string{"--attach", "left=drive:" + floppy}, "disk\tdisk/startup.lua\ndisk a\n"},
		{"first disk with startups", []string{"--attach", "right=drive:" + floppy, "--attach", "top=drive:" + empty}, "disk\tdisk2/startup.lua\ndisk a\n"},
		{"disk startup off", []string{"--attach", "left=drive:" + floppy, "--set", "shell.allow_disk_startup=false"}, "computer\n"},
		{"no startup on the disk", []string{"--attach", "left=drive:" + empty}, "computer\n"},
		{"computer's startup off", []string{"--attach", "left=drive:" + floppy, "--set", "shell.allow_startup=false"}, "disk\tdisk/startup.lua\ndisk a\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := bare(t, dir, "", tc.args...)
			assert.Equal(t, ExitOK, code, errOut)
			assert.Equal(t, "CraftOS 1.9\n"+tc.want+"> \n", out)
		})
	}
}

// TestSetProgramCoercesAndPersists: CC's set coerces true/false/nil/numbers, keeps only the
// first word, refuses a value of the wrong type, and saves to the computer's own .settings,
// which the next run of the same --dir loads.
func TestSetProgramCoercesAndPersists(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{"defs.lua": `settings.define("n", { type = "number", description = "A number" })`})
	code, out, errOut := bare(t, dir, "set a 12\nset b true\nset c hello world\nset d 1\nset d nil\ndefs\nset n word\nset n 7\n")
	assert.Equal(t, ExitOK, code, errOut)
	for _, want := range []string{
		`"a" set to 12`, `"b" set to true`, `"c" set to "hello"`, `"d" unset`,
		`"word" is not a valid number.`, `"n" set to 7`,
	} {
		assert.Contains(t, out, want+"\n")
	}
	code, out, _ = bare(t, dir, "set\nset c\n")
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, out, "\"a\" is 12\n\"b\" is true\n\"bios.strict_globals\" is false\n\"bios.use_multishell\" is true\n\"c\" is \"hello\"\n")
	// Typed key by key, "set c" may leave a space on its row: read() clears the completion
	// it showed by writing spaces over it.
	assert.Regexp(t, `> set c *\nc is "hello"\n`, out)
	assert.NotContains(t, out, `"d" is`)
}

// TestRebootKeepsTheDisk: reboot restarts the computer (startup runs again) with its files,
// settings and label; a later line is typed at the new prompt.
func TestRebootKeepsTheDisk(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{
		"startup.lua": `print("boot", os.getComputerLabel())`,
		"mark.lua":    `os.setComputerLabel("kept") local f = fs.open("/note", "w") f.write("x") f.close()`,
		"show.lua":    `print(fs.exists("/note"), settings.get("k"))`,
	})
	code, out, errOut := bare(t, dir, "mark\nset k v\nreboot\nshow\n")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "> reboot\nGoodbye\n")
	assert.Contains(t, out, "CraftOS 1.9\nboot\tkept\n> show\ntrue\tv\n")
	assert.Equal(t, 2, strings.Count(out, "CraftOS 1.9"))
}

// TestEmptyLabelIsALabel: `label set ""` labels the computer with the empty string, which CC
// keeps as a label (its OSAPI maps only nil to none) across a reboot, until `label clear`.
func TestEmptyLabelIsALabel(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{"startup.lua": `print("boot", select("#", os.getComputerLabel()))`})
	code, out, errOut := bare(t, dir, "label set \"\"\nid\nreboot\nlabel get\nlabel clear\nlabel get\n")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "> label set \"\"\nComputer label set to \"\"\n")
	assert.Contains(t, out, "This computer is labelled \"\"\n")
	assert.Contains(t, out, "boot\t1\n> label get\nComputer label is \"\"\n")
	assert.Contains(t, out, "> label clear\nComputer label cleared\n> label get\nNo Computer label\n")
}

// TestReadAnswersFromStandardInput: read() gets one typed line per call; read("*") echoes
// stars; a program the shell runs first comes from the command line.
func TestReadAnswersFromStandardInput(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{
		"ask.lua": `write("name? ") local n = read() write("pin? ") local p = read("*") print("hi " .. n .. " " .. #p)`,
	})
	code, out, errOut := bare(t, dir, "bob\n1234\n", "ask")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "> ask\nname? bob\npin? ****\nhi bob 4\n")
}

// TestReadAfterInputEndsInTrapOSMode: a program that waits for a line nobody will type ends
// the run with a failure that says so.
func TestReadAfterInputEndsInTrapOSMode(t *testing.T) {
	root := repo(t, map[string]string{"trapos/programs/ask.lua": `print("got " .. read())` + "\n" + `print("and " .. read())`})
	var out, errOut bytes.Buffer
	code := MainWithInput([]string{"run", "--root", root, "ask"}, strings.NewReader("one\n"), &out, &errOut)
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, out.String(), "got one\n")
	assert.Contains(t, errOut.String(), "standard input ended")
}

// TestRunRebootsAndReadsOn: a TrapOS computer whose standard input is piped boots again
// when it reboots (os.reboot), over the same disk and label, its autostart servers beside
// it, and the input's next lines are typed at its shell's prompt, as at a bare computer;
// the run ends, status 0, when it shuts down (here the input ended).
func TestRunRebootsAndReadsOn(t *testing.T) {
	root := repo(t, map[string]string{
		"trapos/servers/d.lua":     `print("daemon up") while true do os.pullEvent() end`,
		"packages/p/ccpm.json":     `{"name":"p","autostart":["servers/d.lua"]}`,
		"trapos/programs/mark.lua": `local f = fs.open("/note", "w") f.write("kept") f.close() print("rebooting") os.reboot()`,
	})
	var out, errOut bytes.Buffer
	code := MainWithInput([]string{"run", "--root", root, "--dir", t.TempDir(), "--label", "box", "mark"},
		strings.NewReader("cat /note\nid\n"), &out, &errOut)
	assert.Equal(t, ExitOK, code, errOut.String())
	assert.Contains(t, out.String(), "rebooting\n")
	assert.Equal(t, 2, strings.Count(out.String(), "daemon up\n"), out.String())
	assert.Contains(t, out.String(), "> cat /note\nkept")
	assert.Contains(t, out.String(), "> id\nThis is computer #0\nThis computer is labelled \"box\"\n")
}

// TestWget: CC's two forms. `wget URL [file]` saves (never over an existing file) and
// `wget run URL args` runs the body with args; a failed request prints "Failed.".
func TestWget(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/files/tool.lua":
			_, _ = w.Write([]byte("print(\"tool ran\", ...)\n\xff"))
		case "/run.lua":
			_, _ = w.Write([]byte(`print("ran with", ...)`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	code, out, errOut := bare(t, dir, strings.Join([]string{
		"wget " + srv.URL + "/files/tool.lua",
		"wget " + srv.URL + "/files/tool.lua",
		"wget " + srv.URL + "/files/tool.lua other",
		"wget run " + srv.URL + "/run.lua a b",
		"wget " + srv.URL + "/missing",
		"wget",
	}, "\n")+"\n")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "Success.\nDownloaded as tool.lua\n")
	assert.Contains(t, out, "File already exists\n")
	assert.Contains(t, out, "Downloaded as other\n")
	assert.Contains(t, out, "Success.\nran with\ta\tb\n")
	assert.Contains(t, out, "Failed.\n")
	assert.Contains(t, out, "Usage:\nwget <url> [filename]\nwget run <url>\n")
	got, err := os.ReadFile(filepath.Join(dir, "tool.lua"))
	require.NoError(t, err)
	assert.Equal(t, "print(\"tool ran\", ...)\n\xff", string(got), "saved byte for byte")
}

// TestABadWorldLeavesNoInputReader: a --world that cannot be set up ends the run before the
// computer boots; the reader typing the named program's line ("id") stops with it. It stayed
// blocked on a line no computer would take, for as long as fakecraft ran.
func TestABadWorldLeavesNoInputReader(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	file := filepath.Join(dir, "world.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"computers": [{"id": 7}, {"id": 7}]}`), 0o644))
	code, out, errOut := bare(t, dir, "", "--world", file, "--id", "7", "id")
	assert.Equal(t, ExitUsage, code, errOut)
	assert.Empty(t, out)
}

// TestRunTypesWhereverTheProgramReads: the next line is typed when read() waits, however
// the program's terminal is redirected: on a monitor (its blink is the monitor's, not the
// computer's screen's) and in a window on the monitor, as on the computer's own screen.
func TestRunTypesWhereverTheProgramReads(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{
		"onmon.lua": `local m = peripheral.wrap("top")
local old = term.redirect(m)
local line = read()
term.redirect(old)
print("monitor read " .. line)`,
		"onwin.lua": `local w = window.create(peripheral.wrap("top"), 1, 1, 10, 3)
local old = term.redirect(w)
local line = read()
term.redirect(old)
print("window read " .. line)`,
	})
	code, out, errOut := bare(t, dir, "onmon\nhello\nonwin\nthere\nmonitor top lua\n1+1\nexit()\nid\n", "--attach", "top=monitor:2:1")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "> onmon\nmonitor read hello\n")
	assert.Contains(t, out, "> onwin\nwindow read there\n")
	assert.Contains(t, out, "> monitor top lua\nRunning lua on monitor top\n> id\nThis is computer #0\n")
}

// TestRunTypesAsAKeyboard: run's lines are typed, so they follow CC's keyboard, not its
// paste rule: a no-break space and a soft hyphen are keys a keyboard types (chars 160 and
// 173), an emoji is two ? (Minecraft hands CC its two UTF-16 chars), a control types
// nothing, and a tab is the Tab key (read() takes it as no character). A line longer than the event queue loses nothing:
// its keys wait for room.
func TestRunTypesAsAKeyboard(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{
		"bytes.lua": `local line = read()
print((line:gsub(".", function(c) return string.byte(c) .. " " end)))`,
		"long.lua": `local line = read()
print(#line, line:sub(-3))`,
	})
	code, out, errOut := bare(t, dir, "bytes\na\u00a0b\u00adc\U0001F600d\te\x01f\nlong\n"+strings.Repeat("x", 600)+"end\n")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "\n97 160 98 173 99 63 63 100 101 102 \n")
	assert.Contains(t, out, "\n603\tend\n")
}

// TestRunTypesForCharEvents: a program that pulls only char events (os.pullEvent("char"))
// turns no blink on, and is typed the next line all the same, one char event a character;
// the Enter it does not take goes on to the shell's prompt, as a player's would. A program
// waiting for any key ("press any key") takes the line's first key.
func TestRunTypesForCharEvents(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{
		"chars.lua": `local got = ""
while #got < 3 do local _, c = os.pullEvent("char") got = got .. c end
print("chars " .. got)`,
		"anykey.lua": `print("key " .. select(2, os.pullEvent("key")))`,
	})
	code, out, errOut := bare(t, dir, "chars\nabc\nanykey\n\nid\n")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, "CraftOS 1.9\n> chars\nchars abc\n> \n> anykey\nkey 257\n> id\nThis is computer #0\n> \n", out)
}

// TestRunAnswersTextutilsPager: textutils.pagedPrint's "Press any key to continue" waits for
// a key as CC's does, so run types it the next input line, and the notice, erased at the
// key, is not in the transcript; the pager's unfiltered wait was typed nothing and the run
// ended at its time limit.
func TestRunAnswersTextutilsPager(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{
		"paged.lua": `local lines = {}
for i = 1, 25 do lines[i] = "line " .. i end
textutils.pagedPrint(table.concat(lines, "\n"))`,
	})
	code, out, errOut := bare(t, dir, "paged\n\nid\n")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "\nline 24\nline 25\n> id\nThis is computer #0\n")
	assert.NotContains(t, out, "Press any key")
	assert.NotContains(t, out, "s any key", "erased, and written over")
}

// TestRunTypesForTheReaderThatIsAlive: a coroutine left waiting for char events that the
// program dropped (garbage) is fed nothing: while the program waits for its timer no line is
// typed, and the next read() gets it. One the program keeps but never resumes again takes
// one line, unanswered, and then no more. One under parallel, beside a coroutine waiting for
// a timer, is fed; so is one waiting for char events after an empty line, which it cannot
// hear.
func TestRunTypesForTheReaderThatIsAlive(t *testing.T) {
	dir := t.TempDir()
	const waitAndRead = `
write("name? ")
print("got " .. read())
local timer = os.startTimer(1)
repeat local _, id = os.pullEvent("timer") until id == timer
print("timer")
write("again? ")
print("got " .. read())`
	writeDisk(t, dir, map[string]string{
		"dropped.lua": `coroutine.resume(coroutine.create(function() os.pullEvent("char") end))` + waitAndRead,
		"kept.lua":    `kept = coroutine.create(function() os.pullEvent("char") end) coroutine.resume(kept)` + waitAndRead,
		"both.lua": `parallel.waitForAll(function() print("char " .. select(2, os.pullEvent("char"))) end,
function() sleep(1) print("slept") end)`,
		"char.lua": `print("char " .. select(2, os.pullEvent("char")))`,
	})
	code, out, errOut := bare(t, dir, "dropped\nx\ny\nkept\nx\ny\nz\nboth\nc\nchar\n\nd\n")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, "CraftOS 1.9\n> dropped\nname? x\ngot x\ntimer\nagain? y\ngot y\n"+
		"> kept\nname? x\ngot x\ntimer\nagain? z\ngot z\n> both\nchar c\nslept\n> char\nchar d\n> \n> \n", out)
}
