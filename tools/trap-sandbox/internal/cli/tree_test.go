package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit/daemonfake"
)

// TestGetROfRootLeavesOutTheROMAndFilesThatGo: get -r of / copies the computer's files but not
// /rom (said on stderr), and a file deleted on the computer between the listing of its
// directory and its read is left out with the computer's words, the copy going on and its
// total saying so; it exits 3, as the copy is not whole (it exited 0, and a cron backup could
// not tell it from a whole one).
func TestGetROfRootLeavesOutTheROMAndFilesThatGo(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/a.txt": "a", "/d/b.txt": "bb", "/d/c.txt": "ccc", "/rom/programs/ls.lua": "x"})
	lists, deleted := 0, false
	d.Before = func(_ context.Context, _ int, typ string) error {
		if typ == protocol.TypeFSList {
			lists++
		}
		if typ == protocol.TypeFSRead && lists == 2 && !deleted { // the first read in /d: another program deletes b.txt
			deleted = true
			payload, _ := json.Marshal(map[string]any{"path": "/d/b.txt"})
			assert.Nil(t, d.Answer(protocol.TypeFSDelete, payload).Error)
		}
		return nil
	}
	base := serveDisk(t, d)
	dest := t.TempDir()
	out, errOut, err := runWith(t, "", "get", "--url", base, "-r", "7:", "/", dest)
	requireLeftOut(t, err, 1) // b.txt, not /rom
	assert.Equal(t, ""+
		"7: /a.txt -> "+filepath.Join(dest, "a.txt")+" (1 byte)\n"+
		"7: /d/c.txt -> "+filepath.Join(dest, "d", "c.txt")+" (3 bytes)\n"+
		"7: / -> "+dest+": 2 files and 2 directories (4 bytes), 1 left out (said above)\n", out)
	assert.Equal(t, ""+
		"trap-sandbox: /d/b.txt left out: /d/b.txt: No such file\n"+
		"trap-sandbox: /rom left out: it is the ROM every computer reads, not this computer's files (get -r 7: /rom copies it)\n", errOut)
	_, err = os.Stat(filepath.Join(dest, "rom"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	// A computer's files are its owner's alone (its /.settings holds its credential).
	for name, want := range map[string]os.FileMode{"a.txt": 0o600, "d": os.ModeDir | 0o700, "d/c.txt": 0o600} {
		st, err := os.Stat(filepath.Join(dest, name))
		require.NoError(t, err)
		assert.Equal(t, want, st.Mode(), name)
	}
}

// requireLeftOut requires err to be the end of a tree copy that completed but left n entries
// out: exit status 3, and no error line of its own, as the copy's total said it.
func requireLeftOut(t *testing.T, err error, n int) {
	t.Helper()
	left, ok := errors.AsType[*LeftOut](err)
	require.True(t, ok, "a copy that left something out: %v", err)
	assert.Equal(t, n, left.N, "left out")
	var stderr bytes.Buffer
	assert.Equal(t, ExitLeftOut, ReportError(err, &stderr))
	assert.Empty(t, stderr.String(), "the total said it")
}

// TestGetROfRootWithoutTheROMIsWhole: /rom, which get -r of / leaves out by design (get -r ID
// /rom copies it), is said but leaves the copy whole: exit status 0.
func TestGetROfRootWithoutTheROMIsWhole(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/a.txt": "a", "/rom/programs/ls.lua": "x"})
	base := serveDisk(t, d)
	dest := t.TempDir()
	out, errOut, err := runWith(t, "", "get", "--url", base, "-r", "7:", "/", dest)
	require.NoError(t, err)
	assert.Equal(t, "7: /a.txt -> "+filepath.Join(dest, "a.txt")+" (1 byte)\n7: / -> "+dest+": 1 file and 1 directory (1 byte)\n", out)
	assert.Equal(t, "trap-sandbox: /rom left out: it is the ROM every computer reads, not this computer's files (get -r 7: /rom copies it)\n", errOut)
}

// TestAPartialCopyExitsThreeAndAFailedOneOne: the exit status is decided in one place,
// ReportError: a copy that left something out exits 3 with no line (its total said it), even
// named by its command; any other error is its line and 1, a copy that failed after leaving
// something out too.
func TestAPartialCopyExitsThreeAndAFailedOneOne(t *testing.T) {
	var stderr bytes.Buffer
	assert.Equal(t, ExitLeftOut, ReportError(named("get", &LeftOut{N: 2}), &stderr))
	assert.Empty(t, stderr.String())

	failed := named("computer 7: get -r /d/b.txt", errors.New("not_connected: the computer is not connected; copied before it: 7: /d -> d: 1 file and 1 directory (1 byte), 1 left out (said above)"))
	assert.Equal(t, ExitError, ReportError(failed, &stderr))
	assert.Equal(t, "trap-sandbox: "+failed.Error()+"\n", stderr.String())
}

// TestAGotFileIsTheHostUsersAlone: the file get makes is the host user's only, as a get -r's
// are: a computer's /.settings holds its credential, which get 7: /.settings . handed every
// user of the host (0644). A file there already keeps its own permissions.
func TestAGotFileIsTheHostUsersAlone(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/.settings": `{["sandbox.password"]="tsc_7_secret"}`})
	base := serveDisk(t, d)
	dest := t.TempDir()
	_, err := runClient(t, "get", "--url", base, "7:", "/.settings", dest)
	require.NoError(t, err)
	st, err := os.Stat(filepath.Join(dest, ".settings"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "made by get")

	shared := filepath.Join(dest, "shared")
	require.NoError(t, os.WriteFile(shared, nil, 0o640))
	require.NoError(t, os.Chmod(shared, 0o640)) // whatever the umask
	_, err = runClient(t, "get", "--url", base, "7:", "/.settings", shared)
	require.NoError(t, err)
	st, err = os.Stat(shared)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "a file there keeps its own")
}

// TestGetRSaysWhatItCopiedBeforeTheComputerWent: a computer that goes away mid-copy ends the
// copy with why and what was copied; the files copied are whole.
func TestGetRSaysWhatItCopiedBeforeTheComputerWent(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/d/a.txt": "a", "/d/b.txt": "bb"})
	reads := 0
	d.Before = func(_ context.Context, _ int, typ string) error {
		if typ == protocol.TypeFSRead {
			if reads++; reads == 2 {
				return computer.NotConnected("7:")
			}
		}
		return nil
	}
	base := serveDisk(t, d)
	dest := t.TempDir()
	out, _, err := runWith(t, "", "get", "--url", base, "-r", "7:", "/d", dest)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "computer 7: get -r /d/b.txt: ")
	assert.Contains(t, err.Error(), "not_connected")
	assert.Contains(t, err.Error(), "; copied before it: 7: /d -> "+filepath.Join(dest, "d")+": 1 file and 1 directory (1 byte)")
	assert.Equal(t, "7: /d/a.txt -> "+filepath.Join(dest, "d", "a.txt")+" (1 byte)\n", out)
	names, err := os.ReadDir(filepath.Join(dest, "d"))
	require.NoError(t, err)
	assert.Len(t, names, 1, "a.txt alone, no temporary file")
}

// TestGetAsTextSaysOnceItChangedTheBytes: get of a text file holding bytes 80-FF to a local
// file writes UTF-8, longer than the file on the computer; it said nothing, so a backup made
// with get (150009 bytes that became 157205) was not the computer's file. It says so once on
// stderr, with --binary and get -r; --binary, and a file of ASCII alone, say nothing.
func TestGetAsTextSaysOnceItChangedTheBytes(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/caf\xe9.txt": "caf\xe9 cr\xe8me\n", "/plain.txt": "plain\n"})
	base := serveDisk(t, d)
	dir := t.TempDir()
	_, errOut, err := runWith(t, "", "get", "--url", base, "7:", "/café.txt", dir)
	require.NoError(t, err)
	assert.Equal(t, "trap-sandbox: note: /café.txt was written as UTF-8 text, so its 11 bytes are 13 here (each byte 80-FF is two); get --binary, or get -r for a directory, copies the bytes unchanged\n", errOut)
	got, err := os.ReadFile(filepath.Join(dir, "café.txt"))
	require.NoError(t, err)
	assert.Equal(t, "café crème\n", string(got))
	for _, args := range [][]string{{"--binary", "7:", "/café.txt", dir}, {"7:", "/plain.txt", dir}} {
		_, errOut, err := runWith(t, "", append([]string{"get", "--url", base}, args...)...)
		require.NoError(t, err)
		assert.Empty(t, errOut, "%v", args)
	}
	got, err = os.ReadFile(filepath.Join(dir, "café.txt"))
	require.NoError(t, err)
	assert.Equal(t, "caf\xe9 cr\xe8me\n", string(got))

	_, _, err = runWith(t, "", "get", "--url", base, "-r", "7:", "/", "-")
	assert.EqualError(t, err, "computer 7: get -r: a directory goes to a local directory, not to stdout: name one")
}

// hostileLister is a computer whose fs.list of /d answers names no CC drive holds, each a way
// out of the local directory a copy goes into (a hostile or altered client's answer), and
// whose fs.read answers any path with bytes of its choosing (those of /d/evil.txt).
type hostileLister struct{ *daemonfake.Local }

func (h hostileLister) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	switch typ {
	case protocol.TypeFSList:
		var p struct{ Path string }
		if json.Unmarshal(payload, &p) == nil && p.Path == "/d" {
			return json.RawMessage(`{"entries":[{"name":"../../escaped","isDir":false,"size":4},{"name":"..","isDir":true,"size":0},` +
				`{"name":"sub/../../x","isDir":false,"size":4},{"name":"ok.txt","isDir":false,"size":4},{"name":".","isDir":true,"size":0},{"name":"","isDir":false,"size":4}]}`), nil
		}
	case protocol.TypeFSRead: // any path: the bytes of /d/evil.txt
		var p map[string]any
		if err := json.Unmarshal(payload, &p); err != nil {
			return nil, err
		}
		p["path"] = "/d/evil.txt"
		payload, _ = json.Marshal(p)
	}
	return h.Local.Request(ctx, traposID, typ, payload, timeout)
}

