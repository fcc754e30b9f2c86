package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit"
	"trap-sandbox/testkit/daemonfake"
)

// serveDisk serves the host API on a stand-in computer "7:" and returns its URL: the CLI's
// commands reach it through /requests, as they reach a real gateway.
func serveDisk(t *testing.T, d *daemonfake.Local) string {
	t.Helper()
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, hostapi.New(computer.New(d))).Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestListingAlignsSizesRightAndNamesLeft(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, writeListing(&out, []computer.Entry{
		{Name: "rom", IsDir: true},
		{Name: "startup.lua", Size: 1532},
		{Name: "a", Size: 7},
		{Name: "\u00e92.txt", Size: 0},
		{Name: "\u001b[2Jx", IsDir: true},
		{Name: "c1\u009b", Size: 1},
	}))
	assert.Equal(t, ""+
		"      rom/\n"+
		"1532  startup.lua\n"+
		"   7  a\n"+
		"   0  é2.txt\n"+
		"      \\x1b[2Jx/\n"+
		"   1  c1\\x9b\n", out.String(), "bytes a terminal would act on are shown as \\xNN, the form paths accept")
}

// TestWhatLsPrintsIsAcceptedBack: names a player typed with an accent, and names with control
// bytes, list in a form that cat, get and rm take back.
func TestWhatLsPrintsIsAcceptedBack(t *testing.T) {
	clearEnv(t)
	// DEL is a byte ls shows escaped and CC's fs keeps in a path (it drops those below 32).
	// A no-break space and a soft hyphen are shown escaped too: printed as a space and as
	// nothing, a player's second startup.lua looked like the first, and " x" typed back named
	// another file.
	d := daemonfake.NewLocal(map[string]string{"/d/\xe92.txt": "caf\xe9\n", "/d/a\x7fb": "esc", "/d/\xa0x": "nbsp", "/d/startup.lua\xad": "shy"})
	base := serveDisk(t, d)
	out, err := runClient(t, "ls", "--url", base, "7:", "/d")
	require.NoError(t, err)
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		names = append(names, strings.Fields(line)[1])
	}
	assert.ElementsMatch(t, []string{`a\x7fb`, "é2.txt", `\xa0x`, `startup.lua\xad`}, names)
	for shown, content := range map[string]string{"é2.txt": "caf\xe9\n", `a\x7fb`: "esc", `\xa0x`: "nbsp", `startup.lua\xad`: "shy"} {
		out, err = runClient(t, "cat", "--url", base, "--binary", "7:", "/d/"+shown)
		require.NoError(t, err)
		assert.Equal(t, content, out, "%s reads back as the file listed", shown)
	}
	out, err = runClient(t, "cat", "--url", base, "7:", "/d/é2.txt")
	require.NoError(t, err)
	assert.Equal(t, "café\n", out, "the player's é (byte E9) reads back as é")
}

// TestLsAndCatNameANameNoPathReaches: a file put on a computer's drive from outside CC may
// have a name CC's fs reads as another (cctext.NamesItself). ls listed a\x01b.txt with
// ab.txt's size, and cat of it printed ab.txt's bytes, neither saying so: both now say which
// path such a name reads and that no program on the computer opens it, as get -r does.
func TestLsAndCatNameANameNoPathReaches(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/d/ab.txt": "plain"})
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, hostapi.New(computer.New(daemonfake.OutsideNames{Local: d}))).Handler())
	t.Cleanup(srv.Close)

	out, errOut, err := runWith(t, "", "ls", "--url", srv.URL, "7:", "/d")
	require.NoError(t, err)
	assert.Contains(t, out, "5  a\\x01b.txt\n", "the listing is as it was")
	reads := `: a name no path on the computer reaches (CC's fs drops control characters and "*:<>?| from a path and trims the spaces around a name), so its path reads `
	fix := ", another file or none (what ls shows of it is that path's): no program on the computer can open this one (rename it on the drive, outside CC)\n"
	assert.Equal(t, ""+
		"trap-sandbox: /d/a\\x01b.txt"+reads+"/d/ab.txt"+fix+
		"trap-sandbox: /d/ ab.txt"+reads+"/d/ab.txt"+fix+
		"trap-sandbox: /d/ab?.txt"+reads+"/d/ab.txt"+fix+
		"trap-sandbox: /d/..."+reads+"/d"+fix+
		"trap-sandbox: /d/sub\\x01"+reads+"/d/sub"+fix, errOut)

	out, errOut, err = runWith(t, "", "cat", "--url", srv.URL, "7:", `/d/a\x01b.txt`)
	require.NoError(t, err)
	assert.Equal(t, "plain", out)
	assert.Equal(t, `trap-sandbox: /d/a\x01b.txt reads /d/ab.txt (CC's fs drops control characters and "*:<>?| from a path and trims the spaces around a name): `+
		"this is that file's content; a file the computer lists as a\\x01b.txt, put on its drive from outside CC, is another: no program on the computer can open this one (rename it on the drive, outside CC)\n", errOut)
	_, errOut, err = runWith(t, "", "cat", "--url", srv.URL, "7:", "/d/ab.txt")
	require.NoError(t, err)
	assert.Empty(t, errOut, "a path whose names name themselves reads what it names")
}

