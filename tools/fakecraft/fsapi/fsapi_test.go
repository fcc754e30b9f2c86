package fsapi

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// computer is a filesystem under test with a Lua state that has `fs` installed.
type computer struct {
	fs      *FS
	L       *lua.LState
	base    string // read-only host directory mounted at "/"
	overlay string // writable overlay
}

var romFiles = fstest.MapFS{
	"programs/hello.lua": {Data: []byte("print('hello')\n")},
	"programs/help.lua":  {Data: []byte("-- help\n")},
	"apis/colors.lua":    {Data: []byte("colors = {}\n")},
	"motd.txt":           {Data: []byte("welcome\n")},
}

func writeHostFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func newComputer(t *testing.T, extra ...Mount) *computer {
	t.Helper()
	base := t.TempDir()
	writeHostFile(t, filepath.Join(base, "base.txt"), "from base\n")
	writeHostFile(t, filepath.Join(base, "apis", "libx.lua"), "return {}\n")
	writeHostFile(t, filepath.Join(base, "apis", "liby.lua"), "return {y=1}\n")
	writeHostFile(t, filepath.Join(base, "lines.txt"), "line1\nline2\r\nline3")
	overlay := filepath.Join(t.TempDir(), "overlay")
	mounts := append([]Mount{
		{At: "/", Dir: base, ReadOnly: true},
		{At: "/rom", FS: romFiles},
	}, extra...)
	f, err := New(mounts, overlay)
	require.NoError(t, err)
	L := lua.NewState()
	f.Install(L)
	t.Cleanup(func() {
		L.Close()
		assert.NoError(t, f.Close())
	})
	return &computer{fs: f, L: L, base: base, overlay: overlay}
}

// eval runs a chunk and returns what it returns.
func (c *computer) eval(t *testing.T, code string) []lua.LValue {
	t.Helper()
	top := c.L.GetTop()
	require.NoError(t, c.L.DoString(code), "lua: %s", code)
	n := c.L.GetTop() - top
	out := make([]lua.LValue, n)
	for i := range out {
		out[i] = c.L.Get(top + 1 + i)
	}
	c.L.SetTop(top)
	return out
}

// evalErr calls fn(args) through pcall and returns the error message.
func (c *computer) evalErr(t *testing.T, call string) string {
	t.Helper()
	res := c.eval(t, "return pcall(function() "+call+" end)")
	require.Len(t, res, 2, "%s should fail", call)
	require.Equal(t, lua.LFalse, res[0], "%s should fail", call)
	return strings.TrimPrefix(res[1].String(), `<string>:1: `)
}

// strs converts returned values (strings, nil, numbers) to their text for easy asserts.
func strs(vals []lua.LValue) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = v.String()
	}
	return out
}

func listOf(t *testing.T, v lua.LValue) []string {
	t.Helper()
	tbl, ok := v.(*lua.LTable)
	require.True(t, ok, "expected a table, got %s", v.Type())
	var out []string
	for i := 1; i <= tbl.Len(); i++ {
		out = append(out, tbl.RawGetInt(i).String())
	}
	return out
}

// snapshot records every file and directory under a host directory.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel] = "<dir>"
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	}))
	return out
}

func TestPathFunctions(t *testing.T) {
	c := newComputer(t)
	long := strings.Repeat("a", 300)
	tests := []struct {
		name, expr, want string
	}{
		{"combine joins", `fs.combine("a", "b")`, "a/b"},
		{"combine strips slashes", `fs.combine("/a/", "/b/")`, "a/b"},
		{"combine several", `fs.combine("a", "b", "c/d")`, "a/b/c/d"},
		{"combine single", `fs.combine("/x//y/")`, "x/y"},
		{"combine dotdot cancels", `fs.combine("a", "..")`, ""},
		{"combine dotdot above root stays", `fs.combine("/", "..")`, ".."},
		{"combine deep escape", `fs.combine("a/b", "../../..")`, ".."},
		{"combine escape then name", `fs.combine("x/../../y")`, "../y"},
		{"combine dotdot after dotdot", `fs.combine("..", "..")`, "../.."},
		{"combine backslashes", `fs.combine("a\\b")`, "a/b"},
		{"combine dots", `fs.combine("a/./b/.../c")`, "a/b/c"},
		{"combine keeps wildcards", `fs.combine("a*?", "b")`, "a*?/b"},
		{"combine drops specials", `fs.combine("a:b<c>d|e\"f\1g")`, "abcdefg"},
		{"combine empty", `fs.combine("", "")`, ""},
		{"combine long name cut", `#fs.combine("` + long + `")`, "255"},
		{"combine trims spaces", `fs.combine(" a ", "  b/ c /d ")`, "a/b/c/d"},
		{"combine spaces around dots", `fs.combine("a/ .. /b")`, "b"},
		{"combine cut name trimmed", `#fs.combine(("a"):rep(254) .. "  x")`, "254"},
		{"getName root", `fs.getName("")`, "root"},
		{"getName slash", `fs.getName("/")`, "root"},
		{"getName nested", `fs.getName("/a/b/")`, "b"},
		{"getName dotdot", `fs.getName("..")`, ".."},
		{"getDir root", `fs.getDir("")`, ".."},
		{"getDir top", `fs.getDir("a")`, ""},
		{"getDir nested", `fs.getDir("/a/b/c")`, "a/b"},
		{"getDir trailing", `fs.getDir("a/b/")`, "a"},
		{"getDir dotdot climbs", `fs.getDir("..")`, "../.."},
		{"getDir dotdot dotdot", `fs.getDir("../..")`, "../../.."},
		{"getDir name above root", `fs.getDir("../foo")`, ".."},
		{"getDir cancelled", `fs.getDir("foo/..")`, ".."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := c.eval(t, "return "+tc.expr)
			require.Len(t, got, 1)
			assert.Equal(t, tc.want, got[0].String())
		})
	}
}

