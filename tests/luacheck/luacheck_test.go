// Package luacheck_test runs luacheck (Debian's lua-check) over the repository's Lua with the
// repository's .luacheckrc, which declares CC: Tweaked's globals and names the files checked.
// Without luacheck on PATH the tests skip, saying how to get it: plain `go test work` needs
// only Go, and .ci/run installs luacheck before it runs them.
package luacheck_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/repo"
)

// configFile is luacheck's configuration at the repository's root.
const configFile = ".luacheckrc"

// runTimeout bounds one luacheck run (it takes well under a second on the whole tree).
const runTimeout = 2 * time.Minute

// luacheckPath returns luacheck's path, or skips the test saying how to install it.
func luacheckPath(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("luacheck")
	if err != nil {
		t.Skip("luacheck is not on PATH: install Debian's lua-check (apt-get install lua-check) to run this check; .ci/run installs it")
	}
	return path
}

// run runs `luacheck --no-color .` in dir; returns its output and exit code.
func run(t *testing.T, luacheck, dir string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, luacheck, "--no-color", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		return string(out), 0
	}
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "luacheck did not run: %s", out)
	return string(out), exit.ExitCode()
}

// TestRepositoryLuaHasNoWarnings: trapos/ and the installer, as .luacheckrc lists them.
func TestRepositoryLuaHasNoWarnings(t *testing.T) {
	luacheck := luacheckPath(t)
	root, err := repo.Root()
	require.NoError(t, err)
	out, code := run(t, luacheck, root)
	assert.Equal(t, 0, code, "luacheck found warnings (fix them, or declare a CC global in %s):\n%s", configFile, out)
}

// TestConfigCatchesMistakes runs the repository's configuration over a small tree of its own:
// CC's globals and the spec runner's pass where they belong, and a mistake is a warning.
func TestConfigCatchesMistakes(t *testing.T) {
	luacheck := luacheckPath(t)
	root, err := repo.Root()
	require.NoError(t, err)
	config, err := os.ReadFile(filepath.Join(root, configFile))
	require.NoError(t, err)

	cases := []struct {
		name string
		path string // where the file goes in the tree
		src  string
		want string // a substring of the warning; "" when the file must pass
	}{
		{name: "CC globals", path: "trapos/apis/good.lua", src: "local w = term.getSize();\nos.queueEvent('x', textutils.serialise({}));\nprintError(w, _HOST, colours.red);\nlocal p = table.pack(os.pullEventRaw());\nreturn p;\n"},
		{name: "spec runner in a spec", path: "trapos/tests/good_spec.lua", src: "describe('x', function()\n  it('y', function() expect(1):eq(1); end);\nend);\n"},
		{name: "installer SOURCE", path: "tools/trap-sandbox/internal/installer/good.lua", src: "print(SOURCE.files);\n"},
		{name: "unused variable", path: "trapos/apis/unused.lua", src: "local x = 1;\n", want: "unused variable 'x'"},
		{name: "global assignment", path: "trapos/programs/leak.lua", src: "answer = 42;\n", want: "setting non-standard global variable 'answer'"},
		{name: "typo in a CC API", path: "trapos/apis/typo.lua", src: "os.pullEvnt();\n", want: "accessing undefined field 'pullEvnt' of global 'os'"},
		{name: "spec runner outside the specs", path: "trapos/apis/spec.lua", src: "describe('x', function() end);\n", want: "accessing undefined variable 'describe'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, configFile), config, 0o644))
			file := filepath.Join(dir, filepath.FromSlash(tc.path))
			require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
			require.NoError(t, os.WriteFile(file, []byte(tc.src), 0o644))
			out, code := run(t, luacheck, dir)
			if tc.want == "" {
				assert.Equal(t, 0, code, out)
				assert.Contains(t, out, "Total: 0 warnings / 0 errors in 1 file", "the file must be checked")
				return
			}
			assert.NotEqual(t, 0, code, out)
			assert.Contains(t, out, tc.want)
		})
	}
}