// TestGetRWritesNothingOutsideTheLocalDirectory: get -r wrote each entry of a listing at
// filepath.Join(local, name), the name as the computer answered it, so a hostile computer's
// "../../escaped" (or "..", a name with a '/') was written outside the directory the operator
// copied into, with bytes it chose: any file the operator may write. Such a name, which no CC
// drive holds (fs.list answers names of one level), is left out and said; the rest is copied.
func TestGetRWritesNothingOutsideTheLocalDirectory(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/d/ok.txt": "good", "/d/evil.txt": "evil"})
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, hostapi.New(computer.New(hostileLister{d}))).Handler())
	t.Cleanup(srv.Close)
	root := t.TempDir()
	dest := filepath.Join(root, "a", "b")
	require.NoError(t, os.MkdirAll(dest, 0o755))

	out, errOut, err := runWith(t, "", "get", "--url", srv.URL, "-r", "7:", "/d", dest)
	requireLeftOut(t, err, 5)
	for _, escaped := range []string{filepath.Join(root, "escaped"), filepath.Join(root, "a", "escaped"), filepath.Join(dest, "x"), filepath.Join(root, "a", "x")} {
		_, err := os.Stat(escaped)
		assert.ErrorIs(t, err, os.ErrNotExist, "%s was written", escaped)
	}
	got, err := os.ReadFile(filepath.Join(dest, "d", "ok.txt"))
	require.NoError(t, err)
	assert.Equal(t, "evil", string(got), "the one name of one level is copied")
	assert.Contains(t, out, "1 file and 1 directory (4 bytes), 5 left out (said above)")
	assert.Contains(t, errOut, `trap-sandbox: /d/../../escaped left out: the computer listed "../../escaped" in /d, which is no name of one level: it would be written outside `)
}

