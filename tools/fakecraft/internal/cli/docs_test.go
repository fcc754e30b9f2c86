package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheDocsGiveOnlyFlagsTheCommandsHave: every `fakecraft run|shell|test|conformance …`
// written in the READMEs and docs/*.md (also as `go run ./tools/fakecraft …`, over a line's `\`
// continuation) gives, before its program, only flags that command has, so a renamed or
// dropped flag cannot stay in a command line a reader copies.
func TestTheDocsGiveOnlyFlagsTheCommandsHave(t *testing.T) {
	var root CLI
	parser, err := kong.New(&root, kong.Vars{"virtual_time_help": virtualTimeHelp}, kong.KindMapper(reflect.String, rawString))
	require.NoError(t, err)
	commands := map[string]map[string]*kong.Flag{}
	for _, node := range parser.Model.Children {
		flags := map[string]*kong.Flag{}
		for _, group := range node.AllFlags(false) {
			for _, flag := range group {
				flags["--"+flag.Name] = flag
				switch flag.Tag.Negatable {
				case "":
				case "_": // kong's mark for the default --no-<flag>
					flags["--no-"+flag.Name] = flag
				default:
					flags["--"+flag.Tag.Negatable] = flag
				}
				if flag.Short != 0 {
					flags["-"+string(flag.Short)] = flag
				}
			}
		}
		commands[node.Name] = flags
	}
	require.Contains(t, commands, "run")
	require.Contains(t, commands["run"], "--no-virtual-time")

	repoRoot := filepath.Join("..", "..", "..", "..")
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	docs = append(docs, filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "tools", "fakecraft", "README.md"),
		filepath.Join(repoRoot, "tools", "trap-sandbox", "README.md"), filepath.Join(repoRoot, "tests", "README.md"))
	invocation := regexp.MustCompile("fakecraft (run|shell|test|conformance)((?: [^`|;&)<>#\\n]*)?)")
	checked := 0
	for _, path := range docs {
		doc, err := os.ReadFile(path)
		require.NoError(t, err)
		text := strings.ReplaceAll(string(doc), "\\\n", " ") // a shell line's continuation
		for _, m := range invocation.FindAllStringSubmatch(text, -1) {
			command, flags := m[1], commands[m[1]]
			words := strings.Fields(strings.NewReplacer("[", " ", "]", " ").Replace(m[2]))
			for i := 0; i < len(words); i++ {
				word := words[i]
				if !strings.HasPrefix(word, "-") || word == "--" {
					break // the program: what follows is its own
				}
				name, _, hasValue := strings.Cut(strings.Trim(word, "'\""), "=")
				checked++
				flag, ok := flags[name]
				if !assert.True(t, ok, "%s: `fakecraft %s` has no %s: fakecraft %s%s", filepath.Base(path), command, name, command, m[2]) {
					continue
				}
				if !hasValue && !flag.IsBool() && !flag.IsCounter() {
					i++ // its value
				}
			}
		}
	}
	assert.Greater(t, checked, 40, "the docs' fakecraft commands were read")
}