func TestPutAndGetWorkAsCpDoes(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/programs/keep": "k"})
	base := serveDisk(t, d)
	dir := t.TempDir()
	local := filepath.Join(dir, "door.lua")
	require.NoError(t, os.WriteFile(local, []byte("print('é — ok')\n"), 0o644))

	out, errOut, err := runWith(t, "", "put", "--url", base, "7:", local, "/programs")
	require.NoError(t, err)
	assert.Equal(t, local+" -> 7: /programs/door.lua (16 bytes)\n", out, "into the directory, and the colon is not doubled")
	assert.Contains(t, errOut, `"—" (U+2014) at content 1:10`, "the replaced character is named on stderr")
	assert.Contains(t, errOut, `in a Lua string a Lua escape such as "\226\128\148" writes its bytes`,
		"door.lua put into a directory is Lua code, whose strings take Lua escapes")
	got, _ := d.File("/programs/door.lua")
	assert.Equal(t, "print('\xe9 ? ok')\n", string(got), "text is written as CC's bytes")
	// The name the file is written under says what it is: notes.txt put into a directory is
	// text, whose bytes a Lua escape would not write, though the directory's name, with no
	// extension, is a program's.
	notes := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("cold ☃\n"), 0o644))
	_, errOut, err = runWith(t, "", "put", "--url", base, "7:", notes, "/programs")
	require.NoError(t, err)
	assert.Contains(t, errOut, "to store its UTF-8 bytes (E2 98 83), send the file as bytes")
	assert.NotContains(t, errOut, "Lua escape", "notes.txt is not Lua code")
	// The name it is written under, not the local one: notes.txt put as /programs/snow is a
	// program (no extension), and put into the /startup directory a file CC runs at boot.
	d.MakeDir("/startup")
	for _, c := range []struct{ remote, written string }{{"/programs/snow", "/programs/snow"}, {"/startup", "/startup/notes.txt"}} {
		out, errOut, err = runWith(t, "", "put", "--url", base, "7:", notes, c.remote)
		require.NoError(t, err)
		assert.Equal(t, notes+" -> 7: "+c.written+" (7 bytes)\n", out)
		assert.Contains(t, errOut, `in a Lua string a Lua escape such as "\226\152\131" writes its bytes`, "%s is Lua code", c.written)
	}

	back := t.TempDir()
	out, err = runClient(t, "get", "--url", base, "7:", "/programs/door.lua", back)
	require.NoError(t, err)
	assert.Equal(t, "7: /programs/door.lua -> "+filepath.Join(back, "door.lua")+" (16 bytes)\n", out)
	text, err := os.ReadFile(filepath.Join(back, "door.lua"))
	require.NoError(t, err)
	assert.Equal(t, "print('é ? ok')\n", string(text), "and reads back as UTF-8")

	missing := filepath.Join(back, "out") + "/"
	_, err = runClient(t, "get", "--url", base, "7:", "/programs/door.lua", missing)
	assert.EqualError(t, err, "get: the local directory "+missing+" does not exist: create it (mkdir -p "+missing+") or name the file to write")
	assert.NoDirExists(t, missing, "nothing is created")
	asked := 0
	d.Before = func(context.Context, int, string) error { asked++; return nil }
	_, err = runClient(t, "get", "--url", base, "7:", "/programs/door.lua", filepath.Join(back, "out", "door.lua"))
	assert.EqualError(t, err, "get: the local directory "+filepath.Join(back, "out")+" does not exist: create it (mkdir -p "+filepath.Join(back, "out")+") or name the file to write",
		"it said 'write …: no such file or directory', once the file was read")
	assert.Zero(t, asked, "refused before the computer is asked for the file")
	d.Before = nil

	raw := []byte{0xc3, 0xa9, 0x00, 0xff}
	require.NoError(t, os.WriteFile(local, raw, 0o644))
	_, _, err = runWith(t, "", "put", "--url", base, "--binary", "7:", local, "/raw.bin")
	require.NoError(t, err)
	got, _ = d.File("/raw.bin")
	assert.Equal(t, raw, got, "--binary moves the bytes unchanged")
	out, errOut, err = runWith(t, "", "get", "--url", base, "--binary", "7:", "/raw.bin", "-")
	require.NoError(t, err)
	assert.Equal(t, raw, []byte(out))
	assert.Empty(t, errOut)
	// As text, a file with control bytes changes: one warning, naming --binary, as put gives.
	_, errOut, err = runWith(t, "", "get", "--url", base, "7:", "/raw.bin", filepath.Join(back, "raw.txt"))
	require.NoError(t, err)
	assert.Equal(t, "trap-sandbox: warning: /raw.bin holds control bytes (it looks binary) and was written as text, which changed its bytes; "+
		"get --binary copies them unchanged\n", errOut)
	_, errOut, err = runWith(t, "", "get", "--url", base, "7:", "/programs/door.lua", "-")
	require.NoError(t, err)
	assert.Empty(t, errOut, "a text file (é is not a control byte) gets none")

	binary := bytes.Repeat([]byte("\xe2\x80\x94\xff"), 500) // 500 em dashes among bytes that are not UTF-8
	require.NoError(t, os.WriteFile(local, binary, 0o644))
	_, errOut, err = runWith(t, "", "put", "--url", base, "7:", local, "/bin.txt")
	require.NoError(t, err)
	assert.Equal(t, "trap-sandbox: warning: "+local+` is not UTF-8 text (it looks binary) and was sent as text, which changed its bytes `+
		`(500 characters CC cannot hold became "?"); put --binary sends them unchanged`+"\n", errOut, "one line, with the fix")

	// A Latin-1 text file is not UTF-8 either, but each of its bytes stands for itself: it
	// arrives as it is, and nothing warns that it changed.
	latin1 := []byte("k\xfcche \xe9t\xe9\n")
	require.NoError(t, os.WriteFile(local, latin1, 0o644))
	_, errOut, err = runWith(t, "", "put", "--url", base, "7:", local, "/latin1.txt")
	require.NoError(t, err)
	assert.Empty(t, errOut)
	got, _ = d.File("/latin1.txt")
	assert.Equal(t, latin1, got)

	d.Before = func(_ context.Context, _ int, typ string) error {
		if typ == protocol.TypeFSWrite {
			return &protocol.Error{Code: protocol.CodeForbidden, Message: "the owner allows no writes", ByComputer: true}
		}
		return nil
	}
	_, errOut, err = runWith(t, "", "put", "--url", base, "7:", local, "/refused.txt")
	require.Error(t, err)
	assert.NotContains(t, errOut, "warning", "a write the computer refused changed no bytes: no warning that it did")
	d.Before = nil

	_, _, err = runWith(t, "x", "put", "--url", base, "7:", "-", "/programs/")
	assert.ErrorContains(t, err, "name the file to write from stdin")
}

// TestGetIntoADirectoryNamesTheFileThePathReaches: a path ending in "." reached the file
// before it on the computer (CC drops "."), but the local file was named after the ".", the
// directory itself, and get failed with "write DIR: is a directory". So did "/door.lua/?" name
// the local file "?" (CC drops '?' from paths), and "/door.lua " kept its space. get prints
// the path the computer read, as put prints the one it wrote.
func TestGetIntoADirectoryNamesTheFileThePathReaches(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/door.lua": "print('door')\n"})
	base := serveDisk(t, d)
	for _, remote := range []string{"/door.lua/.", "/door.lua/", "/x/../door.lua", "/door.lua/?", "/door.lua ", `/do"or?.lua`, "/x/..?/door.lua"} {
		dir := t.TempDir()
		out, err := runClient(t, "get", "--url", base, "7:", remote, dir)
		require.NoError(t, err, remote)
		assert.Equal(t, "7: /door.lua -> "+filepath.Join(dir, "door.lua")+" (14 bytes)\n", out, "%s: the path the computer read", remote)
		assert.FileExists(t, filepath.Join(dir, "door.lua"), remote)
	}
}

// doorToPut serves a computer whose disk holds files, and makes the local file door.lua
// ("door", 4 bytes) to put on it: the computer, the gateway's URL and the file's path.
func doorToPut(t *testing.T, files map[string]string) (d *daemonfake.Local, base, local string) {
	t.Helper()
	clearEnv(t)
	d = daemonfake.NewLocal(files)
	base = serveDisk(t, d)
	local = filepath.Join(t.TempDir(), "door.lua")
	require.NoError(t, os.WriteFile(local, []byte("door"), 0o644))
	return d, base, local
}

// TestPutReadsAPathEndingLikeADirectoryByTheFileRoutesRule: a remote path ending in "." or
// ".." names a directory whatever is there, by the rule the file routes refuse to write it by
// (cctext.DirectoryEnding); put writes into it under the local name, as it does for "/new/",
// where it refused "/new/." and wrote "/programs/sub/.." into it only because it listed.
func TestPutReadsAPathEndingLikeADirectoryByTheFileRoutesRule(t *testing.T) {
	d, base, local := doorToPut(t, map[string]string{"/programs/sub/keep": "k"})
	for _, tc := range []struct{ remote, sent, file string }{
		{"/new/", "/new/door.lua", "/new/door.lua"},
		{"/new2/.", "/new2/./door.lua", "/new2/door.lua"},
		{"/programs/sub/..", "/programs/sub/../door.lua", "/programs/door.lua"},
		// CC drops '?' from paths: "/new3/?" is the directory "/new3/", "/programs/sub/..?" climbs.
		{"/new3/?", "/new3/?/door.lua", "/new3/door.lua"},
		{"/programs/sub/..?", "/programs/sub/..?/door.lua", "/programs/door.lua"},
	} {
		out, _, err := runWith(t, "", "put", "--url", base, "7:", local, tc.remote)
		require.NoError(t, err, tc.remote)
		assert.Equal(t, local+" -> 7: "+tc.file+" (4 bytes)\n", out, "%s: the path the file is at", tc.remote)
		got, ok := d.File(tc.file)
		assert.True(t, ok, "%s: %s is written", tc.remote, tc.file)
		assert.Equal(t, "door", string(got), tc.remote)
	}
}

