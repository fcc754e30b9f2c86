package packages_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/repo"
	"tests/packages"
)

// TestRepositoryPackages is the real check: the repo's own index, descriptors and trapos/ tree.
func TestRepositoryPackages(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)
	assert.NoError(t, packages.Check(root))
}

// TestRepositoryShipsSandboxDaemon pins what the seed asks of the two packages, so that a
// consistent-but-wrong edit (dropping the daemon, forgetting the meta dependency) still fails.
func TestRepositoryShipsSandboxDaemon(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)

	sandbox := readDescriptor(t, filepath.Join(root, "packages", "trapos-sandbox", "ccpm.json"))
	assert.Subset(t, sandbox.Files, []string{"apis/libsandbox.lua", "servers/sandbox.lua", "programs/sandbox.lua"})
	assert.Equal(t, []string{"servers/sandbox.lua"}, sandbox.Autostart)

	meta := readDescriptor(t, filepath.Join(root, "packages", "trapos", "ccpm.json"))
	assert.Contains(t, meta.Dependencies, "trapos-sandbox")
	assert.Empty(t, meta.Files, "the meta-package ships no files of its own")
}

// TestRepositoryShipsEveryAPI catches a library added under trapos/apis/ but forgotten in the
// package: every non-test Lua file there must be installed by some package.
func TestRepositoryShipsEveryAPI(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)

	shipped := map[string]bool{}
	dirs, err := os.ReadDir(filepath.Join(root, "packages"))
	require.NoError(t, err)
	for _, d := range dirs {
		if d.IsDir() {
			for _, f := range readDescriptor(t, filepath.Join(root, "packages", d.Name(), "ccpm.json")).Files {
				shipped[f] = true
			}
		}
	}
	for _, dir := range []string{"apis", "servers", "programs"} {
		matches, err := filepath.Glob(filepath.Join(root, "trapos", dir, "*.lua"))
		require.NoError(t, err)
		for _, m := range matches {
			rel := dir + "/" + filepath.Base(m)
			assert.True(t, shipped[rel], "%s exists under trapos/ but no package ships it", rel)
		}
	}
}

// TestSandboxUninstallKnowsThePackagesFiles holds the client's own list of its install paths
// (libsandboxuninstall's PACKAGE_FILES, where sandbox uninstall looks for a stopped first
// install's <file>.new without a record) to the package's: a file added to the package and not
// to the list would be left behind.
func TestSandboxUninstallKnowsThePackagesFiles(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)
	sandbox := readDescriptor(t, filepath.Join(root, "packages", "trapos-sandbox", "ccpm.json"))
	source, err := os.ReadFile(filepath.Join(root, "trapos", "apis", "libsandboxuninstall.lua"))
	require.NoError(t, err)
	list := regexp.MustCompile(`(?s)\nlocal PACKAGE_FILES = \{\n(.*?)\n\};`).FindSubmatch(source)
	require.NotNil(t, list, "libsandboxuninstall.lua has no PACKAGE_FILES list")
	var listed []string
	for _, line := range strings.Split(string(list[1]), "\n") {
		path, ok := strings.CutSuffix(strings.TrimSpace(line), ",")
		require.True(t, ok, "PACKAGE_FILES line %q", line)
		listed = append(listed, strings.Trim(path, `"`))
	}
	assert.Equal(t, sandbox.Files, listed, "libsandboxuninstall's PACKAGE_FILES is not packages/trapos-sandbox/ccpm.json's files")
}

func readDescriptor(t *testing.T, file string) packages.Descriptor {
	t.Helper()
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	var d packages.Descriptor
	require.NoError(t, json.Unmarshal(raw, &d))
	return d
}

// tree is a synthetic repository: files by slash path, written under a temp dir.
type tree map[string]string

