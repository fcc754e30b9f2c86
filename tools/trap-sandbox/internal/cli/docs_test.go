package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The pages a user reads (README.md, docs/*.md, the tools' and tests' READMEs), from this
// package's directory.
const repoRoot = "../../../.."

func userDocs(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	docs = append(docs, filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "tools", "trap-sandbox", "README.md"),
		filepath.Join(repoRoot, "tools", "fakecraft", "README.md"), filepath.Join(repoRoot, "tests", "README.md"))
	require.Greater(t, len(docs), 10, "the docs were found")
	return docs
}

// commandFlags maps each command path ("serve", "computers list", "link key") to its flags as
// they are typed (--mcp, --no-mcp, -h), with a branch ("computers") standing for its default
// command, as `trap-sandbox computers --api-token …` does.
func commandFlags(t *testing.T) map[string]map[string]*kong.Flag {
	t.Helper()
	_, parser := newTestParser(t, kong.Writers(io.Discard, io.Discard), kong.Exit(func(int) { panic(kongExited{}) }))
	commands := map[string]map[string]*kong.Flag{}
	var walk func(node *kong.Node)
	walk = func(node *kong.Node) {
		if node.Type == kong.CommandNode && len(node.Children) == 0 {
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
			commands[node.Path()] = flags
		}
		for _, child := range node.Children {
			walk(child)
		}
		if node.Type == kong.CommandNode && node.DefaultCmd != nil {
			walk(node.DefaultCmd)
			commands[node.Path()] = commands[node.DefaultCmd.Path()]
		}
	}
	walk(parser.Model.Node)
	require.Contains(t, commands, "serve")
	require.Contains(t, commands, "link approve")
	require.Contains(t, commands, "computers", "the branch stands for its default command")
	return commands
}

// TestTheDocsGiveOnlyFlagsTheCommandsHave: every `trap-sandbox <command> … --flag` written in
// README.md, tools/trap-sandbox/README.md and docs/*.md (also as `go run ./tools/trap-sandbox
// …`, and `trap-sandbox --flag` for serve, the default command; over a line's `\`
// continuation) names a flag that command has, and `trap-sandbox link aprove` is no command, so
// a renamed or dropped command or flag cannot stay in a command line a user copies.
func TestTheDocsGiveOnlyFlagsTheCommandsHave(t *testing.T) {
	commands := commandFlags(t)
	branches := map[string]bool{} // accounts, link, …: a word of their own is one of their commands
	for path := range commands {
		if branch, _, ok := strings.Cut(path, " "); ok && commands[branch] == nil {
			branches[branch] = true
		}
	}
	invocation := regexp.MustCompile("trap-sandbox((?: [a-z][a-z-]*){0,2})((?: [^`|\\n]*)?)")
	flagRE := regexp.MustCompile(`(?:^|[\s'"(])(--[a-z][a-z0-9-]*)`)
	checked := 0
	for _, path := range userDocs(t) {
		doc, err := os.ReadFile(path)
		require.NoError(t, err)
		lines := strings.Split(string(doc), "\n")
		for i := 0; i < len(lines); i++ {
			line := lines[i]
			for j := i; strings.HasSuffix(line, "\\") && j+1 < len(lines); j++ {
				line = strings.TrimSuffix(line, "\\") + " " + lines[j+1] // a shell line's continuation
			}
			for _, m := range invocation.FindAllStringSubmatch(line, -1) {
				words, rest := strings.Fields(m[1]), m[2]
				command := ""
				switch {
				case len(words) >= 2 && commands[words[0]+" "+words[1]] != nil:
					command, rest = words[0]+" "+words[1], strings.Join(words[2:], " ")+" "+rest
				case len(words) >= 1 && commands[words[0]] != nil:
					command, rest = words[0], strings.Join(words[1:], " ")+" "+rest
				case len(words) == 0 && strings.HasPrefix(rest, " -"):
					command = "serve"
				case len(words) >= 2 && branches[words[0]]:
					assert.Fail(t, "no such command", "%s:%d: trap-sandbox has no command %q: %s",
						filepath.Base(path), i+1, words[0]+" "+words[1], strings.TrimSpace(line))
					continue
				default:
					continue // prose ("a trap-sandbox from before …"), or a path
				}
				// The command ends where the shell's next one (or a comment) begins.
				if cut := strings.IndexAny(rest, ";&|)#`"); cut >= 0 {
					rest = rest[:cut]
				}
				for _, f := range flagRE.FindAllStringSubmatch(rest, -1) {
					flag := f[1]
					if flag == "--help" || strings.HasSuffix(flag, "-") {
						continue
					}
					checked++
					_, has := commands[command][flag]
					assert.True(t, has, "%s:%d: `trap-sandbox %s` has no %s: %s",
						filepath.Base(path), i+1, command, flag, strings.TrimSpace(line))
				}
			}
		}
	}
	assert.Greater(t, checked, 40, "the docs' commands were read")
}

// TestTheDocsFlagTablesMatchTheFlags: a docs table row that starts with flags
// (`| `--listen` | `SANDBOX_LISTEN` | `:4444` …`, or `--ai-model` (`SANDBOX_AI_MODEL`) in one
// cell) names each flag's environment variable, and its default when the row gives one in
// backticks and the flag has one, as `--help` says them; and every flag of serve is in some
// table or text of the docs.
func TestTheDocsFlagTablesMatchTheFlags(t *testing.T) {
	commands := commandFlags(t)
	// A flag of several commands (--api-token, --url) is each command's: the table's words
	// must be true of one of them.
	known := map[string][]*kong.Flag{}
	for _, flags := range commands {
		for name, flag := range flags {
			known[name] = append(known[name], flag)
		}
	}
	flagCell := regexp.MustCompile("`(--[a-z][a-z0-9-]*[a-z0-9])`")
	envCell := regexp.MustCompile("`([A-Z][A-Z0-9_]+)`")
	defaultCell := regexp.MustCompile("^`([^`]*)`")
	var all strings.Builder
	rows := 0
	for _, path := range userDocs(t) {
		doc, err := os.ReadFile(path)
		require.NoError(t, err)
		all.Write(doc)
		for i, line := range strings.Split(string(doc), "\n") {
			if !strings.HasPrefix(line, "| `--") {
				continue
			}
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			var names []string
			for _, m := range flagCell.FindAllStringSubmatch(cells[0], -1) {
				names = append(names, m[1])
			}
			if !slices.ContainsFunc(names, func(n string) bool { return known[n] != nil }) {
				continue // not trap-sandbox's flags (the installer's options)
			}
			rows++
			where := fmt.Sprintf("%s:%d", filepath.Base(path), i+1)
			envs := envCell.FindAllStringSubmatch(cells[0], -1)
			next := 1
			if len(envs) == 0 && len(cells) > 1 {
				envs, next = envCell.FindAllStringSubmatch(cells[1], -1), 2
			}
			for j, name := range names {
				flags := known[name]
				if !assert.NotEmpty(t, flags, "%s: %s is no flag of trap-sandbox", where, name) {
					continue
				}
				if len(envs) == len(names) {
					assert.True(t, slices.ContainsFunc(flags, func(f *kong.Flag) bool { return slices.Contains(f.Envs, envs[j][1]) }),
						"%s: %s's variable is not %s", where, name, envs[j][1])
				}
				m := defaultCell.FindStringSubmatch(cells[min(next, len(cells)-1)])
				if len(names) == 1 && len(envs) == 1 && next < len(cells) && m != nil {
					assert.True(t, slices.ContainsFunc(flags, func(f *kong.Flag) bool { return f.Default == "" || f.Default == m[1] }),
						"%s: %s's default is not %s", where, name, m[1])
				}
			}
		}
	}
	assert.Greater(t, rows, 40, "the flag tables were read")
	for name, flag := range commands["serve"] {
		if strings.HasPrefix(name, "--") && !flag.Hidden && name != "--help" && !strings.HasPrefix(name, "--no-") {
			assert.Contains(t, all.String(), "`"+name, "serve's %s is in no doc", name)
		}
	}
}