// TestPutSaysThePathTheComputerStored: put printed the path as typed, "/we:ird*name?.lua",
// where the computer stored "/weirdname.lua" (CC drops "*:<>?| from names and trims them), so
// the path printed found no file; it prints the path the file is at.
func TestPutSaysThePathTheComputerStored(t *testing.T) {
	d, base, local := doorToPut(t, map[string]string{"/programs/keep": "k"})
	for remote, stored := range map[string]string{
		"/we:ird*name?.lua":     "/weirdname.lua",
		"/trail .lua  ":         "/trail .lua",
		"programs/./x/../k.lua": "/programs/k.lua",
		"/küche.lua":            "/küche.lua",
	} {
		out, _, err := runWith(t, "", "put", "--url", base, "7:", local, remote)
		require.NoError(t, err, remote)
		assert.Equal(t, local+" -> 7: "+stored+" (4 bytes)\n", out, remote)
		cc, err := cctext.PathToCC(stored)
		require.NoError(t, err)
		_, ok := d.File(cc)
		assert.True(t, ok, "%s: %s is written", remote, stored)
	}
}

func TestErrorsShowControlBytesEscaped(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.Before = func(_ context.Context, _ int, typ string) error {
		if typ == protocol.TypeFSRead {
			return &protocol.Error{Code: protocol.CodeFSError, Message: "/\u001b]0;pwned\u0007: No such file", ByComputer: true}
		}
		return nil
	}
	base := serveDisk(t, d)
	_, err := runClient(t, "cat", "--url", base, "7:", "/x")
	assert.EqualError(t, err, `computer 7: cat /x: the computer answered fs_error: /\x1b]0;pwned\x07: No such file`)
}

// TestAComputersMessageNamesAPathAsLsShowsIt: a computer's fs_error names the path it was
// asked for in its own words; a no-break space or a soft hyphen in it is shown as ls shows
// it (\xa0, \xad), where it printed as a space or as nothing and named another file than the
// one ls lists, and so is the path the failure's command names, whichever form was typed.
func TestAComputersMessageNamesAPathAsLsShowsIt(t *testing.T) {
	clearEnv(t)
	base := serveDisk(t, daemonfake.NewLocal(map[string]string{"/a\xa0b": "x", "/start\xadup": "y"}))
	out, err := runClient(t, "ls", "--url", base, "7:", "/")
	require.NoError(t, err)
	assert.Equal(t, "1  a\\xa0b\n1  start\\xadup\n", out)
	for typed, shown := range map[string]string{`/a\xa0c`: `/a\xa0c`, "/a\u00a0c": `/a\xa0c`, "/start\u00adu": `/start\xadu`} {
		_, err = runClient(t, "cat", "--url", base, "7:", typed)
		assert.EqualError(t, err, "computer 7: cat "+shown+": the computer answered fs_error: "+shown+": No such file", "%q", typed)
	}
}

// TestLocalNamesShowControlBytesEscaped: get into a directory names the local file after the
// computer's, so a name holding an escape sequence ("e\x9b31mred", as ls shows it: the C1
// byte 9B is a terminal's ESC [, and CC keeps it in paths, unlike bytes below 32) was printed
// raw and coloured the operator's terminal; put printed its local name raw too.
func TestLocalNamesShowControlBytesEscaped(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/e\x9b31mred": "x"})
	base := serveDisk(t, d)
	dir := t.TempDir()
	out, err := runClient(t, "get", "--url", base, "7:", `/e\x9b31mred`, dir)
	require.NoError(t, err)
	assert.Equal(t, `7: /e\x9b31mred -> `+filepath.Join(dir, `e\x9b31mred`)+" (1 byte)\n", out)
	assert.FileExists(t, filepath.Join(dir, "e\u009b31mred"), "the file is named as on the computer, as cp would")

	local := filepath.Join(dir, "e\u009b31mred")
	out, _, err = runWith(t, "", "put", "--url", base, "7:", local, "/copy")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, `e\x9b31mred`)+" -> 7: /copy (1 byte)\n", out)
	_, err = runClient(t, "put", "--url", base, "7:", local+"\x9b", "/copy")
	assert.EqualError(t, err, "put: open "+filepath.Join(dir, `e\x9b31mred\x9b`)+": no such file or directory")
	_, _, err = runWith(t, strings.Repeat("x", maxFileBytes+1), "put", "--url", base, "7:", "-", "/big")
	assert.EqualError(t, err, "put: stdin holds more than 16777216 bytes (16 MiB), the most put moves: send a smaller file", "not \"- holds\"")
}

// TestAFailedChunkNamesTheComputerFirst: a chunk that raised is named as every CLI failure is,
// the traposId first, so an unlabelled computer's colon is not doubled ("on 7:: lua:1: …").
func TestAFailedChunkNamesTheComputerFirst(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.Exec = func(string, map[string]any) (any, *daemonfake.Error) {
		return map[string]any{"returns": []any{}, "output": "", "error": "lua:1: attempt to call nil"}, nil
	}
	base := serveDisk(t, d)
	_, _, err := runWith(t, "", "exec", "--url", base, "7:", "nope()")
	assert.EqualError(t, err, "computer 7: exec: the chunk failed: lua:1: attempt to call nil")
}

func TestAbandonedRunNamesTheTimeoutFlag(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	var sent map[string]any
	d.Exec = func(typ string, p map[string]any) (any, *daemonfake.Error) {
		sent = p
		return nil, &daemonfake.Error{Code: string(protocol.CodeTimeout), Message: "it ran past its timeout of 8000 ms and was abandoned"}
	}
	base := serveDisk(t, d)
	_, errOut, err := runWith(t, "", "exec", "--url", base, "7:", "print('é—')")
	assert.EqualError(t, err, "computer 7: exec: the computer answered timeout: the run was stopped on the computer at its limit of 8000 ms (this call's timeout of 10000 ms less 2000 ms, so that its answer comes within the call): "+
		"it ran past its timeout of 8000 ms and was abandoned (--timeout gives it longer, at most 60s; "+
		"code that waits for input or never ends (a loop, a server) is stopped whatever time it is given: "+
		"put it in a file (put) and run that on the computer's screen, where it runs on and takes what you type: trap-sandbox screen --url "+base+" 7: in a terminal, "+
		`or type on it with trap-sandbox request --url `+base+` 7: screen.input '{"events":[{"type":"char","text":"door\n"}]}')`)
	assert.Equal(t, "print('é?')", sent["code"], "é is sent as the byte E9, — as ?")
	assert.Equal(t, float64(8000), sent["timeoutMs"], "the computer stops the run 2 s before the call's 10 s")
	assert.Contains(t, errOut, "U+2014")

	// A run that showed a screen: the fix on a line of its own, not on the screen's last row,
	// where it read as part of the editor's status bar; the editor's blank rows between its
	// text and its status bar empty lines, not lines of two spaces.
	d.Exec = func(string, map[string]any) (any, *daemonfake.Error) {
		return nil, &daemonfake.Error{Code: string(protocol.CodeTimeout), Message: "it ran past its timeout of 8000 ms and was abandoned (a job gets no keyboard or mouse input); its screen showed:\nprint(1)\n\n\nPress Ctrl to access menu                      Ln 1"}
	}
	_, _, err = runWith(t, "", "run", "--url", base, "7:", "edit /door.lua")
	assert.EqualError(t, err, "computer 7: run: the computer answered timeout: the run was stopped on the computer at its limit of 8000 ms (this call's timeout of 10000 ms less 2000 ms, so that its answer comes within the call): "+
		"it ran past its timeout of 8000 ms and was abandoned (a job gets no keyboard or mouse input); its screen showed:\n"+
		"  print(1)\n\n\n  Press Ctrl to access menu                      Ln 1\n(--timeout gives it longer, at most 60s; "+
		"a program that waits for input or never ends (a loop, a server) is stopped whatever time it is given: "+
		"start it on the computer's screen, where it runs on and takes what you type: trap-sandbox screen --url "+base+" 7: in a terminal, "+
		`or type on it with trap-sandbox request --url `+base+` 7: screen.input '{"events":[{"type":"char","text":"edit /door.lua\n"}]}')`)

	// A run given the most time already is told more is no fix: told "--timeout gives it
	// longer, at most 60s" after --timeout 60s, the operator ran it again as it was.
	_, _, err = runWith(t, "", "run", "--url", base, "7:", "build", "--timeout", "60s")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "\n(--timeout was 60s already, the most a call may take; a program that waits for input or never ends")
	assert.NotContains(t, err.Error(), "gives it longer")
	_, _, err = runWith(t, "", "exec", "--url", base, "7:", "sleep(70)", "--timeout", "1m")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(--timeout was 60s already, the most a call may take; code that waits for input or never ends")
}