func TestArgumentErrors(t *testing.T) {
	c := newComputer(t)
	tests := []struct{ call, want string }{
		{`fs.exists(nil)`, "bad argument #1 (string expected, got nil)"},
		{`fs.exists()`, "bad argument #1 (string expected, got nil)"},
		{`fs.list(1)`, "bad argument #1 (string expected, got number)"},
		{`fs.combine("a", 1)`, "bad argument #2 (string expected, got number)"},
		{`fs.combine()`, "bad argument #1 (string expected, got nil)"},
		{`fs.open("x")`, "bad argument #2 (string expected, got nil)"},
		{`fs.open("x", "q")`, "Unsupported mode"},
		{`fs.move("a", {})`, "bad argument #2 (string expected, got table)"},
		{`fs.list(0/0)`, "bad argument #1 (string expected, got number)"},
		{`fs.getDir()`, "bad argument #1 (string expected, got nil)"},
		{`fs.open(setmetatable({}, {__name = "some type"}), "r")`, "bad argument #1 (string expected, got some type)"},
		// Handles take CC's Java rule: optional numbers must be finite, booleans are booleans.
		{`fs.open("base.txt", "r").read(0/0)`, "bad argument #1 (number expected, got nan)"},
		{`fs.open("base.txt", "r").read("2")`, "bad argument #1 (number expected, got string)"},
		{`fs.open("base.txt", "r").seek("set", 1/0)`, "bad argument #2 (number expected, got inf)"},
		{`fs.open("base.txt", "r").seek(1)`, "bad argument #1 (string expected, got number)"},
		{`fs.open("base.txt", "r").readLine(1)`, "bad argument #1 (boolean expected, got number)"},
		// The functions CC writes in Lua check with cc.expect, which names the function.
		{`fs.complete("a", "", 5)`, "bad argument #3 to 'complete' (boolean expected, got number)"},
		{`fs.complete(nil)`, "bad argument #1 to 'complete' (string expected, got nil)"},
		{`fs.find({})`, "bad argument #1 to 'find' (string expected, got table)"},
		{`fs.isDriveRoot()`, "bad argument #1 to 'isDriveRoot' (string expected, got nil)"},
		{`local c = fs.complete c(1)`, "bad argument #1 to 'c' (string expected, got number)"},
		{`fs.complete("a", "", {include_dirs = 1})`, "bad field 'include_dirs' (boolean expected, got number)"},
		{`fs.complete("a", "", {include_files = 1, include_dirs = 2})`, "bad field 'include_dirs' (boolean expected, got number)"},
		{`fs.complete("a", "", setmetatable({}, {__index = {include_files = "x"}}))`, "bad field 'include_files' (boolean expected, got string)"},
		{`fs.complete("a", "", {include_hidden = setmetatable({}, {__name = "thing"})})`, "bad field 'include_hidden' (boolean expected, got thing)"},
	}
	for _, tc := range tests {
		t.Run(tc.call, func(t *testing.T) {
			assert.Equal(t, tc.want, c.evalErr(t, tc.call))
		})
	}
}

func TestErrorPosition(t *testing.T) {
	c := newComputer(t)
	// Called from Lua code, the error carries the caller's position, as in CC.
	res := c.eval(t, "local ok, err = pcall(function()\n fs.list('nope')\nend) return err")
	assert.Equal(t, "<string>:2: /nope: No such file", res[0].String())
	// Called straight from pcall, a Java function's error is placed at the nearest Lua code,
	// the line calling pcall, as CC's Cobalt places it (LuaError's calculateLevel); its
	// argument errors too.
	res = c.eval(t, "local ok, err = pcall(fs.list, 'nope') return err")
	assert.Equal(t, "<string>:1: /nope: No such file", res[0].String())
	res = c.eval(t, "local ok, err = pcall(fs.list) return err")
	assert.Equal(t, "<string>:1: bad argument #1 (string expected, got nil)", res[0].String())
	// fs.complete is Lua in CC: cc.expect's error(msg, 3) names its caller, pcall, which is
	// C: no position, and no name.
	res = c.eval(t, "local ok, err = pcall(fs.complete, '', '', 1) return err")
	assert.Equal(t, "bad argument #3 (boolean expected, got number)", res[0].String())
}

