package table

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// layout is the table text laid out by a Writer of the given padding.
func layout(t *testing.T, padding int, text string) string {
	t.Helper()
	var out bytes.Buffer
	w := NewWriter(&out, padding)
	_, err := fmt.Fprint(w, text)
	require.NoError(t, err)
	require.NoError(t, w.Flush())
	return out.String()
}

// TestASCIITablesComeOutAsTabwritersDid: the listings were laid out by text/tabwriter (a
// minimum width of 0, spaces to pad), and the docs show them so: for ASCII text, a table
// comes out byte for byte the same, ragged rows, empty cells and a last row without a
// newline included.
func TestASCIITablesComeOutAsTabwritersDid(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"", "-", "a", "alice", "root", "2026-12-02T01:00:00Z", "203.0.113.5", "x y", "TRAPOS ID"}
	for i := range 500 {
		var text strings.Builder
		for range rng.IntN(6) {
			for c := range rng.IntN(5) {
				if c > 0 {
					text.WriteByte('\t')
				}
				text.WriteString(words[rng.IntN(len(words))])
			}
			if rng.IntN(4) == 0 {
				text.WriteByte('\t') // a row whose last cell is empty, ending at a tab
			}
			text.WriteByte('\n')
		}
		if rng.IntN(4) == 0 {
			text.WriteString("tail\twithout\tnewline")
		}
		padding := 1 + rng.IntN(2)
		var want bytes.Buffer
		tw := tabwriter.NewWriter(&want, 0, 4, padding, ' ', 0)
		_, err := fmt.Fprint(tw, text.String())
		require.NoError(t, err)
		require.NoError(t, tw.Flush())
		require.Equal(t, want.String(), layout(t, padding, text.String()), "table %d, padding %d: %q", i, padding, text.String())
	}
}

// TestWideAndCombiningCellsLineUp: the column after a cell of wide characters, or of a letter
// and its combining accent, starts where it does in the other rows.
func TestWideAndCombiningCellsLineUp(t *testing.T) {
	got := layout(t, 2, "ID\tNAME\tCREATED\n"+
		"a1\t台所\t2026\n"+
		"b2\tcafe\u0301\t2026\n"+
		"c3\t🍳 キッチン\t2026\n"+
		"d4\tlaptop\t2026\n")
	assert.Equal(t, ""+
		"ID  NAME         CREATED\n"+
		"a1  台所         2026\n"+
		"b2  cafe\u0301         2026\n"+
		"c3  🍳 キッチン  2026\n"+
		"d4  laptop       2026\n", got)
}

// TestControlCharactersAreShown: a cell's control characters are written as \xNN whoever
// built the row, so a table never moves the cursor or forges a row; a cell shown already is
// written as it is.
func TestControlCharactersAreShown(t *testing.T) {
	got := layout(t, 2, "NAME\tBY\nx\x1b[2J\u009b\troot\r\n"+`a\x1b`+"\t-\n")
	assert.Equal(t, ""+
		`NAME          BY`+"\n"+
		`x\x1b[2J\x9b  root\x0d`+"\n"+
		`a\x1b         -`+"\n", got)
}

// TestABidiOverrideOrACombiningStackFakesNoRow: a name that would reorder the row after it
// (U+202E, right-to-left override; U+2066, an isolate) is shown as its escape, which the row is
// padded by, and a letter under 10 000 combining accents takes its one column, so the cells
// after either stay under their headers (a hostile token or account name in a listing).
func TestABidiOverrideOrACombiningStackFakesNoRow(t *testing.T) {
	stack := "e" + strings.Repeat("\u0301", 10_000)
	got := layout(t, 2, "NAME\tBY\nx\u202eroot\tbob\ny\u2066\talice\n"+stack+"\tcarol\n")
	assert.Equal(t, ""+
		`NAME         BY`+"\n"+
		`x\u202eroot  bob`+"\n"+
		`y\u2066      alice`+"\n"+
		stack+"            carol\n", got)
}

// TestLookAlikeNamesListApart: a token or account name holding what prints as nothing or as
// a space (a zero-width space, joiner or word joiner, a byte order mark, a no-break space, a
// soft hyphen) is listed with it escaped, padded by the escape, so that it reads as another
// name than the one beside it, and the cells after it stay under their headers.
func TestLookAlikeNamesListApart(t *testing.T) {
	got := layout(t, 2, "NAME\tBY\n"+
		"ab\tbob\n"+
		"a\u200bb\talice\n"+
		"a\u200db\u2060\tcarol\n"+
		"\ufeffab\tdave\n"+
		"a\u00a0b\terin\n"+
		"a\u00adb\tfrank\n"+
		"👩\u200d🍳\tgina\n")
	assert.Equal(t, ""+
		`NAME            BY`+"\n"+
		`ab              bob`+"\n"+
		`a\u200bb        alice`+"\n"+
		`a\u200db\u2060  carol`+"\n"+
		`\ufeffab        dave`+"\n"+
		`a\xa0b          erin`+"\n"+
		`a\xadb          frank`+"\n"+
		`👩\u200d🍳      gina`+"\n", got)
}

// TestEachFlushIsATableOfItsOwn: what was flushed does not widen the next table's columns.
func TestEachFlushIsATableOfItsOwn(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, 2)
	fmt.Fprint(w, "a-long-cell\tx\n")
	require.NoError(t, w.Flush())
	fmt.Fprint(w, "a\tx\n")
	require.NoError(t, w.Flush())
	assert.Equal(t, "a-long-cell  x\na  x\n", out.String())
}