// TestATransferThatHadTheMostTimeIsNotToldToTakeLonger: cat, get and put take 60 s by default,
// the most a call may take, and every command that ran out at --timeout 60s is told so, where
// "--timeout gives it longer, at most 60s" had the operator run it again as it was.
func TestATransferThatHadTheMostTimeIsNotToldToTakeLonger(t *testing.T) {
	clearEnv(t)
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		server.WriteError(w, http.StatusGatewayTimeout, protocol.CodeTimeout, "the computer did not answer in time")
	}))
	defer gw.Close()
	local := filepath.Join(t.TempDir(), "door.lua")
	require.NoError(t, os.WriteFile(local, []byte("print(1)"), 0o600))
	for _, args := range [][]string{
		{"cat", "7:kitchen", "/door.lua"},
		{"get", "7:kitchen", "/door.lua", filepath.Join(t.TempDir(), "got.lua")},
		{"put", "7:kitchen", local, "/door.lua"},
		{"ls", "7:kitchen", "/", "--timeout", "60s"},
		{"rm", "7:kitchen", "/door.lua", "--timeout", "1m"},
	} {
		_, err := runClient(t, append(args, "--url", gw.URL)...)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), "the computer did not answer in time (--timeout was 60s already, the most a call may take)", args)
	}
	_, err := runClient(t, "ls", "7:kitchen", "/", "--url", gw.URL)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the computer did not answer in time (--timeout gives it longer, at most 60s)", "ls takes 10s by default")
}

// TestARawRequestsRunNamesItsPayloadsTimeout: request sends a lua.exec or shell.run payload as
// given, so the computer stops the run at the payload's timeoutMs (5000 ms when it has none),
// whatever --timeout is; its timeout answer names that field as the fix. It said "--timeout
// gives it longer", and --timeout 60s stopped the run at 5000 ms all the same.
func TestARawRequestsRunNamesItsPayloadsTimeout(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.Exec = func(string, map[string]any) (any, *daemonfake.Error) {
		return nil, &daemonfake.Error{Code: string(protocol.CodeTimeout), Message: "it ran past its default timeout of 5000 ms (the request's payload gave no timeoutMs; it takes 1 to 60000) and was abandoned"}
	}
	base := serveDisk(t, d)
	_, _, err := runWith(t, "", "request", "--url", base, "7:", "lua.exec", `{"code":"sleep(7)"}`, "--timeout", "60s")
	assert.EqualError(t, err, "computer 7: request lua.exec: the computer answered timeout: it ran past its default timeout of 5000 ms (the request's payload gave no timeoutMs; it takes 1 to 60000) and was abandoned"+
		" (the payload's timeoutMs gives the run longer, at most 60000, and --timeout the whole call, at most 60s: give it more than timeoutMs)")
}

// TestAFailedRunSaysSoAsEveryCommandsError: a program that failed ended with "\"err\" failed on
// 5:", which read as cut off (an unlabelled traposId ends in a colon); it is worded as every
// command's error, the computer first.
func TestAFailedRunSaysSoAsEveryCommandsError(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.Exec = func(string, map[string]any) (any, *daemonfake.Error) {
		return map[string]any{"success": false, "output": "No such program\n"}, nil
	}
	base := serveDisk(t, d)
	out, _, err := runWith(t, "", "run", "--url", base, "7:", "err")
	assert.EqualError(t, err, `computer 7: run: "err" failed`)
	assert.Equal(t, "No such program\n", out)
}

// TestCCsErrorDisplayPrintsAsTheREADMESays: CC's error display draws its bar with the byte
// 0x95 and its mark with 0x83, C1 controls as the text rule reads them (byte N is U+00NN):
// run prints them as \xNN, as README.md shows, and exec's return values as JSON escapes.
func TestCCsErrorDisplayPrintsAsTheREADMESays(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.Exec = func(typ string, _ map[string]any) (any, *daemonfake.Error) {
		if typ == protocol.TypeLuaExec {
			return map[string]any{"output": "", "returns": []any{"\u0095"}}, nil
		}
		return map[string]any{"success": false, "output": "/bad.lua:2: attempt to index local 'x' (a nil\nvalue)\n" +
			"\u0095Line 2\n\u0095print(x.y)\n\u0095       \u0083\n"}, nil
	}
	base := serveDisk(t, d)
	out, _, err := runWith(t, "", "run", "--url", base, "7:", "bad")
	assert.EqualError(t, err, `computer 7: run: "bad" failed`)
	assert.Equal(t, "/bad.lua:2: attempt to index local 'x' (a nil\nvalue)\n\\x95Line 2\n\\x95print(x.y)\n\\x95       \\x83\n", out)
	out, _, err = runWith(t, "", "exec", "--url", base, "7:", `return "\149"`)
	require.NoError(t, err)
	assert.Equal(t, `"\u0095"`+"\n", out)
}

// TestAMessageShowingAScreenIsIndented: the screen's rows under an error line are indented,
// but for a blank row, which stays an empty line: it was a line of two spaces.
func TestAMessageShowingAScreenIsIndented(t *testing.T) {
	assert.Equal(t, "timeout; its screen showed:\n  name?\n\n  \\x1b[2Jrow 3",
		showMessage("timeout; its screen showed:\nname?\n\n\x1b[2Jrow 3"))
	assert.Equal(t, "one line", showMessage("one line"))
}