func TestListAndQueries(t *testing.T) {
	c := newComputer(t)
	require.NoError(t, c.fs.WriteFile("/zeta.txt", []byte("z")))
	require.NoError(t, c.fs.WriteFile("/apis/libz.lua", []byte("z")))

	assert.Equal(t, []string{"apis", "base.txt", "lines.txt", "rom", "zeta.txt"}, listOf(t, c.eval(t, `return fs.list("/")`)[0]))
	assert.Equal(t, []string{"libx.lua", "liby.lua", "libz.lua"}, listOf(t, c.eval(t, `return fs.list("apis")`)[0]))
	assert.Equal(t, []string{"apis", "motd.txt", "programs"}, listOf(t, c.eval(t, `return fs.list("/rom/")`)[0]))
	assert.Equal(t, []string{"apis", "motd.txt", "programs"}, listOf(t, c.eval(t, `return fs.list("ROM")`)[0]), "mount points match case-insensitively")

	assert.Equal(t, "/base.txt: Not a directory", c.evalErr(t, `fs.list("base.txt")`))
	assert.Equal(t, "/missing: No such file", c.evalErr(t, `fs.list("missing")`))
	assert.Equal(t, "/rom/missing: No such file", c.evalErr(t, `fs.list("rom/missing")`))
	assert.Equal(t, "/base.txt/x: No such file", c.evalErr(t, `fs.list("base.txt/x")`))
	assert.Equal(t, "/..: Invalid Path", c.evalErr(t, `fs.list("..")`))

	tests := []struct{ expr, want string }{
		{`fs.exists("base.txt")`, "true"},
		{`fs.exists("/rom/programs/hello.lua")`, "true"},
		{`fs.exists("nope")`, "false"},
		{`fs.exists("..")`, "false"},
		{`fs.exists("")`, "true"},
		{`fs.isDir("")`, "true"},
		{`fs.isDir("rom")`, "true"},
		{`fs.isDir("apis")`, "true"},
		{`fs.isDir("base.txt")`, "false"},
		{`fs.isDir("nope")`, "false"},
		{`fs.isReadOnly("rom")`, "true"},
		{`fs.isReadOnly("rom/motd.txt")`, "true"},
		{`fs.isReadOnly("base.txt")`, "false"},
		{`fs.isReadOnly("nope")`, "false"},
		{`fs.isReadOnly("..")`, "false"},
		{`fs.getSize("base.txt")`, "10"},
		{`fs.getSize("rom/motd.txt")`, "8"},
		{`fs.getSize("apis")`, "0"},
		{`fs.getDrive("")`, "hdd"},
		{`fs.getDrive("base.txt")`, "hdd"},
		{`fs.getDrive("rom/programs")`, "rom"},
		{`fs.getDrive("nope")`, "nil"},
		{`fs.isDriveRoot("")`, "true"},
		{`fs.isDriveRoot("rom")`, "true"},
		{`fs.isDriveRoot("rom/programs")`, "false"},
		{`fs.isDriveRoot("apis")`, "false"},
		{`fs.isDriveRoot("nope")`, "true"}, // CC: a missing path has no drive, unlike its parent
		{`fs.isDriveRoot("../x")`, "true"},
		{`fs.getCapacity("")`, "1000000"},
		{`fs.getCapacity("rom")`, "nil"},
		{`fs.getFreeSpace("rom")`, "0"},
		{`fs.attributes("apis").isDir`, "true"},
		{`fs.attributes("base.txt").size`, "10"},
		{`fs.attributes("rom/motd.txt").isReadOnly`, "true"},
		{`fs.attributes("base.txt").modified == fs.attributes("base.txt").modification`, "true"},
		{`fs.attributes("base.txt").modified > 0`, "true"},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			assert.Equal(t, tc.want, c.eval(t, "return "+tc.expr)[0].String())
		})
	}
	assert.Equal(t, "/..: Invalid Path", c.evalErr(t, `fs.getDrive("..")`))
	assert.Equal(t, "/..: Invalid Path", c.evalErr(t, `fs.isDriveRoot("..")`))
	assert.Equal(t, "/nope: No such file", c.evalErr(t, `fs.getSize("nope")`))
	assert.Equal(t, "/nope: No such file", c.evalErr(t, `fs.attributes("nope")`))

	// Free space follows CC's accounting: every file and directory costs at least 500 bytes.
	// Root, apis, rom (the mount point is not part of the hdd) ... measured over the union.
	free := c.eval(t, `return fs.getFreeSpace("")`)[0].(lua.LNumber)
	// apis dir, base.txt, lines.txt, libx, liby, libz, zeta.txt: 7 * 500 (the drive's own
	// root is not charged against its capacity, as in CC).
	assert.Equal(t, lua.LNumber(RootCapacity-7*minimumFileSize), free)
}

func TestWriteReadRoundTripLeavesBaseUntouched(t *testing.T) {
	c := newComputer(t)
	before := snapshot(t, c.base)

	c.eval(t, `
		local h = fs.open("/notes/new.txt", "w")
		h.write("hello ")
		h.write(42)
		h.writeLine("")
		h.writeLine("second")
		h.close()
		local o = fs.open("base.txt", "w")
		o.write("replaced")
		o.close()`)
	got := c.eval(t, `
		local h = fs.open("notes/new.txt", "r")
		local all = h.readAll()
		h.close()
		local b = fs.open("base.txt", "r")
		local base = b.readAll()
		b.close()
		return all, base, fs.isDir("notes")`)
	assert.Equal(t, []string{"hello 42\nsecond\n", "replaced", "true"}, strs(got))

	assert.Equal(t, before, snapshot(t, c.base), "the read-only host directory must not change")
	data, err := os.ReadFile(filepath.Join(c.overlay, "notes", "new.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello 42\nsecond\n", string(data))

	// Append mode on a file that only exists in the read-only layer copies it up first.
	c.eval(t, `local h = fs.open("lines.txt", "a") h.write("!") h.close()`)
	assert.Equal(t, "line1\nline2\r\nline3!", c.eval(t, `local h = fs.open("lines.txt", "rb") local s = h.readAll() h.close() return s`)[0].String())
	assert.Equal(t, before, snapshot(t, c.base))
}

func TestReadOnlyMounts(t *testing.T) {
	c := newComputer(t)
	assert.Equal(t, []string{"nil", "/rom/new.lua: Access denied"}, strs(c.eval(t, `return fs.open("rom/new.lua", "w")`)))
	assert.Equal(t, []string{"nil", "/rom/motd.txt: Access denied"}, strs(c.eval(t, `return fs.open("rom/motd.txt", "a")`)))
	assert.Equal(t, "/rom/d: Access denied", c.evalErr(t, `fs.makeDir("rom/d")`))
	assert.Equal(t, "/rom/motd.txt: Access denied", c.evalErr(t, `fs.delete("rom/motd.txt")`))
	assert.Equal(t, "/rom/nope: Access denied", c.evalErr(t, `fs.delete("rom/nope")`))
	assert.Equal(t, "/rom: Access denied", c.evalErr(t, `fs.delete("rom")`))
	assert.Equal(t, "/rom/x: Access denied", c.evalErr(t, `fs.copy("base.txt", "rom/x")`))
	// move's refusals name no path, and a read-only side is checked before anything else.
	assert.Equal(t, "Access denied", c.evalErr(t, `fs.move("rom/motd.txt", "motd.txt")`))
	assert.Equal(t, "Access denied", c.evalErr(t, `fs.move("rom", "rom/x")`))
	assert.Equal(t, "Access denied", c.evalErr(t, `fs.move("base.txt", "rom/x")`))
	assert.Equal(t, "Access denied", c.evalErr(t, `fs.move("rom/nope", "x")`))
	assert.Equal(t, "/..: Invalid Path", c.evalErr(t, `fs.move("..", "x")`))
	assert.Error(t, c.fs.WriteFile("/rom/x", []byte("x")))

	// Copying out of the ROM works.
	c.eval(t, `fs.copy("rom/programs", "progs")`)
	assert.Equal(t, []string{"hello.lua", "help.lua"}, listOf(t, c.eval(t, `return fs.list("progs")`)[0]))
	data, err := c.fs.ReadFile("progs/hello.lua")
	require.NoError(t, err)
	assert.Equal(t, "print('hello')\n", string(data))
}

func TestMissingFilesAndDirectories(t *testing.T) {
	c := newComputer(t)
	tests := []struct {
		expr string
		want []string
	}{
		{`fs.open("nope", "r")`, []string{"nil", "/nope: No such file"}},
		{`fs.open("/a/b/../nope", "rb")`, []string{"nil", "/a/nope: No such file"}},
		{`fs.open("apis", "r")`, []string{"nil", "/apis: Not a file"}},
		{`fs.open("", "r+")`, []string{"nil", "/: Not a file"}},
		{`fs.open("apis", "w")`, []string{"nil", "/apis: Cannot write to directory"}},
		{`fs.open("nope", "r+")`, []string{"nil", "/nope: No such file"}},
		// CC makes the parent (WritableFileMount.makeDirectory): a parent that is a file is
		// "File exists", a file further up "Access denied", both naming the parent.
		{`fs.open("base.txt/x", "w")`, []string{"nil", "/base.txt: File exists"}},
		{`fs.open("base.txt/x/y", "a")`, []string{"nil", "/base.txt/x: Access denied"}},
		// (a Java function's error under pcall is placed at the line calling pcall)
		{`select(2, pcall(fs.makeDir, "base.txt/x"))`, []string{"<string>:1: /base.txt/x: Access denied"}},
		{`select(2, pcall(fs.makeDir, "base.txt/x/y"))`, []string{"<string>:1: /base.txt/x/y: Access denied"}},
		{`select(2, pcall(fs.copy, "apis", "base.txt/x"))`, []string{"<string>:1: /base.txt/x: Access denied"}},
		{`select(2, pcall(fs.copy, "lines.txt", "base.txt/x"))`, []string{"<string>:1: /base.txt: File exists"}},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			assert.Equal(t, tc.want, strs(c.eval(t, "return "+tc.expr)))
		})
	}
	_, err := c.fs.ReadFile("nope")
	assert.EqualError(t, err, "/nope: No such file")
}

