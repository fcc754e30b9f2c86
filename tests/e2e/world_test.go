package e2e

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"
	"fakecraft/peripheral/monitor"
	"fakecraft/world"

	"trap-sandbox/testkit/opencodefake"
)

// worldTimeScale runs the world's clocks fast: rednet.host and lookup wait two seconds of
// the computers' time for answers.
const worldTimeScale = 10

// gpsHost is a GPS host as a player sets one up: a computer with a wireless modem whose
// startup runs `gps host x y z`.
func gpsHost(id int, x, y, z float64) world.ComputerSpec {
	return world.ComputerSpec{ID: id, Position: [3]float64{x, y, z},
		Peripherals: map[string]string{"top": "modem"},
		Files: map[string]string{"/startup.lua": fmt.Sprintf("shell.run(%q)",
			fmt.Sprintf("gps host %g %g %g", x, y, z))}}
}

// baseProgram is computer 1's startup: it finds its position with gps, draws it on its
// monitor, reads the floppy disk in its drive, hosts the "chat" protocol and answers the
// first message.
const baseProgram = `
rednet.open("back")
local x, y, z
repeat x, y, z = gps.locate(2) until x
print("position", x, y, z)
local monitor = peripheral.find("monitor")
monitor.clear()
monitor.setCursorPos(1, 1)
monitor.write(("at %d,%d,%d"):format(x, y, z))
local disk_file = fs.open(fs.combine(disk.getMountPath("left"), "greeting.txt"), "r")
print("disk", disk.getID("left"), disk_file.readAll())
disk_file.close()
rednet.host("chat", "base")
print("hosting")
local from, message, protocol = rednet.receive("chat")
print("got", from, message, protocol)
rednet.send(from, "welcome, " .. from, "chat")
`

// visitorProgram is computer 2's startup: out of the base's range, it finds the base
// through the repeater with rednet.lookup and talks to it.
const visitorProgram = `
rednet.open("back")
local base
repeat base = rednet.lookup("chat", "base") until base
print("found base", base)
rednet.send(base, "hello from the visitor", "chat")
local from, reply = rednet.receive("chat")
print("reply", from, reply)
`

// TestWorldOfComputers boots a world of three computers around a GPS constellation of
// four hosts: the base (1) finds its position with gps.locate and shows it on its monitor,
// reads a floppy disk in its drive and hosts a rednet protocol; the visitor (2), out of the
// base's modem range, finds the base with rednet.lookup through the repeater (3) in between
// and exchanges messages with it with rednet.send/receive.
func TestWorldOfComputers(t *testing.T) {
	ctx := testContext(t)
	spec := world.Spec{
		TimeScale: worldTimeScale,
		Computers: []world.ComputerSpec{
			gpsHost(11, 5, 64, 5), gpsHost(12, 25, 64, 5), gpsHost(13, 5, 64, 25), gpsHost(14, 5, 90, 5),
			{ID: 1, Label: "base", Position: [3]float64{12, 70, -3},
				Peripherals: map[string]string{"back": "modem", "top": "monitor:2:1", "left": "drive:5"},
				Files:       map[string]string{"/startup.lua": baseProgram}},
			{ID: 3, Label: "repeater", Position: [3]float64{60, 70, -3},
				Peripherals: map[string]string{"back": "modem"},
				Files:       map[string]string{"/startup.lua": `shell.run("repeat")`}},
			{ID: 2, Label: "visitor", Position: [3]float64{110, 70, -3},
				Peripherals: map[string]string{"back": "modem"},
				Files:       map[string]string{"/startup.lua": visitorProgram}},
		},
	}
	w := fakecrafttest.NewWorld(t, spec)
	// The floppy disk in the base's drive, as a player would have written it before.
	disk := w.Floppy(5)
	require.Equal(t, 5, disk.ID())
	require.NoError(t, os.MkdirAll(filepath.Join(w.Dir(), "disk", "5"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.Dir(), "disk", "5", "greeting.txt"), []byte("kept on floppy 5"), 0o644))
	// Each computer runs as long as the test may: on a loaded machine the waits below add up.
	w.StartAllWithin(spec, testTimeout)

	base, visitor, repeater := w.Computer(1), w.Computer(2), w.Computer(3)
	base.WaitFor(ctx, "position\t12\t70\t-3")
	base.WaitFor(ctx, "disk\t5\tkept on floppy 5")
	mon := w.At(1).Peripherals().Get("top").(*monitor.Monitor)
	require.Eventually(t, func() bool { return strings.HasPrefix(mon.Screen(), "at 12,70,-3") },
		testTimeout, 5*time.Millisecond, "the monitor shows:\n%s", mon.Screen())

	visitor.WaitFor(ctx, "found base\t1")
	base.WaitFor(ctx, "got\t2\thello from the visitor\tchat")
	visitor.WaitFor(ctx, "reply\t1\twelcome, 2")
	repeater.WaitFor(ctx, "messages repeated.")
	assert.Contains(t, w.Computer(11).Output(), "GPS requests served")
}