// TestJSONShowsTextAsTyped: a computer's serializer escapes every byte above 0x7F; exec's
// returns and request's payload print the text ("café"), not "caf\u00E9", and keep control
// characters escaped.
func TestJSONShowsTextAsTyped(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.Exec = func(typ string, p map[string]any) (any, *daemonfake.Error) {
		if typ == protocol.TypeLuaExec {
			return map[string]any{"returns": []any{json.RawMessage(`"caf\u00E9"`), json.RawMessage(`{"a\u00E9":"\u0007"}`),
				json.RawMessage(`"\u009B[2J\u007F\u0080\u00A0"`)}, "output": ""}, nil
		}
		if typ == "door.c1" {
			return json.RawMessage(`{"label":"\u009B[2J"}`), nil
		}
		return json.RawMessage(`{"label":"caf\u00E9","n":1}`), nil
	}
	base := serveDisk(t, d)
	out, err := runClient(t, "exec", "--url", base, "7:", "return 1")
	require.NoError(t, err)
	assert.Equal(t, "\"café\"\n{\"aé\":\"\\u0007\"}\n\"\\u009b[2J\\u007f\\u0080\u00a0\"\n", out, "C1 and DEL escaped as JSON, not as \\x9b")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		assert.True(t, json.Valid([]byte(line)), "each return is a line of JSON: %s", line)
	}
	out, err = runClient(t, "request", "--url", base, "7:", "door.label")
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"label\": \"café\",\n  \"n\": 1\n}\n", out)
	assert.Equal(t, `["x\"\\é"]`, readableJSON([]byte(`["x\"\\\u00e9"]`)), "escaped quotes and backslashes end no string")
	assert.Equal(t, `"open`, readableJSON([]byte(`"open`)), "not JSON: unchanged")
	assert.Equal(t, `["0.9\u202eX"]`, readableJSON([]byte(`["0.9\u202eX"]`)), "a bidirectional control stays escaped, as cctext.Show shows it")
	out, err = runClient(t, "request", "--url", base, "7:", "door.c1")
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"label\": \"\\u009b[2J\"\n}\n", out, "request prints JSON")
}

// A computer's error code is a short word; one that is not (a hostile computer's 3 000 bytes)
// is cut in the one line the operator reads, as the gateway's log cuts a computer's strings.
func TestALongErrorCodeIsCut(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.Before = func(_ context.Context, _ int, typ string) error {
		if typ == protocol.TypeFSRead {
			return &protocol.Error{Code: protocol.Code("\u001b[2J" + strings.Repeat("E", 3000)), Message: "gone", ByComputer: true}
		}
		return nil
	}
	base := serveDisk(t, d)
	_, err := runClient(t, "cat", "--url", base, "7:", "/x")
	assert.EqualError(t, err, `computer 7: cat /x: the computer answered \x1b[2J`+strings.Repeat("E", 60)+`…(cut, 3004 bytes): gone`)
}

// TestAnUnknownPowerOffIsShownSafely: a run's powerOff is the computer's word; one the client
// does not know (a hostile computer's escape sequence, 3 000 bytes) is escaped and cut in the
// line on the operator's terminal, as the computer's other strings are.
func TestAnUnknownPowerOffIsShownSafely(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.Exec = func(typ string, _ map[string]any) (any, *daemonfake.Error) {
		return map[string]any{"returns": []any{}, "success": true, "output": "", "powerOff": "\u001b[2J" + strings.Repeat("E", 3000)}, nil
	}
	base := serveDisk(t, d)
	for _, args := range [][]string{{"exec", "--url", base, "7:", "os.shutdown()"}, {"run", "--url", base, "7:", "shutdown"}} {
		_, errOut, err := runWith(t, "", args...)
		require.NoError(t, err, args[0])
		assert.Equal(t, "trap-sandbox: computer 7: is turning off (\\x1b[2J"+strings.Repeat("E", 60)+"…(cut, 3004 bytes))\n", errOut, args[0])
	}
}

// TestACommandNamesAComputerTypedInItsShownFormSo: a computer typed as the list shows it
// (7:kitchen\x20, the label's trailing space) is named so in the lines the command words
// itself: a run that rebooted it said "computer 7:kitchen\x5cx20 is rebooting", the typed
// form shown again, which names another computer, and so did a read it left midway.
func TestACommandNamesAComputerTypedInItsShownFormSo(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/big.txt": strings.Repeat("x", 3*computer.ChunkBytes)})
	d.Label = "kitchen "
	d.List[0].TraposID = d.TraposID()
	d.Exec = func(typ string, _ map[string]any) (any, *daemonfake.Error) {
		return map[string]any{"returns": []any{}, "success": true, "output": "Goodbye\n", "powerOff": computer.PowerOffReboot}, nil
	}
	d.After = func(_ context.Context, step int, typ string) error {
		if typ == protocol.TypeFSRead && step > 1 {
			return computer.LeftBeforeAnswer(d.TraposID(), false)
		}
		return nil
	}
	base := serveDisk(t, d)
	for _, args := range [][]string{{"exec", "--url", base, `7:kitchen\x20`, "os.reboot()"}, {"run", "--url", base, `7:kitchen\x20`, "reboot"}} {
		_, errOut, err := runWith(t, "", args...)
		require.NoError(t, err, args[0])
		assert.Equal(t, `trap-sandbox: computer 7:kitchen\x20 is rebooting: the code called os.reboot(); it connects again by itself within seconds`+"\n", errOut, args[0])
	}
	_, _, err := runWith(t, "", "cat", "--url", base, `7:kitchen\x20`, "/big.txt")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `computer 7:kitchen\x20 cat /big.txt: the gateway answered not_connected: the computer disconnected during the read of /big.txt`)
}

// TestAReadWhoseComputerWentSaysToAskAgain: a read command (ls, cat, get, info, ping, screen
// --once, a request of a read's type) whose computer went away, or was replaced by a newer
// socket, before it answered says that a read changes nothing and to ask again once it is
// back, with the CLI's way to see it back: it said the gateway's "it may have done what it was
// asked all the same: check before you ask again", for a request that may have changed
// something, and there was nothing to check. A run keeps the gateway's words: it may have run.
func TestAReadWhoseComputerWentSaysToAskAgain(t *testing.T) {
	clearEnv(t)
	const (
		read    = "; a read changes nothing: ask again once it is back (trap-sandbox computers lists it then)"
		gone    = "the gateway answered not_connected: the computer disconnected before it answered" + read
		readGot = "the gateway answered not_connected: the computer disconnected during the read of /door.lua: read it again once it is back (trap-sandbox computers lists it then)"
	)
	for _, c := range []struct {
		typ      string
		replaced bool
		args     []string
		said     string
	}{
		{protocol.TypeFSList, false, []string{"ls", "7:küche", "/"}, "computer 7:küche ls /: " + gone},
		{protocol.TypeFSList, true, []string{"ls", "7:küche", "/"},
			"computer 7:küche ls /: the gateway answered not_connected: the computer was replaced by a newer connection before it answered" + read},
		{protocol.TypeFSRead, false, []string{"cat", "7:küche", "/door.lua"}, "computer 7:küche cat /door.lua: " + readGot},
		{protocol.TypeFSRead, false, []string{"get", "7:küche", "/door.lua", "-"}, "computer 7:küche get /door.lua: " + readGot},
		{protocol.TypeComputerInfo, false, []string{"info", "7:küche"}, "computer 7:küche info: " + gone},
		{protocol.TypePing, false, []string{"ping", "7:küche"}, "computer 7:küche ping: " + gone},
		{protocol.TypeScreenRead, false, []string{"screen", "7:küche", "--once"}, "computer 7:küche screen: " + gone},
		{protocol.TypeFSList, false, []string{"request", "7:küche", "fs.list", `{"path":"/"}`}, "computer 7:küche request fs.list: " + gone},
		{protocol.TypeLuaExec, false, []string{"exec", "7:küche", "return 1"},
			"computer 7:küche exec: the gateway answered not_connected: the computer disconnected before it answered; it may have done what it was asked all the same: check before you ask again"},
	} {
		t.Run(c.args[0], func(t *testing.T) {
			d := daemonfake.NewLocal(map[string]string{"/door.lua": "print('door')\n"})
			d.Label = "küche"
			d.List[0].TraposID = d.TraposID()
			d.Before = func(_ context.Context, _ int, typ string) error {
				if typ == c.typ {
					return computer.LeftBeforeAnswer(d.TraposID(), c.replaced)
				}
				return nil
			}
			base := serveDisk(t, d)
			_, err := runClient(t, append([]string{c.args[0], "--url", base}, c.args[1:]...)...)
			require.Error(t, err)
			assert.Equal(t, c.said, err.Error())
		})
	}
}