func TestDeleteMoveCopy(t *testing.T) {
	c := newComputer(t)
	before := snapshot(t, c.base)

	// Deleting a file of the read-only layer hides it; the host file stays.
	c.eval(t, `fs.delete("base.txt")`)
	assert.Equal(t, "false", c.eval(t, `return fs.exists("base.txt")`)[0].String())
	assert.NotContains(t, listOf(t, c.eval(t, `return fs.list("")`)[0]), "base.txt")
	c.eval(t, `fs.delete("does/not/exist")`) // no error, as in CC

	// A deleted directory comes back empty when made again.
	c.eval(t, `fs.delete("apis") fs.makeDir("apis")`)
	assert.Empty(t, listOf(t, c.eval(t, `return fs.list("apis")`)[0]))
	// And a rewritten deleted file shows the new contents.
	require.NoError(t, c.fs.WriteFile("base.txt", []byte("new")))
	got, err := c.fs.ReadFile("base.txt")
	require.NoError(t, err)
	assert.Equal(t, "new", string(got))
	assert.Equal(t, before, snapshot(t, c.base))

	// makeDir
	c.eval(t, `fs.makeDir("a/b/c")`)
	assert.True(t, c.fs.IsDir("a/b"))
	c.eval(t, `fs.makeDir("a/b/c")`) // existing directory: nothing happens
	assert.Equal(t, "/base.txt: File exists", c.evalErr(t, `fs.makeDir("base.txt")`))
	assert.Equal(t, "/: Access denied", c.evalErr(t, `fs.delete("/")`))

	// copy
	c.eval(t, `fs.copy("lines.txt", "a/copy.txt")`)
	assert.True(t, c.fs.Exists("lines.txt"))
	assert.True(t, c.fs.Exists("a/copy.txt"))
	assert.Equal(t, "/nope: No such file", c.evalErr(t, `fs.copy("nope", "x")`))
	assert.Equal(t, "/lines.txt: File exists", c.evalErr(t, `fs.copy("a/copy.txt", "lines.txt")`))
	assert.Equal(t, "/a: Can't copy a directory inside itself", c.evalErr(t, `fs.copy("a", "a/b/inner")`))

	// move inside the overlay, and out of the read-only layer.
	c.eval(t, `fs.move("a/copy.txt", "moved/here.txt")`)
	assert.False(t, c.fs.Exists("a/copy.txt"))
	assert.True(t, c.fs.Exists("moved/here.txt"))
	c.eval(t, `fs.move("lines.txt", "lines2.txt")`)
	assert.False(t, c.fs.Exists("lines.txt"))
	data, err := c.fs.ReadFile("lines2.txt")
	require.NoError(t, err)
	assert.Equal(t, "line1\nline2\r\nline3", string(data))
	assert.Equal(t, "Can't move a directory inside itself", c.evalErr(t, `fs.move("a", "a/b/x")`))
	assert.Equal(t, "Can't move a directory inside itself", c.evalErr(t, `fs.move("", "child")`))
	assert.Equal(t, "File exists", c.evalErr(t, `fs.move("moved/here.txt", "lines2.txt")`))
	assert.Equal(t, "No such file", c.evalErr(t, `fs.move("nope", "x")`))

	// Spaces around path components are trimmed, so " renamed" names "renamed".
	c.eval(t, `fs.makeDir("dir/some") fs.move("dir", " renamed ")`)
	assert.False(t, c.fs.Exists("dir"))
	assert.True(t, c.fs.IsDir("renamed/some"))
	assert.Equal(t, before, snapshot(t, c.base))
}

