package machine

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTranscriptDropsWhatTheROMErased: the ROM's programs erase a row with clearLine and
// write on it again, and the transcript keeps only what the row shows then. textutils'
// pager wrote "Press any key to continue", cleared it at the key and printed the next line
// there: the transcript read "l18ss any key to continue". A window (term.redirect'ed to, as
// multishell's tabs and libsandboxscreen are) draws its cleared row as blanks, which the
// transcript already left out: it stays so.
func TestTranscriptDropsWhatTheROMErased(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"textutils' pager", `
os.queueEvent("key", keys.enter)
local lines = {}
for i = 1, 20 do lines[i] = "l" .. i end
textutils.pagedPrint(table.concat(lines, "\n"))`,
			"l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\nl12\nl13\nl14\nl15\nl16\nl17\nl18\nl19\nl20\n"},
		{"a window's clearLine", `
local win = window.create(term.current(), 1, 1, 51, 3)
term.redirect(win)
write("Asking the gateway...")
term.clearLine()
term.setCursorPos(1, 1)
print("ok")
term.redirect(term.native())`, "ok\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var out bytes.Buffer
			m, err := New(Options{
				Files:   map[string]string{"/erase.lua": tc.src},
				Program: "/erase.lua",
				Stdout:  &out,
			})
			require.NoError(t, err)
			res, err := m.Run(ctx)
			require.NoError(t, err)
			require.True(t, res.OK, out.String())
			// Rows that only ever held blanks (the window drawing itself) are lines of blanks.
			got := strings.TrimLeft(out.String(), " \n")
			assert.Equal(t, tc.want, got)
		})
	}
}