// TestAPutOrRmWhoseLookWentSaysNothingWasDone: a put or an rm whose computer went away, or
// was replaced by a newer socket, before it answered the look at the path (whether it is a
// directory), before anything was sent to write or delete, says that nothing was written or
// deleted, as it says when the gateway stopped then, where it said the look's words, "it may
// have done what it was asked all the same: check before you ask again", of a write that had
// not begun.
func TestAPutOrRmWhoseLookWentSaysNothingWasDone(t *testing.T) {
	clearEnv(t)
	local := filepath.Join(t.TempDir(), "x.txt")
	require.NoError(t, os.WriteFile(local, []byte("x"), 0o644))
	for _, replaced := range []bool{false, true} {
		went := "the computer disconnected before it answered; "
		if replaced {
			went = "the computer was replaced by a newer connection before it answered; "
		}
		for _, c := range []struct {
			args []string
			said string
		}{
			{[]string{"put", "7:küche", local, "/x.txt"}, "computer 7:küche put /x.txt: the gateway answered not_connected: " + went +
				"the write of /x.txt stopped before any of it was sent: nothing was written; write it again once it is back"},
			{[]string{"rm", "7:küche", "/door.lua"}, "computer 7:küche rm /door.lua: the gateway answered not_connected: " + went +
				"the delete of /door.lua stopped before it was sent: nothing was deleted; delete it again once it is back"},
		} {
			d := daemonfake.NewLocal(map[string]string{"/door.lua": "print('door')\n"})
			d.Label = "küche"
			d.List[0].TraposID = d.TraposID()
			d.Before = func(_ context.Context, _ int, typ string) error {
				if typ == protocol.TypeFSList {
					return computer.LeftBeforeAnswer(d.TraposID(), replaced)
				}
				return nil
			}
			base := serveDisk(t, d)
			_, err := runClient(t, append([]string{c.args[0], "--url", base}, c.args[1:]...)...)
			require.Error(t, err, c.args[0])
			assert.Equal(t, c.said, err.Error(), c.args[0])
			assert.Equal(t, []string{"/door.lua"}, d.Names(), "nothing written, nothing deleted")
		}
	}
}

// TestACutOutputIsSaidOnStderr: stdout holds only what the computer printed; that the computer
// cut it, and where, is a warning on stderr (it was a line of stdout, read by a script as
// output), worded as MCP's outputCut (it said only that it was cut).
func TestACutOutputIsSaidOnStderr(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.Exec = func(typ string, _ map[string]any) (any, *daemonfake.Error) {
		if typ == protocol.TypeLuaExec {
			return map[string]any{"returns": []any{}, "output": "1\n2\n", "outputTruncated": true}, nil
		}
		return map[string]any{"success": true, "output": "1\n2\n", "outputTruncated": true}, nil
	}
	base := serveDisk(t, d)
	for _, args := range [][]string{{"exec", "--url", base, "7:", "for i = 1, 9999 do print(i) end"}, {"run", "--url", base, "7:", "count"}} {
		out, errOut, err := runWith(t, "", args...)
		require.NoError(t, err, args[0])
		assert.Equal(t, "1\n2\n", out, args[0])
		assert.Equal(t, "trap-sandbox: warning: output was cut: it holds the first rows that scrolled off the run's screen, then its final screen; "+
			"the rows printed between them are left out (a run keeps at most 16 KiB of what it prints): "+
			"print less, or write it to a file on the computer and read that with trap-sandbox get\n", errOut, args[0])
	}
}

// silentDisk is a computer that takes every request and answers none, recording the longest
// timeout a request was sent with. Its requests time out at once: what a test reads is the
// timeout each was given, not the time it took (no test waits out a real timeout).
type silentDisk struct {
	*daemonfake.Local
	mu      sync.Mutex
	longest time.Duration
}

func (s *silentDisk) Request(_ context.Context, _, _ string, _ json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	s.mu.Lock()
	s.longest = max(s.longest, timeout)
	s.mu.Unlock()
	return nil, context.DeadlineExceeded
}

// TestPutToASilentComputerTakesItsTimeout: --timeout bounds the whole put, the look at
// whether the path is a directory included: that look was sent with the default 10 s, so a
// computer that never answers held `put --timeout 3s` 13 s (and a default put 70 s).
func TestPutToASilentComputerTakesItsTimeout(t *testing.T) {
	clearEnv(t)
	disk := &silentDisk{Local: daemonfake.NewLocal(nil)}
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, hostapi.New(computer.New(disk))).Handler())
	defer srv.Close()
	local := filepath.Join(t.TempDir(), "door.lua")
	require.NoError(t, os.WriteFile(local, []byte("print('door')\n"), 0o644))
	_, err := runClient(t, "put", "--url", srv.URL, "--timeout", "1s", "7:", local, "/door.lua")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "computer 7: put /door.lua: the gateway answered timeout: the computer did not answer fs.list in time")
	disk.mu.Lock()
	defer disk.mu.Unlock()
	assert.LessOrEqual(t, disk.longest, time.Second, "no request of the put may outlast its --timeout")
}

// TestRmDeletesAFileAndADirectoryOnlyWithR: rm deletes a file and prints nothing, as rm does;
// a directory, which CC's fs.delete takes with everything in it, only with -r; a file that is
// not there is the computer's error.
func TestRmDeletesAFileAndADirectoryOnlyWithR(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/programs/door.lua": "d", "/programs/lamp.lua": "l", "/d/\xe9.txt": "x"})
	base := serveDisk(t, d)
	out, err := runClient(t, "rm", "--url", base, "7:", "/programs/door.lua")
	require.NoError(t, err)
	assert.Empty(t, out)
	_, err = runClient(t, "rm", "--url", base, "7:", "/programs")
	require.EqualError(t, err, "computer 7: rm /programs: it is a directory: rm -r deletes it with everything in it")
	_, ok := d.File("/programs/lamp.lua")
	assert.True(t, ok, "a directory without -r is left as it was")
	_, err = runClient(t, "rm", "--url", base, "7:", "/programs/door.lua")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "computer 7: rm /programs/door.lua: the computer answered fs_error: /programs/door.lua: No such file")
	_, err = runClient(t, "rm", "--url", base, "-r", "7:", "/programs")
	require.NoError(t, err)
	_, err = runClient(t, "rm", "--url", base, "7:", `/d/\xe9.txt`)
	require.NoError(t, err, "a path as ls prints it")
	assert.Empty(t, d.Names(), "no file is left")
}

