package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRefusalsOfAFlagNameItsVariable: an error message of the gateway's code that starts with
// a flag of serve that has an environment variable ("--public-url %q: …") names the variable
// right after it ("--public-url (SANDBOX_PUBLIC_URL) …"), as flagAndEnv writes it, since
// either may have set the value (TestBadValuesNameTheirVariable): SANDBOX_PUBLIC_URL=ftp://x
// was refused as `--public-url "ftp://x": …`, naming a flag the operator never gave. It reads
// every fmt.Errorf and errors.New of tools/trap-sandbox's sources.
func TestRefusalsOfAFlagNameItsVariable(t *testing.T) {
	envs := map[string][]string{} // --flag → its variables, for serve's flags that have one
	for name, flag := range commandFlags(t)["serve"] {
		if len(flag.Envs) > 0 && name == "--"+flag.Name {
			envs[name] = flag.Envs
		}
	}
	require.Contains(t, envs, "--public-url")
	leading := regexp.MustCompile(`^(--[a-z][a-z0-9-]*)(?:[ :=]|$)`)
	moduleRoot := filepath.Join("..", "..")
	read := 0
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		read++
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 || !isErrorMaker(call.Fun) {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			text, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			m := leading.FindStringSubmatch(text)
			if m == nil || envs[m[1]] == nil {
				return true
			}
			want := m[1] + " (" + envs[m[1]][0] + ")"
			assert.True(t, strings.HasPrefix(text, want), "%s: %q names %s without its variable: start it with %q (flagAndEnv)",
				fset.Position(lit.Pos()), text, m[1], want)
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, read, 50, "the module's sources were read")
}

// isErrorMaker says whether fun is fmt.Errorf or errors.New.
func isErrorMaker(fun ast.Expr) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && (pkg.Name == "fmt" && sel.Sel.Name == "Errorf" || pkg.Name == "errors" && sel.Sel.Name == "New")
}
