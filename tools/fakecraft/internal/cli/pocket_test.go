package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pocketProbe prints what a program sees of the computer it runs on.
const pocketProbe = `
local w, h = term.getSize()
print("size " .. w .. "x" .. h)
print("colour " .. tostring(term.isColour()))
print("pocket " .. type(pocket))
print("motd " .. tostring(settings.get("motd.enable")))
local path = ":" .. shell.path() .. ":"
print("pocket programs " .. tostring(path:find(":/rom/programs/pocket:", 1, true) ~= nil))
print("advanced programs " .. tostring(path:find(":/rom/programs/advanced:", 1, true) ~= nil))
print(string.rep("x", 30))
`

// TestPocketComputer: `run --pocket` is a pocket computer as CC: Tweaked makes one: a 26x20
// screen (a line wraps at 26 columns), the pocket API, its programs on the shell's path,
// no message of the day by default, colour unless --basic; on an ordinary computer the
// pocket programs say what they need.
func TestPocketComputer(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{"probe.lua": pocketProbe})

	code, out, errOut := bare(t, dir, "", "--pocket", "probe")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "\nsize 26x20\ncolour true\npocket table\nmotd false\npocket programs true\nadvanced programs true\n"+
		strings.Repeat("x", 26)+"\nxxxx\n")

	code, out, errOut = bare(t, dir, "", "--pocket", "--basic", "probe")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "\nsize 26x20\ncolour false\npocket table\nmotd false\npocket programs true\nadvanced programs false\n")

	code, out, errOut = bare(t, dir, "equip\n", "probe")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "\nsize 51x19\ncolour true\npocket nil\nmotd false\npocket programs false\n")
	assert.Contains(t, out, "> equip\nNo such program\n", "not on an ordinary computer's path")
}

// TestPocketEquipAndUnequip: with nothing on its back and nothing carried, equip and
// unequip give CC's answers; an upgrade on its back (--attach back=...) comes off into the
// player's inventory and goes on again. Each call answers on the next tick, as CC's
// main-thread functions do: the peripheral_detach and peripheral events come meanwhile, so
// the caller, waiting for its task_complete, never sees them, while a coroutine beside it
// does.
func TestPocketEquipAndUnequip(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{"swap.lua": `
local seen = {}
local function watch()
  while true do
    local event, side = os.pullEvent()
    if event == "peripheral" or event == "peripheral_detach" then seen[#seen + 1] = event .. " " .. side end
  end
end
local function swap()
  print(peripheral.getType("back"), pocket.unequipBack())
  print(peripheral.getType("back"), pocket.unequipBack())
  print(pocket.equipBack())
  print(peripheral.getType("back"), peripheral.call("back", "isWireless"))
  print(pocket.equipBack())
end
parallel.waitForAny(watch, swap)
print(table.concat(seen, ","))
`})
	code, out, errOut := bare(t, dir, "unequip\n", "--pocket", "equip")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "> equip\nCannot find a valid \nupgrade\n> unequip\nNothing to unequip\n")

	code, out, errOut = bare(t, dir, "", "--pocket", "--attach", "back=ender_modem", "swap")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "> swap\nmodem\ttrue\nnil\tfalse\tNothing to \nunequip\ntrue\nmodem\ttrue\nfalse\tCannot find a valid \nupgrade\nperipheral_detach \nback,peripheral back\n")
}