// TestRmOfADirectoryInROMSaysItIsReadOnly: rm /rom answered "it is a directory: rm -r deletes
// it with everything in it", and rm -r /rom then "Access denied": a directory in the read-only
// ROM is refused as any change of it is, at once, with why.
func TestRmOfADirectoryInROMSaysItIsReadOnly(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/rom/programs/ls.lua": "l"})
	base := serveDisk(t, d)
	for _, path := range []string{"/rom", "/rom/programs"} {
		_, err := runClient(t, "rm", "--url", base, "7:", path)
		require.EqualError(t, err, "computer 7: rm "+path+": the computer answered fs_error: "+path+": Access denied (/rom is the computer's read-only ROM, which nothing on the computer can change)")
	}
	_, ok := d.File("/rom/programs/ls.lua")
	assert.True(t, ok)
}

// TestAPutCutMidWayNamesTheRmOfWhatItLeft: a computer gone during a put keeps its old file,
// and what was sent of the new one may stay beside it, hidden by its dot and taking space;
// the error named that file and said to delete it, leaving the operator to work out the
// command (and to quote a path with a space). It names the line, which runs as written once
// the computer is back (the words as a shell splits them).
func TestAPutCutMidWayNamesTheRmOfWhatItLeft(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/my door/door.lua": "old"})
	chunks := 0
	d.Before = func(_ context.Context, _ int, typ string) error {
		if typ == protocol.TypeFSWrite {
			chunks++
		}
		if chunks > 1 { // the first chunk arrived, then the computer is gone
			return computer.NotConnected("7:")
		}
		return nil
	}
	base := serveDisk(t, d)
	local := filepath.Join(t.TempDir(), "door.lua")
	require.NoError(t, os.WriteFile(local, bytes.Repeat([]byte("-- door\n"), computer.ChunkBytes), 0o644))
	_, err := runClient(t, "put", "--url", base, "7:", local, "/my door/door.lua")
	require.Error(t, err)
	names := d.Names()
	require.Len(t, names, 2, "the old file, and the part sent")
	left := names[0]
	require.True(t, strings.HasPrefix(left, "/my door/"+computer.TempPrefix), left)
	line := "trap-sandbox rm --url " + base + " 7: '" + left + "'"
	assert.Contains(t, err.Error(), "it may be left beside the file as "+left+" (delete it once the computer is back: "+line+")")

	d.Before = nil // the computer is back
	words, err := exec.Command("sh", "-c", `printf '%s\n' `+strings.TrimPrefix(line, "trap-sandbox ")).Output()
	require.NoError(t, err)
	_, err = runClient(t, strings.Split(strings.TrimSuffix(string(words), "\n"), "\n")...)
	require.NoError(t, err)
	assert.Equal(t, []string{"/my door/door.lua"}, d.Names(), "the part sent is gone")
	old, _ := d.File("/my door/door.lua")
	assert.Equal(t, "old", string(old))
}

// The rm line's words: a traposId or a path a shell would split or expand is quoted.
func TestShellWordQuotesWhatAShellReads(t *testing.T) {
	for in, want := range map[string]string{
		"/a/.trap-sandbox-upload-0123": "/a/.trap-sandbox-upload-0123",
		"7:":                           "7:",
		"7:my door":                    "'7:my door'",
		"/it's/$HOME/*":                `'/it'\''s/$HOME/*'`,
		"":                             "''",
	} {
		assert.Equal(t, want, shellWord(in), in)
	}
}

// TestARunThatRelabelsTheComputerSaysItsNewID: exec "os.setComputerLabel('door')" and run
// "label set door" printed the run's output alone; the next command to the old id was
// not_connected once the computer said hello under the new one. Each says the new traposId on
// stderr (computer.Client.RelabelledByRun, as MCP's run tools say it); a run that left the
// label says nothing.
func TestARunThatRelabelsTheComputerSaysItsNewID(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.Exec = func(typ string, p map[string]any) (any, *daemonfake.Error) {
		if strings.Contains(fmt.Sprint(p["code"], p["command"]), "door") {
			d.InfoFields = map[string]any{"label": "door"}
		}
		if typ == protocol.TypeShellRun {
			return map[string]any{"success": true, "output": ""}, nil
		}
		return map[string]any{"returns": []any{}, "output": ""}, nil
	}
	base := serveDisk(t, d)
	_, errOut, err := runWith(t, "", "exec", "--url", base, "7:", "return 1")
	require.NoError(t, err)
	assert.Empty(t, errOut)

	// An unlabelled computer's traposId ends in ':': the note never puts a colon right after
	// an id (it read "connected as 7:: within 15 s").
	const said = "trap-sandbox: its label changed since it connected as 7:, so within 15 s it connects again as 7:door "
	_, errOut, err = runWith(t, "", "exec", "--url", base, "7:", "os.setComputerLabel('door')")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(errOut, said), errOut)

	d.InfoFields = nil
	_, errOut, err = runWith(t, "", "run", "--url", base, "7:", "label set door")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(errOut, said), errOut)
}

// TestARunsOutputWaitsForItsRelabelCheckTwoSecondsAtMost: exec and run ask computer.info after
// the run whether it relabelled the computer, and that asked with the default 10 s: a computer
// that did not answer it (busy, or gone with its socket still open) held the run's finished
// output 10 s more, for a note it then did not print. The check waits 2 s at most; past them
// the output comes as ever, without the note, and the command succeeds.
func TestARunsOutputWaitsForItsRelabelCheckTwoSecondsAtMost(t *testing.T) {
	clearEnv(t)
	clk := clock.NewFake(time.Unix(0, 0))
	d := daemonfake.RunsButNeverTellsInfo(clk)
	base := serveDisk(t, d)
	ctx, cancel := context.WithTimeout(t.Context(), clientWait) // bounds a failing test's waits
	defer cancel()

	for _, args := range [][]string{{"exec", "--url", base, "7:", "return 1"}, {"run", "--url", base, "7:", "door"}} {
		type result struct {
			out, errOut string
			err         error
		}
		done := make(chan result, 1)
		go func() {
			out, errOut, err := runWith(t, "", args...)
			done <- result{out, errOut, err}
		}()
		require.True(t, clk.WaitArmed(1, ctx.Done()), "%s: computer.info was never asked", args[0])
		clk.Advance(2 * time.Second)
		assert.Zero(t, clk.Armed(), "%s: the run's output still waits for computer.info 2 s after the run ended", args[0])
		clk.Advance(computer.MaxTimeout) // ends a check that waits longer all the same
		var got result
		select {
		case got = <-done:
		case <-ctx.Done():
			t.Fatalf("%s: the command did not end", args[0])
		}
		require.NoError(t, got.err, args[0])
		want := "opened\n"
		if args[0] == "exec" {
			want += "1\n"
		}
		assert.Equal(t, want, got.out, args[0])
		assert.Empty(t, got.errOut, "%s: no note, no warning", args[0])
	}
}

// TestCatOrGetOfADirectoryNamesLs: cat or get of a directory says it is one and what lists
// it, as ls of a file names cat and get (and MCP's read_file names list_files); it printed
// CC's "the computer answered fs_error: /programs: Not a file" alone.
func TestCatOrGetOfADirectoryNamesLs(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.MakeDir("/programs")
	base := serveDisk(t, d)
	for _, args := range [][]string{{"cat", "--url", base, "7:", "/programs"}, {"get", "--url", base, "7:", "/programs", t.TempDir()}} {
		_, err := runClient(t, args...)
		fix := "use ls to list it"
		if args[0] == "get" {
			fix = "get -r copies it with everything in it; ls lists it"
		}
		assert.EqualError(t, err, "computer 7: "+args[0]+" /programs: a directory, not a file ("+fix+")")
	}
}

