package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunTouch: --touch is a player's right-click on an advanced monitor: the computer gets
// CC's monitor_touch (the monitor's name as it sees it, x, y), one touch each time it waits
// for an event with none queued, in order; a point past the edge is the edge (the monitor's
// face has no more cells). A monitor on a cable the computer reaches through a wired modem
// is touched by its network name.
func TestRunTouch(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "world.json")
	require.NoError(t, os.WriteFile(file, []byte(`{
  "computers": [ { "id": 7, "peripherals": { "top": "monitor:2:1", "back": "wired_modem:hall" } } ],
  "cables": { "hall": { "monitor_0": "monitor" } }
}`), 0o644))
	pc := filepath.Join(dir, "pc")
	writeDisk(t, pc, map[string]string{"buttons.lua": `
for _ = 1, 3 do print(os.pullEvent("monitor_touch")) end
`})
	code, out, errOut := bare(t, pc, "", "--id", "7", "--world", file,
		"--touch", "top=3,2", "--touch", "top=40,9", "--touch", "monitor_0=1,1", "buttons")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "> buttons\nmonitor_touch\ttop\t3\t2\nmonitor_touch\ttop\t18\t5\nmonitor_touch\tmonitor_0\t1\t1\n> \n")
}

// TestTouchNeedsAnAdvancedMonitor: a touch that cannot be a player's click on an advanced
// monitor of this computer is refused before the computer boots, saying why: CC queues
// monitor_touch only for an advanced monitor, so a basic one's touch would be lost unseen.
func TestTouchNeedsAnAdvancedMonitor(t *testing.T) {
	for _, c := range []struct{ touch, want string }{
		{"left=1,1", "--touch left=1,1: left is a basic monitor, which takes no touches (CC queues monitor_touch only for an advanced monitor)"},
		{"right=1,1", "--touch right=1,1: this computer has no peripheral named right"},
		{"bottom=1,1", "--touch bottom=1,1: bottom is a speaker, not a monitor"},
		{"top=0,1", "--touch top=0,1: want NAME=X,Y, X and Y whole numbers from 1 (the monitor's character cells)"},
		{"top=1", "--touch top=1: want NAME=X,Y, X and Y whole numbers from 1 (the monitor's character cells)"},
		{"top", "--touch top: want NAME=X,Y, X and Y whole numbers from 1 (the monitor's character cells)"},
	} {
		code, out, errOut := bare(t, t.TempDir(), "", "--attach", "top=monitor", "--attach", "left=basic_monitor",
			"--attach", "bottom=speaker", "--touch", c.touch, "id")
		assert.Equal(t, ExitUsage, code, c.touch)
		assert.Empty(t, out, c.touch)
		assert.Equal(t, "fakecraft: "+c.want+"\n", errOut, c.touch)
	}
}