func TestHandleReading(t *testing.T) {
	c := newComputer(t)
	require.NoError(t, c.fs.WriteFile("trail.txt", []byte("a\n\nb\n")))
	tests := []struct {
		name, code string
		want       []string
	}{
		{"readLine strips \\n and \\r\\n", `local h = fs.open("lines.txt", "r") return h.readLine(), h.readLine(), h.readLine(), h.readLine()`,
			[]string{"line1", "line2", "line3", "nil"}},
		{"readLine with trailing", `local h = fs.open("lines.txt", "r") return h.readLine(true), h.readLine(true), h.readLine(true), h.readLine(true)`,
			[]string{"line1\n", "line2\r\n", "line3", "nil"}},
		{"trailing newline gives no extra line", `local h = fs.open("trail.txt", "r") return h.readLine(), h.readLine(), h.readLine(), h.readLine()`,
			[]string{"a", "", "b", "nil"}},
		{"readAll after readLine, then empty", `local h = fs.open("lines.txt", "r") h.readLine() return h.readAll(), h.readAll()`,
			[]string{"line2\r\nline3", ""}},
		{"readAll of empty file", `fs.open("empty", "w").close() local h = fs.open("empty", "r") return h.readAll(), h.readLine(), h.read()`,
			[]string{"", "nil", "nil"}},
		{"text read gives characters", `local h = fs.open("lines.txt", "r") return h.read(), h.read(4), h.read(0)`,
			[]string{"l", "ine1", ""}},
		{"binary read gives bytes", `local h = fs.open("lines.txt", "rb") return h.read(), h.read(2)`,
			[]string{"108", "in"}},
		{"read past end", `local h = fs.open("rom/motd.txt", "r") return h.read(100), h.read(1), h.read(0), h.read()`,
			[]string{"welcome\n", "nil", "nil", "nil"}},
		{"seek", `local h = fs.open("lines.txt", "rb") return h.seek("set", 2), h.read(3), h.seek(), h.seek("cur", -1), h.read(1), h.seek("end"), h.read(), h.seek("end", -2), h.readAll()`,
			[]string{"2", "ne1", "5", "4", "1", "18", "nil", "16", "e3"}},
		{"seek to a negative position", `local h = fs.open("lines.txt", "r") return h.seek("set", -1)`,
			[]string{"nil", "Position is negative"}},
		{"handle is a table of functions", `local h = fs.open("lines.txt", "r") return type(h), type(h.readLine), type(h.write), type(h.seek)`,
			[]string{"table", "function", "nil", "function"}},
		{"write handle has no read", `local h = fs.open("w.txt", "w") local r = type(h.readAll) h.close() return r, type(h.flush)`,
			[]string{"nil", "function"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, strs(c.eval(t, tc.code)))
		})
	}
	assert.Equal(t, "Cannot read a negative number of bytes", c.evalErr(t, `fs.open("lines.txt", "r").read(-1)`))
	assert.Equal(t, "bad argument #1 to 'seek' (invalid option 'bad'", c.evalErr(t, `fs.open("lines.txt", "r").seek("bad")`))
}

// TestReadHandle: a handle over bytes answers every read and seek as fs.open(path, "rb")
// or fs.open(path, "r") does on a file holding them, and belongs to no filesystem.
func TestReadHandle(t *testing.T) {
	c := newComputer(t)
	c.L.SetGlobal("bytesHandle", c.L.NewFunction(func(L *lua.LState) int {
		L.Push(ReadHandle(L, []byte("line1\nline2\r\nline3"), L.ToBool(1)))
		return 1
	}))
	probes := []string{
		`return h.read(), h.read(2), h.readLine(), h.readLine(true), h.readLine(), h.readLine(), h.read(), h.read(1), h.read(0), h.readAll()`,
		`return h.seek("end"), h.seek("set", 2), h.read(100), h.seek("cur", -4), h.readAll(), h.seek("set", 50), h.read(0), h.readLine(), h.seek()`,
		`return h.seek("cur", -1)`,
		`h.close() return pcall(h.read)`,
		`return pcall(h.read, -1)`,
		`return pcall(h.seek, "bad")`,
		`return type(h.write), type(h.flush)`,
	}
	for _, mode := range []struct {
		fsMode, binary string
	}{{"rb", "true"}, {"r", "false"}} {
		for _, probe := range probes {
			want := strs(c.eval(t, `local h = fs.open("lines.txt", "`+mode.fsMode+`") `+probe))
			open := len(c.fs.open)
			assert.Equal(t, want, strs(c.eval(t, `local h = bytesHandle(`+mode.binary+`) `+probe)), mode.fsMode+": "+probe)
			assert.Equal(t, open, len(c.fs.open), "a handle over bytes is no open file of the filesystem")
		}
	}
	// The modes differ in read() without a count: a byte as a number, or a one-byte string.
	assert.Equal(t, []string{"108", "l"}, strs(c.eval(t, `return bytesHandle(true).read(), bytesHandle(false).read()`)))
}

func TestHandleWritingModes(t *testing.T) {
	c := newComputer(t)
	tests := []struct {
		name, code, want string
	}{
		{"binary write of numbers is a byte", `local h = fs.open("f", "wb") h.write(65) h.write(66.9) h.write("C") h.writeLine(1) h.close()`, "ABC1\n"},
		{"text write of numbers is text", `local h = fs.open("f", "w") h.write(65) h.write(0.5) h.write(true) h.write(nil) h.close()`, "650.5truenil"},
		{"append", `local h = fs.open("f", "w") h.write("one") h.close() h = fs.open("f", "a") h.write("two") h.write("3") h.close()`, "onetwo3"},
		{"append handles cannot seek, as CC's", `local h = fs.open("f", "a") assert(h.seek == nil, "a: seek") h.close() h = fs.open("f", "ab") assert(h.seek == nil, "ab: seek") h.close()
			for _, mode in ipairs({"r", "rb", "w", "wb", "r+", "w+"}) do h = fs.open("f", mode) assert(type(h.seek) == "function", mode) h.close() end`, ""},
		{"w+ reads what it wrote", `local h = fs.open("f", "w+") h.write("abcdef") h.seek("set", 1) local s = h.read(2) h.write("X") h.close() assert(s == "bc", s)`, "abcXef"},
		{"r+ keeps contents", `local h = fs.open("f", "w") h.write("hello") h.close() h = fs.open("f", "r+") assert(h.readLine() == "hello") h.seek("set", 0) h.write("J") h.close()`, "Jello"},
		{"r+ on the read-only layer copies up", `local h = fs.open("base.txt", "r+") h.seek("set", 5) h.write("B") h.close() fs.copy("base.txt", "f")`, "from Base\n"},
		{"flushed data is visible to readers", `local h = fs.open("f", "w") h.write("x") h.flush() local r = fs.open("f", "r") assert(r.readAll() == "x") r.close() h.write("y") h.close()`, "xy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c.eval(t, `if fs.exists("f") then fs.delete("f") end `+tc.code)
			data, err := c.fs.ReadFile("f")
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(data))
		})
	}
}

