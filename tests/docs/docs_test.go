// Package docs_test checks what a reader follows in the docs without running anything: the
// links between the pages, the task menu's summaries and the gateway's package comments.
package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/repo"
)

// pages are the Markdown files a user reads: README.md, docs/*.md and the tools' and tests'
// READMEs.
func pages(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	for _, pattern := range []string{"README.md", "docs/*.md", "tools/*/README.md", "tests/README.md"} {
		matches, err := filepath.Glob(filepath.Join(root, pattern))
		require.NoError(t, err)
		found = append(found, matches...)
	}
	require.Greater(t, len(found), 15, "the pages were found")
	return found
}

// outsideCode is the page's lines, with those of ``` blocks blanked (a link or a heading in
// an example is no link or heading).
func outsideCode(page string) []string {
	lines := strings.Split(page, "\n")
	inBlock := false
	for i, line := range lines {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			lines[i] = ""
		} else if inBlock {
			lines[i] = ""
		}
	}
	return lines
}

var (
	heading    = regexp.MustCompile(`^#{1,6} (.+)$`)
	inlineLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	htmlAnchor = regexp.MustCompile(`<a (?:name|id)="([^"]+)"`)
	link       = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// slug is the anchor GitHub gives a heading: lower case, every character but letters, digits,
// spaces, hyphens and underscores dropped, spaces as hyphens.
func slug(text string) string {
	text = inlineLink.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors is every anchor of a page: its headings' slugs (a repeated one numbered -1, -2, as
// GitHub does) and its HTML anchors.
func anchors(page string) map[string]bool {
	found := map[string]bool{}
	seen := map[string]int{}
	for _, line := range outsideCode(page) {
		if m := heading.FindStringSubmatch(line); m != nil {
			s := slug(m[1])
			if n, ok := seen[s]; ok {
				seen[s] = n + 1
				found[s+"-"+strconv.Itoa(n+1)] = true
			} else {
				seen[s] = 0
				found[s] = true
			}
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			found[m[1]] = true
		}
	}
	return found
}

// TestTheDocsLinksReachTheirTargets: every relative link of the pages names a file of the
// repository, and its #anchor a heading (or an HTML anchor) of that page, so a renamed heading
// or a moved page leaves no link going nowhere.
func TestTheDocsLinksReachTheirTargets(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)
	anchored := 0
	for _, path := range pages(t, root) {
		page, err := os.ReadFile(path)
		require.NoError(t, err)
		rel, err := filepath.Rel(root, path)
		require.NoError(t, err)
		for i, line := range outsideCode(string(page)) {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				resolved := path
				if file != "" {
					resolved = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
				}
				if _, err := os.Stat(resolved); !assert.NoError(t, err, "%s:%d: the link %s names no file", rel, i+1, target) {
					continue
				}
				if anchor == "" || !strings.HasSuffix(resolved, ".md") {
					continue
				}
				linked, err := os.ReadFile(resolved)
				require.NoError(t, err)
				anchored++
				assert.True(t, anchors(string(linked))[anchor], "%s:%d: the link %s names no heading of %s", rel, i+1, target, filepath.Base(resolved))
			}
		}
	}
	assert.Greater(t, anchored, 100, "the pages' links to headings were read")
}

// TestTheSlugIsGitHubs pins the anchor rule on headings the docs link to.
func TestTheSlugIsGitHubs(t *testing.T) {
	assert.Equal(t, "7-the-same-path-on-fakecraft", slug("7. The same path on fakecraft"))
	assert.Equal(t, "known-limitations-v1", slug("Known limitations (v1)"))
	assert.Equal(t, "luaexec", slug("`lua.exec`"))
	assert.Equal(t, "the-benchs-own-bias-issue-25", slug("The bench's own bias (issue 25)"))
	assert.Equal(t, map[string]bool{"a": true, "a-1": true, "a-2": true}, anchors("# A\n## A\n```\n# A\n```\n### A\n"))
}

// TestEachRecipeHasASummary: `just --list` shows, beside each recipe, the one comment line
// right above it; that line is the recipe's summary, a sentence of its own (a capital first),
// not the tail of a longer comment.
func TestEachRecipeHasASummary(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)
	justfile, err := os.ReadFile(filepath.Join(root, "justfile"))
	require.NoError(t, err)
	recipe := regexp.MustCompile(`^([a-z_][a-z0-9_-]*)(?: [^:=]*)?:(?:[^=]|$)`)
	lines := strings.Split(string(justfile), "\n")
	recipes := 0
	for i, line := range lines {
		m := recipe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		recipes++
		above := i - 1
		for above >= 0 && strings.HasPrefix(lines[above], "[") {
			above-- // an attribute sits between a recipe and its comment
		}
		if !assert.True(t, above >= 0 && strings.HasPrefix(lines[above], "# "), "recipe %s has no comment line above it for just --list", m[1]) {
			continue
		}
		summary := strings.TrimPrefix(lines[above], "# ")
		assert.True(t, unicode.IsUpper([]rune(summary)[0]), "recipe %s: just --list shows %q, which is not a summary of its own", m[1], summary)
	}
	assert.GreaterOrEqual(t, recipes, 8, "the recipes were read")
}
