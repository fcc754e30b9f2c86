package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// repo makes a throwaway repository: go.work, trapos/ with files, packages/.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files["go.work"] = "go 1.26\n"
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	return root
}

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRunProgramSucceeds(t *testing.T) {
	root := repo(t, map[string]string{
		// Not "hello": the ROM's fun/hello comes first on the path, as in CC.
		"trapos/programs/greet.lua": `print("hello", table.concat({...}, ","), settings.get("greet.count"), os.getComputerID(), os.getComputerLabel())`,
	})
	code, out, errOut := run(t, "run", "--root", root, "--id", "4", "--label", "box",
		"--set", "greet.count=3", "greet", "a b", "--help")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, "hello\ta b,--help\t3\t4\tbox\n", out)
}

func TestRunProgramErrorIsPrintedLikeTheShell(t *testing.T) {
	root := repo(t, map[string]string{
		"trapos/programs/bad.lua": "print(\"before\")\nerror(\"boom\")\n",
	})
	code, out, _ := run(t, "run", "--root", root, "/programs/bad.lua")
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, out, "before\n/programs/bad.lua:2: boom\n")
}

func TestRunMissingProgram(t *testing.T) {
	root := repo(t, map[string]string{"trapos/.keep": ""})
	code, out, _ := run(t, "run", "--root", root, "nothing-here")
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, out, "No such program")
}

func TestRunTimeLimit(t *testing.T) {
	root := repo(t, map[string]string{"trapos/programs/wait.lua": `os.pullEvent("never")`})
	code, _, errOut := run(t, "run", "--root", root, "--time-limit", "100ms", "wait")
	assert.Equal(t, ExitTimeLimit, code)
	assert.Equal(t, "fakecraft: --time-limit 100ms ran out: fakecraft stopped the computer\n", errOut)
}

// TestTestTimeLimitIsAHangGuard: `fakecraft test` over a directory (the README's `test
// trapos/tests`) waits out its specs' timers in real time, over half a minute for trapos/tests,
// so its default limit is a guard against a hang (10m, as conformance's), not run's 30s for one
// program, which stopped that documented command just before its end.
func TestTestTimeLimitIsAHangGuard(t *testing.T) {
	defaultLimit := func(command string) string {
		_, out, _ := run(t, command, "--help")
		limit := regexp.MustCompile(`--time-limit=(\S+)`).FindStringSubmatch(out)
		require.NotNil(t, limit, out)
		return limit[1]
	}
	assert.Equal(t, "10m", defaultLimit("test"))
	assert.Equal(t, "30s", defaultLimit("run"))
}

// TestTestTakesAYieldTimeout: `fakecraft test --yield-timeout` is how long one resume may run
// before "Too long without yielding" (CC's 7 s by default, in real time); TestLuaSpecs gives a
// -race build on a loaded machine more. A spec that never yields is stopped by it (or the
// boot is, by so short a one), long before the 5 s time limit, which CC's 7 s would have let
// run out first.
func TestTestTakesAYieldTimeout(t *testing.T) {
	_, out, _ := run(t, "test", "--help")
	assert.Contains(t, out, "--yield-timeout=7s")
	root := repo(t, map[string]string{"trapos/tests/spin_spec.lua": `describe("a loop", function() it("never yields", function()
  while true do end
end) end)`})
	code, out, errOut := run(t, "test", "--root", root, "--time-limit", "5s", "--yield-timeout", "10ms")
	assert.Equal(t, ExitFailed, code, errOut+out)
	// Wherever the 10 ms lands (the spec, or the boot), the message is CC's, wrapped at the
	// screen's width as printError wraps it: after a long path ("/rom/apis/settings.lua:72: Too
	// long without" then "yielding"), across two rows.
	assert.Contains(t, strings.Join(strings.Fields(out), " "), "Too long without yielding", out)

	code, _, errOut = run(t, "test", "--root", root, "--yield-timeout", "0s")
	assert.Equal(t, ExitUsage, code)
	assert.Equal(t, "fakecraft: --yield-timeout 0s: must be positive\n", errOut)
}