func TestClosedHandlesAndCallStyles(t *testing.T) {
	c := newComputer(t)
	for _, call := range []string{
		`local h = fs.open("lines.txt", "r") h.close() h.readAll()`,
		`local h = fs.open("lines.txt", "r") h.close() h.readLine()`,
		`local h = fs.open("lines.txt", "r") h.close() h.read()`,
		`local h = fs.open("lines.txt", "r") h.close() h.close()`,
		`local h = fs.open("out", "w") h.close() h.write("x")`,
		`local h = fs.open("out", "w") h.close() h.flush()`,
		`local h = fs.open("out", "w") h.close() h.seek()`,
		// A closed handle is refused before the values are checked, as in CC ...
		`local h = fs.open("lines.txt", "r") h.close() h.read(-1)`,
		`local h = fs.open("lines.txt", "r") h.close() h.seek("bad")`,
	} {
		assert.Equal(t, "attempt to use a closed file", c.evalErr(t, call), call)
	}
	// ... but after the arguments' types.
	assert.Equal(t, "bad argument #1 (number expected, got string)", c.evalErr(t, `local h = fs.open("lines.txt", "r") h.close() h.read("x")`))
	// Methods take no self: a colon call hands the table over as argument #1.
	assert.Equal(t, "bad argument #1 (boolean expected, got table)", c.evalErr(t, `fs.open("lines.txt", "r"):readLine()`))
	assert.Equal(t, "bad argument #1 (number expected, got table)", c.evalErr(t, `fs.open("lines.txt", "r"):read()`))
	assert.Equal(t, []string{"line1\nline2\r\nline3"}, strs(c.eval(t, `local h = fs.open("lines.txt", "r") local s = h:readAll() h:close() return s`)))
	// write coerces whatever it gets, so a colon call writes the handle's tostring.
	c.eval(t, `local h = fs.open("colon", "w") h:write("x") h:close()`)
	data, err := c.fs.ReadFile("colon")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "table: "), "got %q", data)
}

func TestPathEscapesStayInside(t *testing.T) {
	outside := t.TempDir()
	writeHostFile(t, filepath.Join(outside, "secret"), "secret")
	c := newComputer(t)
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(c.base, "link")))
	require.NoError(t, os.Symlink(outside, filepath.Join(c.base, "linkdir")))
	require.NoError(t, os.MkdirAll(c.overlay, 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(c.overlay, "olink")))

	tests := []struct {
		expr string
		want []string
	}{
		{`fs.open("../../etc/passwd", "r")`, []string{"nil", "/../../etc/passwd: Invalid Path"}},
		{`fs.open("/rom/../../x", "w")`, []string{"nil", "/../x: Invalid Path"}},
		{`fs.exists("../../etc/passwd")`, []string{"false"}},
		{`fs.exists("link")`, []string{"false"}},
		{`fs.exists("linkdir/secret")`, []string{"false"}},
		{`fs.open("link", "r")`, []string{"nil", "/link: No such file"}},
		{`fs.open("olink/secret", "r")`, []string{"nil", "/olink/secret: No such file"}},
		{`fs.combine("/", "..")`, []string{".."}},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			assert.Equal(t, tc.want, strs(c.eval(t, "return "+tc.expr)))
		})
	}
	assert.Equal(t, "/../..: Invalid Path", c.evalErr(t, `fs.list("../..")`))
	assert.Equal(t, "/..: Invalid Path", c.evalErr(t, `fs.makeDir("..")`))
	assert.Equal(t, "/../x: Invalid Path", c.evalErr(t, `fs.find("../x")`))
	assert.NotContains(t, listOf(t, c.eval(t, `return fs.list("")`)[0]), "link")

	// Writing through an escaping symlink fails and leaves the outside untouched.
	res := strs(c.eval(t, `return fs.open("olink/secret", "w")`))
	assert.Equal(t, "nil", res[0])
	data, err := os.ReadFile(filepath.Join(outside, "secret"))
	require.NoError(t, err)
	assert.Equal(t, "secret", string(data))
	assert.Error(t, c.fs.WriteFile("../../escape", []byte("x")))
}

func TestFind(t *testing.T) {
	c := newComputer(t)
	tests := []struct {
		pattern string
		want    []string
	}{
		{"rom/programs/*", []string{"rom/programs/hello.lua", "rom/programs/help.lua"}},
		{"rom/*/h*", []string{"rom/programs/hello.lua", "rom/programs/help.lua"}},
		{"rom/programs/hel?.lua", []string{"rom/programs/help.lua"}},
		{"apis/lib?.lua", []string{"apis/libx.lua", "apis/liby.lua"}},
		{"*.txt", []string{"base.txt", "lines.txt"}},
		{"/base.txt", []string{"base.txt"}},
		{"nope", nil},
		{"nope/*", nil},
		{"*/colors.lua", nil},
		{"rom/*/colors.lua", []string{"rom/apis/colors.lua"}},
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			assert.Equal(t, tc.want, listOf(t, c.eval(t, `return fs.find("`+tc.pattern+`")`)[0]))
		})
	}
}

func TestComplete(t *testing.T) {
	c := newComputer(t)
	require.NoError(t, c.fs.WriteFile(".hidden", []byte("")))
	tests := []struct {
		call string
		want []string
	}{
		{`fs.complete("ba", "")`, []string{"se.txt"}},
		{`fs.complete("ap", "")`, []string{"is/", "is"}},
		{`fs.complete("ap", "", false, false)`, []string{"is/"}},
		{`fs.complete("lib", "apis")`, []string{"x.lua", "y.lua"}},
		{`fs.complete("/rom/pro", "apis")`, []string{"grams/", "grams"}},
		{`fs.complete("programs/he", "rom")`, []string{"llo.lua", "lp.lua"}},
		{`fs.complete("", "apis", {include_dirs = false})`, []string{"../", "libx.lua", "liby.lua"}},
		{`fs.complete(".", "", {include_hidden = false})`, []string{"hidden"}},
		{`fs.complete("", "", {include_hidden = false, include_files = false})`, []string{".", "apis/", "apis", "rom/", "rom"}},
		{`fs.complete("", "apis")`, []string{".", "..", "libx.lua", "liby.lua"}},
		{`fs.complete("x", "nope")`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.call, func(t *testing.T) {
			assert.Equal(t, tc.want, listOf(t, c.eval(t, "return "+tc.call)[0]))
		})
	}
}