// TestGetRLeavesOutANameNoPathReaches: a file put on a computer's drive from outside CC may
// have a name CC's fs reads as another (a control byte or one of "*:<>?| dropped, a space
// trimmed): get -r read a\x01b.txt by its path, which read ab.txt, and wrote ab.txt's bytes
// under a\x01b.txt in the backup, which put -r then could not restore (it leaves such a
// local name out). Each is left out and said, the rest copied, and the backup put back
// holds the same files, byte-equal.
func TestGetRLeavesOutANameNoPathReaches(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/d/ab.txt": "plain", "/d/sub/x.txt": "in sub"})
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, hostapi.New(computer.New(daemonfake.OutsideNames{Local: d}))).Handler())
	t.Cleanup(srv.Close)
	dest := t.TempDir()

	out, errOut, err := runWith(t, "", "get", "--url", srv.URL, "-r", "7:", "/d", dest)
	requireLeftOut(t, err, 5)
	assert.Contains(t, out, "2 files and 2 directories (11 bytes), 5 left out (said above)")
	why := ` left out: CC's fs drops control characters and "*:<>?| from a path and trims the spaces around a name, so that path reads `
	fix := ", another file or none: no program on the computer can open this one (rename it on the drive, outside CC)\n"
	assert.Equal(t, ""+
		"trap-sandbox: /d/a\\x01b.txt"+why+"/d/ab.txt"+fix+
		"trap-sandbox: /d/ ab.txt"+why+"/d/ab.txt"+fix+
		"trap-sandbox: /d/ab?.txt"+why+"/d/ab.txt"+fix+
		"trap-sandbox: /d/..."+why+"/d"+fix+
		"trap-sandbox: /d/sub\\x01"+why+"/d/sub"+fix, errOut)
	var local []string
	require.NoError(t, filepath.WalkDir(filepath.Join(dest, "d"), func(p string, e fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dest, p)
		local = append(local, rel)
		return err
	}))
	assert.Equal(t, []string{"d", "d/ab.txt", "d/sub", "d/sub/x.txt"}, local, "ab.txt's bytes under its own name alone")

	_, errOut, err = runWith(t, "", "put", "--url", srv.URL, "-r", "7:", filepath.Join(dest, "d"), "/restored")
	require.NoError(t, err)
	assert.Empty(t, errOut)
	for from, to := range map[string]string{"/d/ab.txt": "/restored/ab.txt", "/d/sub/x.txt": "/restored/sub/x.txt"} {
		want, _ := d.File(from)
		got, ok := d.File(to)
		require.True(t, ok, "%s: %v", to, d.Names())
		assert.Equal(t, want, got, to)
	}
}

