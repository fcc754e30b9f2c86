package gateway

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheLimitsTableListsEachLimitOnce: docs/protocol.md's "Limits and timeouts" is one table
// (a blank line would end it and show the rest as plain text) naming each limit once, so no
// stale row contradicts the current one.
func TestTheLimitsTableListsEachLimitOnce(t *testing.T) {
	doc, err := os.ReadFile("../../../../docs/protocol.md")
	require.NoError(t, err)
	_, section, found := strings.Cut(string(doc), "\n## Limits and timeouts\n")
	require.True(t, found, "docs/protocol.md has the limits section")
	section, _, _ = strings.Cut(section, "\n## ")
	start := strings.Index(section, "\n|")
	require.GreaterOrEqual(t, start, 0, "the section holds a table")
	table := section[start+1:]
	if end := strings.Index(table, "\n\n"); end >= 0 {
		assert.False(t, strings.Contains(table[end:], "\n|"), "the limits table is cut in two by a blank line")
		table = table[:end]
	}
	seen := map[string]bool{}
	for line := range strings.SplitSeq(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		name := strings.TrimSpace(cells[1])
		assert.False(t, seen[name], "the limits table lists %q twice", name)
		seen[name] = true
	}
	assert.Greater(t, len(seen), 40, "the whole table was read")
}