func TestSpaceAndOpenLimits(t *testing.T) {
	c := newComputer(t)
	res := c.eval(t, `
		local h = fs.open("big", "wb")
		local ok, err = pcall(h.write, string.rep("x", 2000000))
		h.close()
		return ok, err`)
	assert.Equal(t, []string{"false", "<string>:3: Out of space"}, strs(res)) // at the line calling pcall
	res = c.eval(t, `
		local h = fs.open("big2", "wb")
		h.write(string.rep("x", 10000))
		h.close()
		return fs.getSize("big2"), fs.getFreeSpace("/")`)
	assert.Equal(t, "10000", res[0].String())
	// apis, base.txt, lines.txt, libx, liby, the empty "big" left by the failed write, and
	// big2 (10000 bytes).
	assert.Equal(t, lua.LNumber(RootCapacity-6*minimumFileSize-10000), res[1])

	res = c.eval(t, `
		local hs = {}
		for i = 1, 128 do hs[i] = assert(fs.open("base.txt", "r")) end
		local h, err = fs.open("base.txt", "r")
		for i = 1, 128 do hs[i].close() end
		local again = fs.open("base.txt", "r")
		again.close()
		return h, err, again ~= nil`)
	assert.Equal(t, []string{"nil", "Too many files already open", "true"}, strs(res))
}

func TestGoHelpersAndMapFSMount(t *testing.T) {
	spec := fstest.MapFS{"cases/a_spec.lua": {Data: []byte("it()")}}
	disk := t.TempDir()
	c := newComputer(t, Mount{At: "/spec/1", FS: spec}, Mount{At: "disk", Dir: disk})

	require.NoError(t, c.fs.WriteFile("/deep/dir/file.txt", []byte("data")))
	assert.True(t, c.fs.Exists("deep/dir/file.txt"))
	assert.True(t, c.fs.IsDir("/deep/dir"))
	assert.False(t, c.fs.IsDir("deep/dir/file.txt"))
	names, err := c.fs.List("deep")
	require.NoError(t, err)
	assert.Equal(t, []string{"dir"}, names)
	_, err = c.fs.List("deep/dir/file.txt")
	assert.EqualError(t, err, "/deep/dir/file.txt: Not a directory")

	// Nested read-only mount: its parent shows up as a directory.
	assert.True(t, c.fs.IsDir("spec"))
	names, err = c.fs.List("spec")
	require.NoError(t, err)
	assert.Equal(t, []string{"1"}, names)
	data, err := c.fs.ReadFile("spec/1/cases/a_spec.lua")
	require.NoError(t, err)
	assert.Equal(t, "it()", string(data))
	assert.Error(t, c.fs.WriteFile("spec/1/x", []byte("x")))
	assert.Equal(t, []string{"1", "true", "true"}, strs(c.eval(t, `return fs.getDrive("spec/1"), fs.isReadOnly("spec/1/cases"), fs.isDriveRoot("spec/1")`)))

	// A writable extra mount writes to its own host directory.
	c.eval(t, `local h = fs.open("disk/saved", "w") h.write("s") h.close()`)
	data, err = os.ReadFile(filepath.Join(disk, "saved"))
	require.NoError(t, err)
	assert.Equal(t, "s", string(data))
	assert.Equal(t, []string{"disk", "false", "125000"}, strs(c.eval(t, `return fs.getDrive("disk"), fs.isReadOnly("disk/saved"), fs.getCapacity("disk")`)))
	assert.Equal(t, "/disk: Access denied", c.evalErr(t, `fs.delete("disk")`))
	// A mount point moved is copied, then refused its delete, as CC's FileSystem.move copies
	// across mounts before it deletes: the copy stays, and so does the disk.
	assert.Equal(t, "/disk: Access denied", c.evalErr(t, `fs.move("disk", "backup")`))
	assert.Equal(t, []string{"true", "true"}, strs(c.eval(t, `return fs.exists("backup/saved"), fs.exists("disk/saved")`)))
	// Moving across mounts copies and deletes.
	c.eval(t, `fs.move("disk/saved", "fromdisk")`)
	_, err = os.Stat(filepath.Join(disk, "saved"))
	assert.True(t, os.IsNotExist(err))
	assert.True(t, c.fs.Exists("fromdisk"))
}

func TestNewValidation(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		mounts  []Mount
		overlay string
		want    string
	}{
		{"no root", []Mount{{At: "/rom", FS: romFiles}}, "", "no root filesystem"},
		{"both sources", []Mount{{At: "/", Dir: dir, FS: romFiles}}, "", "exactly one of Dir and FS"},
		{"no source", []Mount{{At: "/x"}}, dir, "exactly one of Dir and FS"},
		{"twice", []Mount{{At: "/rom", FS: romFiles}, {At: "ROM/", FS: romFiles}}, dir, "mounted twice"},
		{"escaping", []Mount{{At: "../x", FS: romFiles}}, dir, "leaves the root"},
		{"missing dir", []Mount{{At: "/", Dir: filepath.Join(dir, "missing"), ReadOnly: true}}, "", "open host directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.mounts, tc.overlay)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	// Without an overlay a writable root mount is written in place, a read-only one refuses.
	f, err := New([]Mount{{At: "/", Dir: dir}}, "")
	require.NoError(t, err)
	require.NoError(t, f.WriteFile("x", []byte("in place")))
	data, err := os.ReadFile(filepath.Join(dir, "x"))
	require.NoError(t, err)
	assert.Equal(t, "in place", string(data))
	require.NoError(t, f.Close())

	f, err = New([]Mount{{At: "/", Dir: dir, ReadOnly: true}}, "")
	require.NoError(t, err)
	assert.EqualError(t, f.WriteFile("y", []byte("no")), "/y: Access denied")
	require.NoError(t, f.Close())

	// /rom is read-only even when the mount says otherwise.
	rom := t.TempDir()
	f, err = New([]Mount{{At: "/rom", Dir: rom}}, filepath.Join(dir, "ov"))
	require.NoError(t, err)
	assert.EqualError(t, f.WriteFile("rom/z", []byte("no")), "/rom/z: Access denied")
	require.NoError(t, f.Close())
}

func TestConcurrentGoHelpersAndLua(t *testing.T) {
	c := newComputer(t)
	const writers, rounds = 4, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				name := fmt.Sprintf("w%d/f%d", w, r)
				assert.NoError(t, c.fs.WriteFile(name, []byte(name)))
				data, err := c.fs.ReadFile(name)
				assert.NoError(t, err)
				assert.Equal(t, name, string(data))
				_, _ = c.fs.List("")
			}
		}()
	}
	// The Lua side keeps working on its own goroutine meanwhile.
	for range rounds {
		c.eval(t, `local h = fs.open("lua.txt", "w") h.write("x") h.close() fs.list("")`)
	}
	wg.Wait()
	for w := range writers {
		names, err := c.fs.List(fmt.Sprintf("w%d", w))
		require.NoError(t, err)
		assert.Len(t, names, rounds)
	}
}

