package luasyntax_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/repo"
	"tests/luasyntax"
)

// luaTrees are the repo directories whose Lua must compile: the in-game tree (with its specs),
// the ROM fakecraft mounts and fakecraft's launcher programs.
var luaTrees = []string{"trapos", "tools/fakecraft/romfs/rom", "tools/fakecraft/romfs/launcher"}

func TestRepositoryLuaCompiles(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)
	for _, tree := range luaTrees {
		files, err := luasyntax.Files(filepath.Join(root, filepath.FromSlash(tree)))
		require.NoError(t, err)
		require.NotEmpty(t, files, "no Lua files under %s: the walk is looking in the wrong place", tree)
		for _, f := range files {
			rel, err := filepath.Rel(root, f)
			require.NoError(t, err)
			t.Run(filepath.ToSlash(rel), func(t *testing.T) {
				assert.NoError(t, luasyntax.CheckFile(f))
			})
		}
	}
}

func TestCheckSource(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want string // substring of the error; "" means the source is valid
	}{
		{name: "trapos style", src: "local function f(a)\n  return a + 1;\nend\nreturn { f = f };\n"},
		{name: "goto and labels", src: "for i = 1, 3 do\n  if i == 2 then goto continue end\n  ::continue::\nend\n"},
		{name: "unclosed function", src: "local function f()\n  return 1;\n", want: "parse:"},
		{name: "stray token", src: "local x = = 1\n", want: "parse:"},
		{name: "unfinished string", src: "print('oops)\n", want: "parse:"},
		{name: "break outside loop", src: "break\n", want: "compile:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := luasyntax.CheckSource("case.lua", []byte(tc.src))
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "case.lua", "the error names the file")
		})
	}
}

func TestCheckFileReportsMissingFile(t *testing.T) {
	err := luasyntax.CheckFile(filepath.Join(t.TempDir(), "absent.lua"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read lua source")
}