func validTree() tree {
	return tree{
		"go.work":                       "go 1.26\n",
		"packages/index.json":           `{"packages":[{"name":"meta","version":"1.0.0"},{"name":"lib","version":"0.2.0"}]}`,
		"packages/meta/ccpm.json":       `{"name":"meta","version":"1.0.0","description":"meta","dependencies":["lib"],"files":[],"autostart":[]}`,
		"packages/lib/ccpm.json":        `{"name":"lib","version":"0.2.0","description":"lib","dependencies":[],"files":["apis/liba.lua","servers/d.lua"],"autostart":["servers/d.lua"]}`,
		"trapos/apis/liba.lua":          "return {};\n",
		"trapos/servers/d.lua":          "print('d');\n",
		"trapos/programs/unrelated.lua": "print('x');\n",
	}
}

func (tr tree) write(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range tr {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	return root
}

func TestCheckAcceptsValidTree(t *testing.T) {
	assert.NoError(t, packages.Check(validTree().write(t)))
}

// TestCheckRejects shows that each check fails on bad input: every case breaks one thing in an
// otherwise valid tree and expects the specific complaint.
func TestCheckRejects(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(tree)
		remove []string
		want   string
	}{
		{
			name: "package missing from index",
			edit: func(tr tree) {
				tr["packages/index.json"] = `{"packages":[{"name":"meta","version":"1.0.0"}]}`
			},
			want: `packages/lib/ccpm.json: package "lib" is not listed in the index`,
		},
		{
			name: "index lists a package with no descriptor",
			edit: func(tr tree) {
				tr["packages/index.json"] = `{"packages":[{"name":"meta","version":"1.0.0"},{"name":"lib","version":"0.2.0"},{"name":"ghost","version":"1.0.0"}]}`
			},
			want: `index: package "ghost" has no packages/ghost/ccpm.json`,
		},
		{
			name: "version mismatch",
			edit: func(tr tree) {
				tr["packages/index.json"] = `{"packages":[{"name":"meta","version":"1.0.1"},{"name":"lib","version":"0.2.0"}]}`
			},
			want: `packages/meta/ccpm.json: version "1.0.0", but the index says "1.0.1"`,
		},
		{
			name: "index lists a package twice",
			edit: func(tr tree) {
				tr["packages/index.json"] = `{"packages":[{"name":"meta","version":"1.0.0"},{"name":"lib","version":"0.2.0"},{"name":"lib","version":"0.2.0"}]}`
			},
			want: `index: package "lib" is listed twice`,
		},
		{
			name:   "listed file missing under trapos",
			remove: []string{"trapos/apis/liba.lua"},
			want:   `packages/lib/ccpm.json: file "apis/liba.lua" does not exist under trapos/`,
		},
		{
			name: "file path escapes trapos",
			edit: func(tr tree) {
				tr["packages/lib/ccpm.json"] = `{"name":"lib","version":"0.2.0","description":"lib","dependencies":[],"files":["../go.work"],"autostart":[]}`
			},
			want: `packages/lib/ccpm.json: file "../go.work" is not a clean relative install path`,
		},
		{
			name: "autostart not among files",
			edit: func(tr tree) {
				tr["packages/lib/ccpm.json"] = `{"name":"lib","version":"0.2.0","description":"lib","dependencies":[],"files":["apis/liba.lua"],"autostart":["servers/d.lua"]}`
			},
			want: `packages/lib/ccpm.json: autostart "servers/d.lua" is not among the package's files`,
		},
		{
			name: "dependency not in index",
			edit: func(tr tree) {
				tr["packages/meta/ccpm.json"] = `{"name":"meta","version":"1.0.0","description":"meta","dependencies":["lib","nope"],"files":[],"autostart":[]}`
			},
			want: `packages/meta/ccpm.json: dependency "nope" is not a package in the index`,
		},
		{
			name: "dependency cycle",
			edit: func(tr tree) {
				tr["packages/lib/ccpm.json"] = `{"name":"lib","version":"0.2.0","description":"lib","dependencies":["meta"],"files":["apis/liba.lua","servers/d.lua"],"autostart":["servers/d.lua"]}`
			},
			want: `dependency cycle: lib -> meta -> lib`,
		},
		{
			name: "required field missing",
			edit: func(tr tree) {
				tr["packages/meta/ccpm.json"] = `{"name":"meta","version":"1.0.0","description":"meta","files":[]}`
			},
			want: `packages/meta/ccpm.json: missing required field(s): dependencies, autostart`,
		},
		{
			name: "required field null",
			edit: func(tr tree) {
				tr["packages/meta/ccpm.json"] = `{"name":"meta","version":"1.0.0","description":"meta","dependencies":["lib"],"files":null,"autostart":[]}`
			},
			want: `packages/meta/ccpm.json: missing required field(s): files`,
		},
		{
			name: "unknown field",
			edit: func(tr tree) {
				tr["packages/meta/ccpm.json"] = `{"name":"meta","version":"1.0.0","description":"meta","dependencies":["lib"],"files":[],"autostart":[],"autorun":[]}`
			},
			want: `unknown field "autorun"`,
		},
		{
			name: "name differs from directory",
			edit: func(tr tree) {
				tr["packages/meta/ccpm.json"] = `{"name":"trapos","version":"1.0.0","description":"meta","dependencies":["lib"],"files":[],"autostart":[]}`
			},
			want: `packages/meta/ccpm.json: name "trapos" does not match its directory "meta"`,
		},
		{
			name: "bad version",
			edit: func(tr tree) {
				tr["packages/index.json"] = `{"packages":[{"name":"meta","version":"1.0"},{"name":"lib","version":"0.2.0"}]}`
				tr["packages/meta/ccpm.json"] = `{"name":"meta","version":"1.0","description":"meta","dependencies":["lib"],"files":[],"autostart":[]}`
			},
			want: `packages/meta/ccpm.json: version "1.0", want MAJOR.MINOR.PATCH`,
		},
		{
			name: "empty description",
			edit: func(tr tree) {
				tr["packages/meta/ccpm.json"] = `{"name":"meta","version":"1.0.0","description":"  ","dependencies":["lib"],"files":[],"autostart":[]}`
			},
			want: `packages/meta/ccpm.json: description is empty`,
		},
		{
			name: "package dir without descriptor",
			edit: func(tr tree) { tr["packages/stray/README"] = "x" },
			want: `packages/stray/ccpm.json: open`,
		},
		{
			name: "descriptor is not JSON",
			edit: func(tr tree) { tr["packages/lib/ccpm.json"] = `{"name":` },
			want: `packages/lib/ccpm.json: parse:`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := validTree()
			if tc.edit != nil {
				tc.edit(tr)
			}
			for _, r := range tc.remove {
				delete(tr, r)
			}
			err := packages.Check(tr.write(t))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestCheckFailsWithoutIndex(t *testing.T) {
	tr := validTree()
	delete(tr, "packages/index.json")
	err := packages.Check(tr.write(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read index")
}

// TestClientVersionIsThePackageVersion: the version the client sends in hello and prints
// with `sandbox --version` is the descriptor's, so bumping one without the other fails here.
func TestClientVersionIsThePackageVersion(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(root, "packages", "trapos-sandbox", "ccpm.json"))
	require.NoError(t, err)
	var d packages.Descriptor
	require.NoError(t, json.Unmarshal(raw, &d))
	lua, err := os.ReadFile(filepath.Join(root, "trapos", "apis", "libsandboxversion.lua"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*VERSION = "([^"]*)",`).FindSubmatch(lua)
	require.NotNil(t, m, "apis/libsandboxversion.lua has no VERSION line")
	assert.Equal(t, d.Version, string(m[1]))
}

// TestDocsListEachPackage: docs/packages.md's table of the packages says each one's version,
// files and autostart servers as its descriptor does (the table had lost two files of
// trapos-sandbox that the descriptor ships), and docs/lua-client.md describes each file of
// trapos-sandbox (it had no row for libsandboxscreen).
func TestDocsListEachPackage(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "packages.md"))
	require.NoError(t, err)
	rows := map[string][]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) == 7 && strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			rows[strings.Trim(strings.TrimSpace(cells[1]), "`")] = cells[2:6]
		}
	}
	quoted := regexp.MustCompile("`([^`]*)`")
	paths := func(cell string) []string {
		out := []string{}
		for _, m := range quoted.FindAllStringSubmatch(cell, -1) {
			out = append(out, m[1])
		}
		return out
	}
	dirs, err := os.ReadDir(filepath.Join(root, "packages"))
	require.NoError(t, err)
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		desc := readDescriptor(t, filepath.Join(root, "packages", d.Name(), "ccpm.json"))
		row, ok := rows[desc.Name]
		if !assert.True(t, ok, "docs/packages.md has no row for %s", desc.Name) {
			continue
		}
		assert.Equal(t, desc.Version, strings.TrimSpace(row[0]), "%s's version in docs/packages.md", desc.Name)
		assert.Equal(t, desc.Files, paths(row[1]), "%s's files in docs/packages.md", desc.Name)
		assert.Equal(t, desc.Autostart, paths(row[2]), "%s's autostart in docs/packages.md", desc.Name)
	}

	// docs/lua-client.md's table of the client's files has a row for each file it installs.
	client, err := os.ReadFile(filepath.Join(root, "docs", "lua-client.md"))
	require.NoError(t, err)
	for _, f := range readDescriptor(t, filepath.Join(root, "packages", "trapos-sandbox", "ccpm.json")).Files {
		assert.Contains(t, string(client), "\n| `"+f+"` |", "docs/lua-client.md has no row for %s", f)
	}
}

