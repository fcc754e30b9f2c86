package machine

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer"
	"fakecraft/pocket"
)

// TestPocketMachine: a machine with a Pocket is a pocket computer without a world: its
// screen is 26x20 (Screen has 20 rows, a Snapshot says its size), an advanced one starts
// multishell where the host lets it, as CC's bios does on any colour computer, and its
// tab's window is the pocket's screen; its player carries nothing, so equipBack finds none.
func TestPocketMachine(t *testing.T) {
	const probe = `
print(multishell and ("tab " .. multishell.getCurrent()) or "no multishell")
print("size", term.getSize())
print(pocket.equipBack())
for i = 1, 30 do print("row " .. i) end
`
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"advanced", Options{Multishell: true}, "tab 1"},
		{"basic", Options{Multishell: true, Basic: true}, "no multishell"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var out bytes.Buffer
			opts := tc.opts
			opts.Pocket = pocket.New(nil)
			opts.Files = map[string]string{"/probe.lua": probe}
			opts.Program = "/probe.lua"
			opts.Stdout = &out
			m, err := New(opts)
			require.NoError(t, err)
			term := m.Terminal()
			res, err := m.Run(ctx)
			require.NoError(t, err)
			assert.True(t, res.OK, out.String())
			assert.Contains(t, out.String(), tc.want)
			// (multishell's window redraws every row as it scrolls: rows are padded there)
			assert.Contains(t, out.String(), "size\t26\t20")
			assert.Contains(t, out.String(), "false\tCannot find a valid")
			rows := strings.Split(term.Screen(), "\n")
			require.Len(t, rows, computer.PocketHeight)
			assert.Equal(t, "row 30", rows[len(rows)-2], "the last row printed, above the cursor's")
			snap := term.Snapshot()
			assert.Equal(t, [2]int{computer.PocketWidth, computer.PocketHeight}, [2]int{snap.Width, snap.Height})
		})
	}
}