// TestTheHarnessTakesNoneOfTheComputersRoom: trapos/tests, the specs, is the harness, not
// files a computer holds, so a computer over trapos/ has CC's 1 MB on top of it, for `test`
// and `run` alike: trapos/tests grew past what trapos/ left of 1 MB, and a spec writing
// 64 KiB, or a host writing 40 KB through MCP, failed with Out of space.
func TestTheHarnessTakesNoneOfTheComputersRoom(t *testing.T) {
	const write = `local h = assert(fs.open("/out.bin", "wb"))
h.write(string.rep("y", 65536))
h.close()
assert(fs.getSize("/out.bin") == 65536, "written")
assert(fs.getFreeSpace("/") > 900000, "the computer's own room is left: " .. fs.getFreeSpace("/"))
print("written")`
	root := repo(t, map[string]string{
		"trapos/tests/fixture.txt":    strings.Repeat("x", 990_000),
		"trapos/tests/write_spec.lua": `describe("a spec", function() it("writes 64 KiB", function()` + "\n" + write + "\nend) end)",
		"trapos/programs/write.lua":   write,
	})
	code, out, errOut := run(t, "test", "--root", root)
	assert.Equal(t, ExitOK, code, errOut+out)
	assert.Contains(t, out, "1 passed, 0 failed")

	code, out, errOut = run(t, "run", "--root", root, "write")
	assert.Equal(t, ExitOK, code, errOut+out)
	assert.Equal(t, "written\n", out)
}

// TestRunTimeLimitZeroIsNone: --time-limit 0 is no limit, as it is for shell (run stopped
// at once), and a negative one is refused in one line.
func TestRunTimeLimitZeroIsNone(t *testing.T) {
	root := repo(t, map[string]string{"trapos/programs/done.lua": `print("done")`})
	code, out, errOut := run(t, "run", "--root", root, "--time-limit", "0s", "done")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, "done\n", out)

	code, out, errOut = run(t, "run", "--root", root, "--time-limit=-1s", "done")
	assert.Equal(t, ExitUsage, code)
	assert.Empty(t, out)
	assert.Equal(t, "fakecraft: --time-limit -1s: give a positive duration, or 0 for no limit\n", errOut)
}

func TestRunStartsAutostartServers(t *testing.T) {
	root := repo(t, map[string]string{
		"trapos/servers/d.lua":      `print("daemon up") os.queueEvent("daemon_ready") while true do os.pullEvent() end`,
		"trapos/programs/cmd.lua":   `os.pullEvent("daemon_ready") print("saw daemon")`,
		"packages/p/ccpm.json":      `{"name":"p","autostart":["servers/d.lua"]}`,
		"packages/other/ccpm.json":  `{"name":"other","autostart":[]}`,
		"packages/notapkg/README":   `x`,
		"trapos/programs/alone.lua": `print(_G.daemon == nil)`,
	})
	code, out, errOut := run(t, "run", "--root", root, "--time-limit", "5s", "cmd")
	assert.Equal(t, ExitOK, code, errOut+out)
	assert.Equal(t, "daemon up\nsaw daemon\n", out)

	code, out, _ = run(t, "run", "--root", root, "--no-autostart", "alone")
	assert.Equal(t, ExitOK, code)
	assert.Equal(t, "true\n", out)

	code, _, errOut = run(t, "run", "--root", root, "--package", "missing", "alone")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, `package "missing" not found`)
}

func TestRunBadFlags(t *testing.T) {
	root := repo(t, map[string]string{"trapos/.keep": ""})
	code, _, errOut := run(t, "run", "--root", root, "--set", "novalue", "x")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "KEY=VALUE")
	code, _, _ = run(t, "run")
	assert.Equal(t, ExitUsage, code)
}