// TestPutRCopiesALocalDirectoryAsCpRDoes: put -r copies a local tree to the computer, into a
// directory there under the tree's name: each file's bytes unchanged (UTF-8 é stays two bytes),
// names by the path rule (ü is the byte FC), an empty
// directory made; a name CC cannot hold (☃; a backslash, which CC reads as /; a character CC
// drops from paths) and a symbolic link are left out, said on stderr and counted, and the copy
// exits 3.
func TestPutRCopiesALocalDirectoryAsCpRDoes(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.MakeDir("/programs")
	base := serveDisk(t, d)
	tree := filepath.Join(t.TempDir(), "tree")
	require.NoError(t, os.MkdirAll(filepath.Join(tree, "empty"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(tree, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(tree, "grüße.txt"), []byte("café\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(tree, "sub", "raw.bin"), []byte{0, 1, 0xff}, 0o644))
	for _, name := range []string{"snow☃", `back\slash`, "what?", "ctl\x01", " pad.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(tree, name), []byte("x"), 0o644))
	}
	require.NoError(t, os.Symlink("grüße.txt", filepath.Join(tree, "link")))

	out, errOut, err := runWith(t, "", "put", "--url", base, "-r", "7:", tree, "/programs")
	requireLeftOut(t, err, 6)
	assert.Equal(t, ""+
		filepath.Join(tree, "grüße.txt")+" -> 7: /programs/tree/grüße.txt (6 bytes)\n"+
		filepath.Join(tree, "sub", "raw.bin")+" -> 7: /programs/tree/sub/raw.bin (3 bytes)\n"+
		tree+" -> 7: /programs/tree: 2 files and 3 directories (9 bytes), 6 left out (said above)\n", out)
	cannot := ` left out: CC cannot name a file so (a character it cannot hold, a control character, a backslash, one of "*:<>?|, or a space at either end)` + "\n"
	assert.Equal(t, ""+
		"trap-sandbox: "+filepath.Join(tree, " pad.txt")+cannot+
		"trap-sandbox: "+filepath.Join(tree, `back\slash`)+cannot+
		"trap-sandbox: "+filepath.Join(tree, `ctl\x01`)+cannot+
		"trap-sandbox: "+filepath.Join(tree, "link")+" left out: not a file or a directory (a link, a device or a pipe)\n"+
		"trap-sandbox: "+filepath.Join(tree, "snow☃")+cannot+
		"trap-sandbox: "+filepath.Join(tree, "what?")+cannot, errOut)
	got, ok := d.File("/programs/tree/gr\xfc\xdfe.txt")
	require.True(t, ok, "%v", d.Names())
	assert.Equal(t, "café\n", string(got), "the bytes, not text")
	got, ok = d.File("/programs/tree/sub/raw.bin")
	require.True(t, ok, "%v", d.Names())
	assert.Equal(t, []byte{0, 1, 0xff}, got)
	listed, err := computer.New(d).List(t.Context(), "7:", "/programs/tree", 0)
	require.NoError(t, err)
	assert.Contains(t, listed, computer.Entry{Name: "empty", IsDir: true}, "the empty directory is made")
}

// TestPutNamesItsArgumentsOrder: put takes the computer first; put ./notes.txt 7:kitchen
// /notes.txt (the order of scp) said only "open 7:kitchen: no such file or directory".
func TestPutNamesItsArgumentsOrder(t *testing.T) {
	clearEnv(t)
	base := serveDisk(t, daemonfake.NewLocal(nil))
	local := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(local, []byte("hi"), 0o644))
	for _, r := range []string{"", "-r"} {
		args := []string{"put", "--url", base}
		if r != "" {
			args = append(args, r)
		}
		_, _, err := runWith(t, "", append(args, local, "7:kitchen", "/notes.txt")...)
		require.Error(t, err, r)
		assert.Contains(t, err.Error(), "open 7:kitchen: no such file or directory: put takes the computer first (trap-sandbox put 7:kitchen "+local+" /notes.txt)", r)
	}
}

// TestACopyToAComputerNotConnectedSaysOnlyWhy: put -r into / of a computer that is not
// connected (/ is a directory without asking it) failed at its first call and ended "…;
// copied before it: … 0 files and 0 directories (0 bytes)", which added nothing to why; it
// says why alone, as get -r of it does, and as a copy that made its directory still adds what
// it copied.
func TestACopyToAComputerNotConnectedSaysOnlyWhy(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.Before = func(context.Context, int, string) error { return computer.NotConnected("7:") }
	base := serveDisk(t, d)
	tree := filepath.Join(t.TempDir(), "tree")
	require.NoError(t, os.MkdirAll(tree, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(tree, "a.txt"), []byte("a"), 0o644))

	out, _, err := runWith(t, "", "put", "--url", base, "-r", "7:", tree, "/")
	require.Error(t, err)
	assert.Empty(t, out)
	assert.Contains(t, err.Error(), "computer 7: put -r /tree: ")
	assert.Contains(t, err.Error(), "not_connected")
	assert.NotContains(t, err.Error(), "copied before it")

	out, _, err = runWith(t, "", "get", "--url", base, "-r", "7:", "/", t.TempDir())
	require.Error(t, err)
	assert.Empty(t, out)
	assert.Contains(t, err.Error(), "not_connected")
	assert.NotContains(t, err.Error(), "copied before it")

	// The first file's write fails after the directory was made: that directory is said.
	made := false
	d.Before = func(_ context.Context, _ int, typ string) error {
		if typ == protocol.TypeFSMakeDir {
			made = true
			return nil
		}
		if made && typ != protocol.TypeFSList {
			return computer.NotConnected("7:")
		}
		return nil
	}
	_, _, err = runWith(t, "", "put", "--url", base, "-r", "7:", tree, "/")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "; copied before it: "+tree+" -> 7: /tree: 0 files and 1 directory (0 bytes)")
}