// TestPutsThatSucceedLogNoFailedRequest: at --log-level debug the gateway logs each request of
// the host's tools with its outcome; put's look at whether its path is a directory (an fs.list
// of the path, which CC answers for a file or for nothing there with fs_error) logged
// "outcome=fs_error" for every put that worked, an error per command for the operator to read.
// A put that makes the directories it writes in logged the fs.list of the one not there so,
// until the look asked with absentOk (the computer answers absent: no request more).
func TestPutsThatSucceedLogNoFailedRequest(t *testing.T) {
	srv, d, logs := debugLoggedComputer(t)
	local := filepath.Join(t.TempDir(), "x.txt")
	require.NoError(t, os.WriteFile(local, []byte("x"), 0o644))

	for _, c := range []struct{ remote, written string }{
		{"/x.txt", "/x.txt"},             // nothing there
		{"/old.txt", "/old.txt"},         // a file replaced
		{"/programs", "/programs/x.txt"}, // into a directory
		{"/d/e/x.txt", "/d/e/x.txt"},     // into directories the write makes
	} {
		before := len(logs.String())
		out, err := runClient(t, "put", "--url", srv.URL, "5:küche", local, c.remote)
		require.NoError(t, err)
		assert.Equal(t, local+" -> 5:küche "+c.written+" (1 byte)\n", out)
		got, _ := d.File(c.written)
		assert.Equal(t, "x", string(got))
		lines := strings.Split(strings.TrimSpace(logs.String()[before:]), "\n")
		require.NotEmpty(t, lines)
		for _, line := range lines {
			assert.Regexp(t, `msg="host request" .* outcome=ok ms=\d+$`, line, "put %s", c.remote)
		}
	}
	// rm, without -r, looks the same way whether the path is a directory it must refuse.
	before := len(logs.String())
	_, err := runClient(t, "rm", "--url", srv.URL, "5:küche", "/x.txt")
	require.NoError(t, err)
	assert.NotContains(t, d.Names(), "/x.txt")
	assert.NotContains(t, logs.String()[before:], "fs_error")
}

// debugLoggedComputer is a gateway whose host requests are logged at debug level into logs,
// with the computer 5:küche connected (files write), holding /old.txt and /programs.
func debugLoggedComputer(t *testing.T) (*httptest.Server, *daemonfake.Daemon, *testkit.SyncBuffer) {
	t.Helper()
	clearEnv(t)
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	gw := gateway.New(gateway.Config{}, slog.New(slog.DiscardHandler), nil)
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, gw,
		hostapi.New(computer.New(hostapi.NewGateway(gw).Logging(logger)))).Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), clientWait)
		defer cancel()
		assert.NoError(t, gw.Shutdown(ctx))
		srv.Close()
	})
	d := &daemonfake.Daemon{ID: 5, Label: "küche", AllowFiles: "write"}
	d.PutFile("/old.txt", []byte("old"))
	d.MakeDir("/programs")
	connectComputer(t, srv.URL, d)
	return srv, d, logs
}

// TestAPutLooksAtItsPathOnce: put looked at whether its path is a directory to put the file
// into, and the write then looked at the same path again, one fs.list more of the same
// directory: two round trips to a computer that answers between its program's events, and,
// for a put that makes the directories it writes in, two fs_errors in the debug log (now
// none: the look asks with absentOk). Into a directory, the file's own path is looked at too.
func TestAPutLooksAtItsPathOnce(t *testing.T) {
	srv, d, logs := debugLoggedComputer(t)
	local := filepath.Join(t.TempDir(), "x.txt")
	require.NoError(t, os.WriteFile(local, []byte("x"), 0o644))
	typeOutcome := regexp.MustCompile(`type=(\S+) outcome=(\S+)`)

	for _, c := range []struct {
		remote, written string
		asked           []string
	}{
		{"/x.txt", "/x.txt", []string{"fs.list ok", "fs.write ok", "fs.move ok"}},
		{"/old.txt", "/old.txt", []string{"fs.list ok", "fs.write ok", "fs.move ok"}},
		{"/programs", "/programs/x.txt", []string{"fs.list ok", "fs.list ok", "fs.write ok", "fs.move ok"}},
		{"/d/e/f.txt", "/d/e/f.txt", []string{"fs.list ok", "fs.write ok", "fs.move ok"}}, // /d/e is not there (absent): the write makes it
	} {
		before := len(logs.String())
		out, err := runClient(t, "put", "--url", srv.URL, "5:küche", local, c.remote)
		require.NoError(t, err)
		assert.Equal(t, local+" -> 5:küche "+c.written+" (1 byte)\n", out)
		got, _ := d.File(c.written)
		assert.Equal(t, "x", string(got))
		var asked []string
		for _, m := range typeOutcome.FindAllStringSubmatch(logs.String()[before:], -1) {
			asked = append(asked, m[1]+" "+m[2])
		}
		assert.Equal(t, c.asked, asked, "put %s", c.remote)
	}
}

// TestAPutCutBeforeItsFirstChunkSaysNothingWasWritten: a gateway killed while put looked at
// whether its path is a directory, before any chunk was sent, said "what was asked may have
// been done all the same: check before you ask again", as of a run; nothing was written then.
func TestAPutCutBeforeItsFirstChunkSaysNothingWasWritten(t *testing.T) {
	clearEnv(t)
	killed, asked := killedGateway(t)
	local := filepath.Join(t.TempDir(), "x.txt")
	require.NoError(t, os.WriteFile(local, []byte("x"), 0o644))
	_, err := runClient(t, "put", "--url", killed.URL, "5:küche", local, "/x.txt")
	require.Error(t, err)
	assert.Equal(t, "computer 5:küche put /x.txt: the gateway at "+killed.URL+" closed the connection before it answered (it stopped or crashed: see its log); "+
		"the write of /x.txt stopped before any of it was sent: nothing was written; write it again once it is back", err.Error())
	require.Len(t, asked(), 1)
	assert.Contains(t, asked()[0], `"fs.list"`, "the look at the path was all that was asked")
}

// TestAnRmCutDuringItsLookSaysNothingWasDeleted: a gateway killed while rm looked at whether
// its path is a directory said "what was asked may have been done all the same", as of a run;
// the delete was never sent, so nothing was removed then.
func TestAnRmCutDuringItsLookSaysNothingWasDeleted(t *testing.T) {
	clearEnv(t)
	killed, asked := killedGateway(t)
	_, err := runClient(t, "rm", "--url", killed.URL, "5:küche", "/x.txt")
	require.Error(t, err)
	assert.Equal(t, "computer 5:küche rm /x.txt: the gateway at "+killed.URL+" closed the connection before it answered (it stopped or crashed: see its log); "+
		"the delete of /x.txt stopped before it was sent: nothing was deleted; delete it again once it is back", err.Error())
	require.Len(t, asked(), 1)
	assert.Contains(t, asked()[0], `"fs.list"`, "the look at the path was all that was asked")
}

// killedGateway is a gateway that closes every connection without an answer, as a killed
// one's does; asked is the bodies of the requests it was sent.
func killedGateway(t *testing.T) (killed *httptest.Server, asked func() []string) {
	var mu sync.Mutex
	var bodies []string
	killed = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(body))
		mu.Unlock()
		panic(http.ErrAbortHandler) // the connection closed with no answer, as a killed gateway's
	}))
	t.Cleanup(killed.Close)
	return killed, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(bodies)
	}
}