// TestNothingBesideAPocketComputer: as in CC: Tweaked, nothing stands beside a pocket
// computer but its back upgrade: --attach, a world file's entry and a wire are refused,
// naming what it takes; the world file's entry with "pocket": true makes the computer being
// run one.
func TestNothingBesideAPocketComputer(t *testing.T) {
	dir := t.TempDir()
	const want = "a pocket computer has no peripherals but its back upgrade (back=modem, ender_modem or speaker)"
	for _, args := range [][]string{
		{"--attach", "top=speaker"},
		{"--attach", "back=monitor"},
		{"--attach", "back=wired_modem:lan"},
	} {
		code, _, errOut := bare(t, dir, "", append([]string{"--pocket"}, args...)...)
		assert.Equal(t, ExitUsage, code, args)
		assert.Contains(t, errOut, "fakecraft: --attach "+args[1]+": "+want, args)
	}

	file := filepath.Join(dir, "world.json")
	for body, wantErr := range map[string]string{
		`{"computers": [{"id": 1, "pocket": true, "peripherals": {"left": "modem"}}]}`:                                                                    "computer 1, left: " + want,
		`{"computers": [{"id": 1, "peripherals": {"left": "modem"}}]}`:                                                                                    "--pocket: computer 1, left: " + want,
		`{"computers": [{"id": 1, "pocket": true}, {"id": 2}], "wires": [{"a": {"computer": 1, "side": "left"}, "b": {"computer": 2, "side": "right"}}]}`: "wire: computer 1 is a pocket computer, which has no redstone sides",
		`{"computers": [{"id": 1}, {"id": 2}], "wires": [{"a": {"computer": 1, "side": "left"}, "b": {"computer": 2, "side": "right"}}]}`:                 "--pocket: computer 1: a pocket computer has no redstone sides: no wire can join it",
	} {
		require.NoError(t, os.WriteFile(file, []byte(body), 0o644))
		code, _, errOut := bare(t, dir, "", "--id", "1", "--pocket", "--world", file)
		assert.Equal(t, ExitUsage, code, body)
		assert.Contains(t, errOut, wantErr, body)
	}

	require.NoError(t, os.WriteFile(file, []byte(`{"computers": [{"id": 1, "pocket": true, "peripherals": {"back": "speaker"}}]}`), 0o644))
	writeDisk(t, dir, map[string]string{"probe.lua": pocketProbe + `print(peripheral.getType("back"), pocket.unequipBack())`})
	code, out, errOut := bare(t, dir, "", "--id", "1", "--world", file, "probe")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "\nsize 26x20\n")
	assert.Contains(t, out, "\nspeaker\ttrue\n")
}

// TestShellOnAPocketComputer: `shell --pocket` draws the pocket computer's 26x20 screen,
// its 20th row too, and a terminal smaller than that is told what it needs.
func TestShellOnAPocketComputer(t *testing.T) {
	dir := t.TempDir()
	writeDisk(t, dir, map[string]string{"rows.lua": `for i = 1, 30 do print("row " .. i) end print(string.rep("w", 30))`})
	s := startShellSized(t, 40, 24, "--bare", "--pocket", "--dir", dir)
	s.waitPrompt(">")
	s.typeText("rows\r")
	s.waitLine("wwww")
	s.waitPrompt(">")
	assert.Equal(t, 17, s.rowOf("row 30"))
	assert.Equal(t, 18, s.rowOf(strings.Repeat("w", 26)), "the line wraps at the pocket's 26th column, not at the terminal's")
	assert.Equal(t, 19, s.rowOf("wwww"))
	assert.Equal(t, 20, s.rowOf(">"), "the 20th row is drawn")
	s.typeText("\x13\x13")
	assert.Equal(t, ExitOK, s.exit(), s.stderr.String())

	s = startShellSized(t, 25, 19, "--bare", "--pocket", "--dir", dir)
	s.waitPrompt(">")
	s.typeText("\x13\x13")
	assert.Equal(t, ExitOK, s.exit(), s.stderr.String())
	assert.Equal(t, "fakecraft: this terminal is 25x19; the computer's screen needs 26x20\r\n", s.stderr.String())
}

// TestTestOnAPocketComputer: `fakecraft test --pocket` runs the specs on a pocket computer,
// so a spec of what a program prints on 26 columns runs where it would.
func TestTestOnAPocketComputer(t *testing.T) {
	root := repo(t, map[string]string{
		"trapos/tests/pocket_spec.lua": `describe("a pocket computer", function()
  it("is one", function()
    local w, h = term.getSize()
    expect(w):eq(26)
    expect(h):eq(20)
    expect(type(pocket)):eq("table")
    expect(pocket.unequipBack()):eq(false)
  end)
end)`,
	})
	code, out, errOut := run(t, "test", "--root", root, "--pocket")
	assert.Equal(t, ExitOK, code, errOut+out)
	assert.Contains(t, out, "1 passed, 0 failed")

	code, out, _ = run(t, "test", "--root", root)
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, out, "0 passed, 1 failed")
}

// TestPocketComputerPrograms: on a pocket computer `help pocket` tells the API on one
// screen (a longer topic would open the viewer and wait for keys), and `gps host` refuses,
// as CC's does: a pocket computer moves.
func TestPocketComputerPrograms(t *testing.T) {
	code, out, errOut := bare(t, t.TempDir(), "help pocket\ngps host 1 2 3\n", "--pocket", "--attach", "back=modem")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "\npocket.equipBack()\npocket.unequipBack()\n")
	assert.Contains(t, out, "> gps host 1 2 3\nGPS Hosts must be \nstationary\n")
}