// TestRunUnknownFlagBeforeProgram: a flag fakecraft does not know, before the program, is a
// mistake on fakecraft's command line (it ran as a program named --bogus); after the program,
// flags stay the program's, and -- still lets a program's name start with a dash.
func TestRunUnknownFlagBeforeProgram(t *testing.T) {
	root := repo(t, map[string]string{"trapos/programs/args.lua": `print(table.concat({...}, ","))`})
	for _, args := range [][]string{{"--bogus"}, {"--bogus=1", "args"}, {"-x", "args"}, {"--bare", "--bogus"}} {
		code, out, errOut := run(t, append([]string{"run", "--root", root}, args...)...)
		assert.Equal(t, ExitUsage, code, args)
		assert.Empty(t, out, args)
		assert.Contains(t, errOut, "fakecraft: unknown flag", args)
		assert.Contains(t, errOut, "usage: fakecraft run", args)
	}

	code, out, errOut := run(t, "run", "--root", root, "args", "--bogus", "-x")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, "--bogus,-x\n", out)

	code, out, _ = run(t, "run", "--root", root, "--", "--bogus")
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, out, "No such program")
}

// TestRunRefusesIdsCCCannotHave: --id is a CC computer id, 0 to 2^31-1; anything else is
// one line naming the range (the gateway would refuse "-1:" later, less clearly).
func TestRunRefusesIdsCCCannotHave(t *testing.T) {
	for _, id := range []string{"-1", "99999999999"} {
		code, _, errOut := run(t, "run", "--bare", "--id="+id)
		assert.Equal(t, ExitUsage, code, id)
		assert.Equal(t, "fakecraft: --id "+id+": CC's computer ids run from 0 to 2147483647\n", errOut)
	}
}

func TestTestCommand(t *testing.T) {
	root := repo(t, map[string]string{
		"trapos/tests/a_spec.lua": `describe("a", function() it("works", function() expect(1 + 1):eq(2) end) end)`,
	})
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "b_spec.lua"),
		[]byte(`describe("b", function() it("fails", function() expect(1):eq(2) end) end)`), 0o644))

	code, out, errOut := run(t, "test", "--root", root)
	assert.Equal(t, ExitOK, code, errOut+out)
	assert.Contains(t, out, "1 passed, 0 failed")

	code, out, _ = run(t, "test", "--root", root, filepath.Join(root, "trapos", "tests"), filepath.Join(outside, "b_spec.lua"))
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, out, "1 passed, 1 failed")
}

// TestTestCommandNonASCIINames: spec files whose host names are not ASCII run, under
// trapos/ and outside it (the computer's path is CC's bytes for the host's UTF-8 name).
func TestTestCommandNonASCIINames(t *testing.T) {
	spec := `describe("x", function() it("runs", function() end) end)`
	root := repo(t, map[string]string{"trapos/tests/größe_spec.lua": spec})
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "küche_spec.lua"), []byte(spec), 0o644))
	code, out, errOut := run(t, "test", "--root", root, filepath.Join(root, "trapos", "tests"), outside)
	assert.Equal(t, ExitOK, code, errOut+out)
	assert.Contains(t, out, "2 passed, 0 failed")
}

// TestRepeatableFlagsKeepCommas: each occurrence of a repeatable flag is one value, commas
// and all: a setting's value (a password) may hold one, and so may a file name.
func TestRepeatableFlagsKeepCommas(t *testing.T) {
	root := repo(t, map[string]string{
		"trapos/programs/show.lua": `print(settings.get("x.y"), settings.get("p"), settings.get("r"))`,
	})
	code, out, errOut := run(t, "run", "--root", root, "--no-autostart",
		"--set", "x.y=a,b", "--set", "p=q,r=s", "show")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, "a,b\tq,r=s\tnil\n", out)

	code, _, errOut = run(t, "run", "--root", root, "--package", "a,b", "show")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, `package "a,b"`)

	src := filepath.Join(t.TempDir(), "a,b.txt")
	require.NoError(t, os.WriteFile(src, []byte("x"), 0o644))
	code, out, errOut = run(t, "run", "--root", shellRepo(t), "--no-autostart", "--drop", src, "import")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "Transferring a,b.txt\n")

	for _, cmd := range []string{"run", "shell", "test"} {
		_, out, _ = run(t, cmd, "--help")
		assert.NotContains(t, out, ",...", "%s --help", cmd)
	}
}