func TestOutOfSpaceOnCreate(t *testing.T) {
	c := newComputer(t)
	// Fill the drive to within a file's minimum cost, then creating files and directories fails.
	free := int64(c.eval(t, `return fs.getFreeSpace("")`)[0].(lua.LNumber))
	require.NoError(t, c.fs.WriteFile("fill", make([]byte, free-100)))
	assert.Equal(t, []string{"100"}, strs(c.eval(t, `return fs.getFreeSpace("/")`)))
	assert.Equal(t, []string{"nil", "/more: Out of space"}, strs(c.eval(t, `return fs.open("more", "w")`)))
	assert.Equal(t, "/dir: Out of space", c.evalErr(t, `fs.makeDir("dir")`))
	// With room for one directory, making a/b (two new ones) fails, and a alone fits.
	c.eval(t, `fs.delete("fill")`)
	free = int64(c.eval(t, `return fs.getFreeSpace("")`)[0].(lua.LNumber))
	require.NoError(t, c.fs.WriteFile("fill", make([]byte, free-minimumFileSize)))
	assert.Equal(t, "/a/b: Out of space", c.evalErr(t, `fs.makeDir("a/b")`))
	assert.False(t, c.fs.Exists("a"))
	c.eval(t, `fs.makeDir("a")`)
	assert.True(t, c.fs.IsDir("a"))
	// Rewriting an existing file within its size still works.
	c.eval(t, `local h = fs.open("base.txt", "w") h.write("ok") h.close()`)
}

func TestRootCapacityIsTheServersSpaceLimit(t *testing.T) {
	c := newComputer(t)
	before := int64(c.eval(t, `return fs.getFreeSpace("/")`)[0].(lua.LNumber))
	c.fs.SetRootCapacity(RootCapacity + 4<<20)
	after := int64(c.eval(t, `return fs.getFreeSpace("/")`)[0].(lua.LNumber))
	assert.Equal(t, before+4<<20, after)
	// A file bigger than the default drive now fits.
	c.eval(t, `local h = fs.open("big.bin", "wb") h.write(string.rep("x", 1100000)) h.close()`)
	assert.Equal(t, []string{"1100000"}, strs(c.eval(t, `return fs.getSize("big.bin")`)))
}

func TestAnEmptyDriveHasAllItsCapacityFree(t *testing.T) {
	f, err := New([]Mount{{At: "/rom", FS: romFiles}}, filepath.Join(t.TempDir(), "overlay"))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, f.Close()) })
	L := lua.NewState()
	t.Cleanup(L.Close)
	f.Install(L)
	c := &computer{fs: f, L: L}
	// CC does not charge the drive's own root directory against its capacity.
	assert.Equal(t, []string{"1000000", "1000000"}, strs(c.eval(t, `return fs.getFreeSpace(""), fs.getCapacity("")`)))
	// So a file of exactly the capacity fits, and not one byte more.
	res := c.eval(t, `
		local h = fs.open("all", "wb")
		local ok = pcall(h.write, string.rep("x", 1000000))
		local more, err = pcall(h.write, "x")
		h.close()
		return ok, more, err, fs.getFreeSpace("")`)
	assert.Equal(t, []string{"true", "false", "<string>:4: Out of space", "0"}, strs(res))
}

// TestHostNamesAreCCsJavaStrings: a file name crosses the mount's edge as CC: Tweaked's
// Java side carries it, one character per byte, stored as UTF-8 on the host: the CC name
// "k\xFCche.txt" is the host file "küche.txt", the host's "größe.txt" lists as the CC bytes
// "gr\xF6\xDFe.txt", a character CC cannot hold lists as '?', and a directory whose name has
// a byte past ASCII lists its files (it listed nothing).
func TestHostNamesAreCCsJavaStrings(t *testing.T) {
	c := newComputer(t)
	writeHostFile(t, filepath.Join(c.base, "größe.txt"), "big")
	writeHostFile(t, filepath.Join(c.base, "日.txt"), "sun")

	c.eval(t, `fs.makeDir("/\233") local f = fs.open("/\233/y", "w") f.write("in") f.close()
		f = fs.open("/k\252che.txt", "w") f.write("kitchen") f.close()
		fs.move("/k\252che.txt", "/k\252che2.txt")`)
	snap := snapshot(t, c.overlay)
	assert.Equal(t, "in", snap[filepath.Join("é", "y")], "%q", snap)
	assert.Equal(t, "kitchen", snap["küche2.txt"], "%q", snap)
	assert.Equal(t, []string{"y"}, listOf(t, c.eval(t, `return fs.list("/\233")`)[0]))

	names := listOf(t, c.eval(t, `return fs.list("/")`)[0])
	assert.Contains(t, names, "gr\xf6\xdfe.txt")
	assert.Contains(t, names, "?.txt")
	assert.Contains(t, names, "k\xfcche2.txt")
	assert.Contains(t, names, "\xe9")
	assert.Equal(t, []string{"big", "true"}, strs(c.eval(t,
		`local f = fs.open("/gr\246\223e.txt", "r") local s = f.readAll() f.close() return s, fs.exists("/\233/y")`)))

	c.eval(t, `fs.delete("/\233")`)
	_, err := os.Stat(filepath.Join(c.overlay, "é"))
	assert.True(t, os.IsNotExist(err), "deleted on the host too: %v", err)
}