// worldSandboxProgram connects, says so, then applies e2e_set events as `set` would (the
// computer's owner changing a setting at its keyboard).
const worldSandboxProgram = `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
print("e2e: world computer up")
while true do
  local _, name, value = os.pullEvent("e2e_set")
  settings.set(name, value)
  print("e2e: set " .. name)
end
`

// TestTwoSandboxComputersOfOneWorld: two TrapOS computers standing in one world, next to
// each other with wireless modems, each with its own owner's settings, connected to one
// gateway at once. The host lists both; it reads the screen of the one whose owner allows
// it and is refused the other's; it draws on the first's monitor with lua.exec; and one
// owner turning the files off (computer 5) leaves the other computer's files as its own
// owner set them (6 still lists its files, and says files: read).
func TestTwoSandboxComputersOfOneWorld(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	spec := world.Spec{Computers: []world.ComputerSpec{
		{ID: 5, Label: "k\xfcche", Position: [3]float64{0, 64, 0},
			Peripherals: map[string]string{"back": "modem", "top": "monitor:2:1"}},
		{ID: 6, Label: "keller", Position: [3]float64{10, 64, 0},
			Peripherals: map[string]string{"back": "modem"}},
	}}
	w := fakecrafttest.NewWorld(t, spec)
	start := func(c world.ComputerSpec, allow map[string]string) *fakecrafttest.Computer {
		opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
		opts.Label = c.Label
		maps.Copy(opts.Settings, allow)
		opts.Files = map[string]string{"/e2e.lua": worldSandboxProgram}
		return fakecrafttest.StartWithin(t, w.At(c.ID).Options(opts), testTimeout)
	}
	kitchen := start(spec.Computers[0], map[string]string{
		"sandbox.allow_files": "read", "sandbox.allow_exec": "true", "sandbox.allow_screen": "view"})
	cellar := start(spec.Computers[1], map[string]string{"sandbox.allow_files": "read"})
	kitchen.WaitFor(ctx, "e2e: world computer up")
	cellar.WaitFor(ctx, "e2e: world computer up")
	assert.ElementsMatch(t, []string{"5:küche", "6:keller"}, connectedComputers(t, g))

	status, got := postRequest(ctx, t, g, "5:küche", `{"type":"screen.read","payload":{},"timeoutMs":10000}`)
	require.Equal(t, http.StatusOK, status)
	require.True(t, got.OK, "%+v", got)
	assert.EqualValues(t, 51, got.Payload["width"])
	_, got = postRequest(ctx, t, g, "6:keller", `{"type":"screen.read","payload":{},"timeoutMs":10000}`)
	require.NotNil(t, got.Error, "%+v", got)
	assert.Equal(t, "forbidden", got.Error.Code)

	_, got = postRequest(ctx, t, g, "5:küche",
		`{"type":"lua.exec","payload":{"code":"peripheral.call('top', 'write', 'from the host') return peripheral.call('top', 'getSize')"},"timeoutMs":10000}`)
	require.True(t, got.OK, "%+v", got)
	assert.Equal(t, []any{float64(18), float64(5)}, got.Payload["returns"])
	mon := w.At(5).Peripherals().Get("top").(*monitor.Monitor)
	assert.Equal(t, "from the host", strings.TrimRight(mon.Screen(), "\n"))

	lists := func(traposID string) bool {
		_, got := postRequest(ctx, t, g, traposID, `{"type":"fs.list","payload":{"path":"/"},"timeoutMs":10000}`)
		return got.OK
	}
	require.True(t, lists("5:küche"))
	require.True(t, lists("6:keller"))
	set(ctx, t, kitchen, "sandbox.allow_files", "none")
	assert.False(t, lists("5:küche"), "computer 5's owner turned its files off")
	assert.True(t, lists("6:keller"), "computer 6's owner did not")
	_, got = postRequest(ctx, t, g, "6:keller", `{"type":"computer.info","payload":{},"timeoutMs":10000}`)
	require.True(t, got.OK, "%+v", got)
	assert.Equal(t, map[string]any{"files": "read", "exec": false, "screen": "none"}, got.Payload["allowed"])
}
