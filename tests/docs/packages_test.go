package docs_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/repo"
)

// TestEveryGatewayPackageSaysWhatItIs: the gateway's packages are listed in one place, their
// doc comments (tools/trap-sandbox/README.md's layout points at `go list` and `go doc`), so
// each package has exactly one, starting as `go doc` and the list expect ("Package name ",
// "Command " for main). A package without one would be missing from the list a newcomer
// reads; a second in another file would be joined to the first, a second home in the package.
func TestEveryGatewayPackageSaysWhatItIs(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)
	module := filepath.Join(root, "tools", "trap-sandbox")
	packages := 0
	err = filepath.WalkDir(module, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); dir != module && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(module, dir)
		var docs []string // "file: first line" of each package comment
		name := ""
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			name = f.Name.Name
			if f.Doc != nil {
				docs = append(docs, filepath.Base(file)+": "+strings.SplitN(f.Doc.Text(), "\n", 2)[0])
			}
		}
		if name == "" {
			return nil // no package here
		}
		packages++
		want := "Package " + name + " "
		if name == "main" {
			want = "Command "
		}
		if assert.Len(t, docs, 1, "%s (package %s): one doc comment saying what it is, starting %q; found %q", rel, name, want, docs) {
			_, first, _ := strings.Cut(docs[0], ": ")
			assert.True(t, strings.HasPrefix(first, want), "%s: its doc comment starts %q, not %q", rel, first, want)
		}
		return nil
	})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, packages, 25, "the packages were found")
}