// TestAReleasedVersionIsNotReused: testdata/released holds, for a version computers installed
// (<package>-<version>.sha256, one "<sha256>  <install path>" line per file), the files it
// shipped. The package may not carry that version with other files, nor go below it: the
// gateway tells an older client by its version (hello's clientVersion: the log line, the
// computers list, an unknown_type's fix), and a client changed under an old version passed
// for the one it replaced (0.4.0's computers, then missing fs.read's stamp, looked up to date).
func TestAReleasedVersionIsNotReused(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)
	released, err := filepath.Glob(filepath.Join("testdata", "released", "*.sha256"))
	require.NoError(t, err)
	require.NotEmpty(t, released)
	for _, file := range released {
		m := releasedName.FindStringSubmatch(filepath.Base(file))
		require.NotNil(t, m, "%s: name it <package>-<version>.sha256", file)
		name, version := m[1], m[2]
		d := readDescriptor(t, filepath.Join(root, "packages", name, "ccpm.json"))
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		if d.Version != version {
			assert.True(t, newerVersion(t, d.Version, version), "%s %s is below %s, which computers run already", name, d.Version, version)
			continue
		}
		var shipped []string
		for line := range strings.Lines(string(raw)) {
			sum, path, ok := strings.Cut(strings.TrimSpace(line), "  ")
			require.True(t, ok, "%s: %q is not <sha256>  <path>", file, line)
			shipped = append(shipped, path)
			now, err := os.ReadFile(filepath.Join(root, "trapos", path))
			if err != nil || fmt.Sprintf("%x", sha256.Sum256(now)) != sum {
				t.Errorf("trapos/%s is not the file %s %s shipped, which computers run: give the package a new version "+
					"(packages/index.json, its ccpm.json, apis/libsandboxversion.lua, docs/packages.md)", path, name, version)
			}
		}
		assert.ElementsMatch(t, shipped, d.Files, "%s %s shipped other files: give the package a new version", name, version)
	}
}

// releasedName is a file name of testdata/released: <package>-<MAJOR.MINOR.PATCH>.sha256.
var releasedName = regexp.MustCompile(`^(.+)-([0-9]+\.[0-9]+\.[0-9]+)\.sha256$`)

// newerVersion reports whether MAJOR.MINOR.PATCH a is above b.
func newerVersion(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y [3]int
	_, errA := fmt.Sscanf(a, "%d.%d.%d", &x[0], &x[1], &x[2])
	_, errB := fmt.Sscanf(b, "%d.%d.%d", &y[0], &y[1], &y[2])
	require.NoError(t, errA, a)
	require.NoError(t, errB, b)
	for i := range x {
		if x[i] != y[i] {
			return x[i] > y[i]
		}
	}
	return false
}
