package world_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"
	"fakecraft/peripheral/drive"
	"fakecraft/peripheral/monitor"
	"fakecraft/peripheral/printer"
	"fakecraft/peripheral/speaker"
	"fakecraft/world"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testScale runs the worlds' clocks fast: rednet's lookups and gps wait whole seconds.
const testScale = 20

func within(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestRednetBetweenComputers: two computers with wireless modems find each other with
// rednet.host/lookup and exchange messages with send/receive, over the world's air.
func TestRednetBetweenComputers(t *testing.T) {
	ctx := within(t)
	w := fakecrafttest.StartWorld(t, world.Spec{
		TimeScale: testScale,
		Computers: []world.ComputerSpec{
			{ID: 1, Position: [3]float64{0, 64, 0}, Peripherals: map[string]string{"top": "modem"},
				Files: map[string]string{"/startup.lua": `
rednet.open("top")
local id
repeat id = rednet.lookup("chat", "two") until id
print("found", id)
rednet.send(id, { text = "hello" }, "chat")
local from, reply = rednet.receive("chat")
print("reply", from, reply)
`}},
			{ID: 2, Position: [3]float64{10, 64, 0}, Peripherals: map[string]string{"top": "modem"},
				Files: map[string]string{"/startup.lua": `
rednet.open("top")
rednet.host("chat", "two")
print("hosting")
local from, msg, proto = rednet.receive("chat")
print("got", from, msg.text, proto)
rednet.send(from, "hi back", "chat")
`}},
		},
	})
	w.Computer(2).WaitFor(ctx, "got\t1\thello\tchat")
	w.Computer(1).WaitFor(ctx, "found\t2")
	w.Computer(1).WaitFor(ctx, "reply\t2\thi back")
}

// gpsHost is a computer serving its position with the gps program, as a player sets one
// up: a startup file running `gps host x y z`.
func gpsHost(id int, x, y, z float64) world.ComputerSpec {
	return world.ComputerSpec{ID: id, Position: [3]float64{x, y, z},
		Peripherals: map[string]string{"top": "modem"},
		Files: map[string]string{"/startup.lua": fmt.Sprintf(
			"shell.run(%q)", fmt.Sprintf("gps host %g %g %g", x, y, z))}}
}

// TestGPSLocatesFromFourHosts: four GPS hosts (three in a plane, one above) let a fifth
// computer find its own position with gps.locate, from the distances its modem measures.
func TestGPSLocatesFromFourHosts(t *testing.T) {
	ctx := within(t)
	w := fakecrafttest.StartWorld(t, world.Spec{
		TimeScale: testScale,
		Computers: []world.ComputerSpec{
			gpsHost(11, 5, 64, 5), gpsHost(12, 20, 64, 5), gpsHost(13, 5, 64, 20), gpsHost(14, 5, 80, 5),
			{ID: 1, Position: [3]float64{12, 70, -3}, Peripherals: map[string]string{"left": "modem"},
				Files: map[string]string{"/startup.lua": `
os.queueEvent("x") os.pullEvent("x")
local x, y, z
repeat x, y, z = gps.locate(1) until x
print("at", x, y, z)
`}},
		},
	})
	w.Computer(1).WaitFor(ctx, "at\t12\t70\t-3")
	w.Computer(11).WaitFor(ctx, "GPS requests served")
}

// TestWirelessRange: a normal wireless modem reaches 64 blocks near the ground and more
// the higher either end is; an ender modem reaches everywhere. A computer learns it heard
// everything there was when the ender "done" arrives: a transmission is queued on every
// receiver before transmit returns.
func TestWirelessRange(t *testing.T) {
	ctx := within(t)
	listener := func(id int, pos [3]float64) world.ComputerSpec {
		return world.ComputerSpec{ID: id, Position: pos,
			Peripherals: map[string]string{"left": "modem", "right": "ender_modem"},
			Files: map[string]string{"/startup.lua": `
peripheral.call("left", "open", 1)
peripheral.call("right", "open", 2)
print("ready")
while true do
  local _, side, channel, _, message, distance = os.pullEvent("modem_message")
  print(side, message, distance)
  if message == "done" then break end
end
`}}
	}
	w := fakecrafttest.StartWorld(t, world.Spec{
		TimeScale: testScale,
		Computers: []world.ComputerSpec{
			{ID: 1, Position: [3]float64{0, 64, 0},
				Peripherals: map[string]string{"left": "modem", "right": "ender_modem"},
				Files: map[string]string{"/startup.lua": `
os.pullEvent("go")
peripheral.call("left", "transmit", 1, 1, "hello")
peripheral.call("right", "transmit", 2, 2, "done")
`}},
			listener(2, [3]float64{60, 64, 0}),   // 60 blocks: in range
			listener(3, [3]float64{100, 64, 0}),  // 100 blocks: out of range at this height
			listener(4, [3]float64{100, 200, 0}), // about 169 blocks, but high up: in range
		},
	})
	for _, id := range []int{2, 3, 4} {
		w.Computer(id).WaitFor(ctx, "ready")
	}
	w.Computer(1).QueueString("go")
	for _, id := range []int{2, 3, 4} {
		w.Computer(id).WaitFor(ctx, "done")
	}
	assert.Contains(t, w.Computer(2).Output(), "left\thello\t60\n")
	assert.NotContains(t, w.Computer(3).Output(), "hello")
	assert.Contains(t, w.Computer(3).Output(), "right\tdone\t100\n")
	assert.Regexp(t, `left\thello\t168\.8\d*\n`, w.Computer(4).Output())
}

// TestRedstoneFromGo: inputs set from Go reach the computer with a redstone event, its
// outputs reach OnOutput listeners, and they turn off when it shuts down.
func TestRedstoneFromGo(t *testing.T) {
	ctx := within(t)
	w := fakecrafttest.NewWorld(t, world.Spec{Computers: []world.ComputerSpec{{ID: 1}}})
	bus := w.At(1).Peripherals()
	outputs := make(chan string, 8)
	bus.OnOutput(func(side string, strength, bundled int) {
		outputs <- fmt.Sprintf("%s %d %d", side, strength, bundled)
	})
	opts, err := w.Machine(world.Spec{}, world.ComputerSpec{ID: 1})
	require.NoError(t, err)
	opts.Files = map[string]string{"/startup.lua": `
print("ready")
os.pullEvent("redstone")
print("input", rs.getAnalogInput("back"), rs.getBundledInput("back"), rs.getInput("left"))
rs.setAnalogOutput("front", 9)
rs.setBundledOutput("front", colors.lime)
os.pullEvent("stop")
os.shutdown()
`}
	c := fakecrafttest.Start(t, opts)
	c.WaitFor(ctx, "ready")
	require.NoError(t, bus.SetInput("back", 12, 0x21))
	require.Error(t, bus.SetInput("up", 1, 0))
	c.WaitFor(ctx, "input\t12\t33\tfalse")
	assert.Equal(t, "front 9 0", <-outputs)
	assert.Equal(t, "front 9 32", <-outputs)
	c.QueueString("stop")
	_, err = c.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, "front 0 0", <-outputs)
	strength, bundled, ok := bus.Output("front")
	assert.Equal(t, []any{0, 0, true}, []any{strength, bundled, ok})
}

// TestDrivesFromOutside: what the person running fakecraft inserts (a host directory as a
// disk, a host file as a music disc) works as a disk and a record do in CC (a record's
// label cannot change), and Go sees the drive's state.
func TestDrivesFromOutside(t *testing.T) {
	ctx := within(t)
	folder := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(folder, "readme.txt"), []byte("from the host"), 0o644))
	music := filepath.Join(t.TempDir(), "Wait.ogg")
	require.NoError(t, os.WriteFile(music, []byte("not really music"), 0o644))
	w := fakecrafttest.StartWorld(t, world.Spec{Computers: []world.ComputerSpec{{ID: 1,
		Peripherals: map[string]string{"left": "drive:" + folder, "right": "drive:" + music},
		Files: map[string]string{"/startup.lua": `
local f = fs.open("/disk/readme.txt", "r")
print("read", f.readAll(), disk.getID("left"), disk.hasAudio("right"), disk.getAudioTitle("right"))
f.close()
print(select(2, pcall(disk.setLabel, "right", "x")))
shell.run("dj play right")
shell.run("id right")
`}}}})
	c := w.Computer(1)
	c.WaitFor(ctx, "read\tfrom the host\tnil\ttrue\tWait")
	// The line of CC's disk.lua, as CC's VM places the drive method's error.
	c.WaitFor(ctx, "\n/rom/apis/disk.lua:62: Disk label cannot be changed\n")
	c.WaitFor(ctx, "Has audio track \"Wait\"")
	assert.Contains(t, c.Output(), "Playing Wait\n")
	d := w.At(1).Peripherals().Get("right").(*drive.Drive)
	assert.True(t, d.Playing())
	assert.Equal(t, drive.Record, d.Eject().Kind())
	assert.Nil(t, d.Media())
}

// TestFloppyLabelIsKeptWithTheWorld: a floppy's label, like its files, is still there in
// the next run of a world kept in a directory (it was lost: only the files were kept).
func TestFloppyLabelIsKeptWithTheWorld(t *testing.T) {
	ctx := within(t)
	dir := t.TempDir()
	spec := world.Spec{Dir: dir, Computers: []world.ComputerSpec{{ID: 1,
		Peripherals: map[string]string{"left": "drive:5"},
		Files: map[string]string{"/startup.lua": `
print("label", disk.getLabel("left"))
if os.getComputerLabel() ~= "second" then disk.setLabel("left", "k\252che") end
print("labelled")
`}}}}
	w := fakecrafttest.StartWorld(t, spec)
	w.Computer(1).WaitFor(ctx, "labelled")
	assert.Contains(t, w.Computer(1).Output(), "label\tnil\n")

	spec.Computers[0].Label = "second"
	again := fakecrafttest.StartWorld(t, spec)
	again.Computer(1).WaitFor(ctx, "labelled")
	assert.Contains(t, again.Computer(1).Output(), "label\tküche\n")
	assert.Equal(t, "k\xfcche", *again.Floppy(5).Label())

	// An empty label is a label, in the next run too, as CC keeps disk.setLabel(side, "").
	empty := ""
	ok, err := again.Floppy(5).SetLabel(&empty)
	require.True(t, ok)
	require.NoError(t, err)
	w3, err := world.New(world.Options{Dir: dir})
	require.NoError(t, err)
	require.NotNil(t, w3.Floppy(5).Label())
	assert.Equal(t, "", *w3.Floppy(5).Label())

	// A label cleared is gone in the next run too.
	ok, err = w3.Floppy(5).SetLabel(nil)
	require.True(t, ok)
	require.NoError(t, err)
	w4, err := world.New(world.Options{Dir: dir})
	require.NoError(t, err)
	assert.Nil(t, w4.Floppy(5).Label())
}

// TestCablePeripheralsAndMessages: computers with wired modems on one cable reach the
// cable's peripherals by their network names, each mounting the same floppy disk, and
// hear each other's transmissions, with their network names in peripheral.getNames.
func TestCablePeripheralsAndMessages(t *testing.T) {
	ctx := within(t)
	program := func(id int) string {
		return fmt.Sprintf(`
print("names", table.concat(peripheral.getNames(), ","))
print("types", peripheral.getType("back"))
print("mount", disk.getMountPath("drive_0"), fs.getDrive("disk"), disk.getID("drive_0"))
local modem = peripheral.wrap("back")
modem.open(%d)
print("ready")
if %d == 1 then
  os.pullEvent("go")
  modem.transmit(2, 1, "over the wire")
else
  local _, side, channel, reply, message = os.pullEvent("modem_message")
  print("heard", side, channel, reply, message)
end
`, id, id)
	}
	w := fakecrafttest.StartWorld(t, world.Spec{
		Cables: map[string]map[string]string{"lan": {"drive_0": "drive:3", "modem_9": "ender_modem"}},
		Computers: []world.ComputerSpec{
			{ID: 1, Position: [3]float64{0, 64, 0}, Peripherals: map[string]string{"back": "wired_modem:lan"},
				Files: map[string]string{"/startup.lua": program(1)}},
			{ID: 2, Position: [3]float64{500, 64, 0}, Peripherals: map[string]string{"back": "wired_modem:lan"},
				Files: map[string]string{"/startup.lua": program(2)}},
		},
	})
	for _, id := range []int{1, 2} {
		c := w.Computer(id)
		c.WaitFor(ctx, "ready")
		assert.Contains(t, c.Output(), "names\tback,modem_9,drive_0\n", "in CC's order (TestCablePeripheralsInCCsOrder)")
		assert.Contains(t, c.Output(), "types\tmodem\tperipheral_hub\n")
		assert.Contains(t, c.Output(), "mount\tdisk\tdrive_0\t3\n")
	}
	w.Computer(1).QueueString("go")
	w.Computer(2).WaitFor(ctx, "heard\tback\t2\t1\tover the wire")
	require.True(t, w.Cable("lan").DetachRemote("drive_0"))
	assert.Nil(t, w.Cable("lan").Remote("drive_0"))
}

// TestCablePeripheralsInCCsOrder: a computer lists a cable's peripherals, and so
// peripheral.find finds them, in the order CC's wired modem hands them over: the keySet of
// the ConcurrentHashMap it keeps them in, by their names' Java hashes (printer_0's bucket 7,
// monitor_1's 10, monitor_2's 11, monitor_0's 13), not by name.
func TestCablePeripheralsInCCsOrder(t *testing.T) {
	ctx := within(t)
	w := fakecrafttest.StartWorld(t, world.Spec{
		Cables: map[string]map[string]string{"lan": {"monitor_0": "monitor", "monitor_1": "monitor", "printer_0": "printer"}},
		Computers: []world.ComputerSpec{
			{ID: 1, Peripherals: map[string]string{"back": "wired_modem:lan"},
				Files: map[string]string{"/startup.lua": `
local function found()
  local names = {}
  for _, m in ipairs({ peripheral.find("monitor") }) do names[#names + 1] = peripheral.getName(m) end
  return table.concat(names, ",")
end
print("names", table.concat(peripheral.getNames(), ","))
print("monitors", found())
os.pullEvent("go")
print("names", table.concat(peripheral.getNames(), ","))
print("monitors", found())
`}},
		},
	})
	c := w.Computer(1)
	c.WaitFor(ctx, "monitors	monitor_1,monitor_0")
	mon, err := monitor.New(1, 1, true)
	require.NoError(t, err)
	require.NoError(t, w.Cable("lan").AttachRemote("monitor_2", mon))
	c.QueueString("go")
	c.WaitFor(ctx, "monitors	monitor_1,monitor_2,monitor_0")
	assert.Contains(t, c.Output(), "names\tback,printer_0,monitor_1,monitor_0\n")
	assert.Contains(t, c.Output(), "names\tback,printer_0,monitor_1,monitor_2,monitor_0\n")
}

// TestNoPeripheralEventsAtBoot: a computer that boots with a disk in its drive and a cable's
// peripherals on its wired modem gets no disk or peripheral event for them, as in CC, whose
// peripherals attach (PeripheralAPI.startup) before the computer is on and so queue nothing
// (ComputerExecutor.queueEvent drops events until then); one attached later does.
func TestNoPeripheralEventsAtBoot(t *testing.T) {
	ctx := within(t)
	w := fakecrafttest.StartWorld(t, world.Spec{
		Cables: map[string]map[string]string{"lan": {"monitor_0": "monitor"}},
		Computers: []world.ComputerSpec{
			{ID: 1, Peripherals: map[string]string{"back": "wired_modem:lan", "left": "drive:4"},
				Files: map[string]string{"/startup.lua": `
local function events()
  os.queueEvent("marker")
  local seen = {}
  while true do
    local event = table.pack(os.pullEvent())
    if event[1] == "marker" then return table.concat(seen, ",") end
    seen[#seen + 1] = table.concat(event, " ", 1, event.n)
  end
end
print("at boot", events(), disk.isPresent("left"), peripheral.isPresent("monitor_0"))
peripheral.call("left", "ejectDisk")
os.pullEvent("disk_eject")
peripheral.call("left", "insertDisk", 4)
print("later", events())
`}},
		},
	})
	c := w.Computer(1)
	c.WaitFor(ctx, "later\tdisk left")
	assert.Contains(t, c.Output(), "at boot\t\ttrue\ttrue\n")
}

// TestPeriphemuPutsPeripheralsOnACable: fakecraft's periphemu.createRemote puts a peripheral
// on a cable by its network name, as a player's modem on a block does in CC: a wired modem
// on that cable reaches it through callRemote and by the name, its computer gets a
// peripheral event, and Go finds it on the cable; removeRemote takes it off again (a
// peripheral_detach). A name already on the cable, a side, and a host path are refused as
// create refuses them.
func TestPeriphemuPutsPeripheralsOnACable(t *testing.T) {
	ctx := within(t)
	w := fakecrafttest.StartWorld(t, world.Spec{
		Computers: []world.ComputerSpec{
			{ID: 1, Peripherals: map[string]string{"back": "wired_modem:lan"},
				Files: map[string]string{"/startup.lua": `
print("create", periphemu.createRemote("lan", "monitor_0", "monitor", 2, 1))
print("event", os.pullEvent("peripheral"))
print("again", periphemu.createRemote("lan", "monitor_0", "monitor"))
print("side", periphemu.createRemote("lan", "top", "monitor"))
print("host", periphemu.createRemote("lan", "drive_0", "drive", "/etc"))
print("names", table.concat(peripheral.getNames(), ","))
print("size", peripheral.call("back", "callRemote", "monitor_0", "getSize"))
print("size", peripheral.call("monitor_0", "getSize"))
os.pullEvent("go")
print("removed", periphemu.removeRemote("lan", "monitor_0"), periphemu.removeRemote("lan", "monitor_0"))
print("event", os.pullEvent("peripheral_detach"))
print("names", table.concat(peripheral.getNames(), ","))
`}},
		},
	})
	c := w.Computer(1)
	c.WaitFor(ctx, "size\t18\t5\nsize\t18\t5\n")
	_, isMonitor := w.Cable("lan").Remote("monitor_0").(*monitor.Monitor)
	assert.True(t, isMonitor, "the cable has it")
	c.QueueString("go")
	c.WaitFor(ctx, "names\tback\n")
	assert.Nil(t, w.Cable("lan").Remote("monitor_0"))
	out := strings.ReplaceAll(c.Output(), "\n", "")
	for _, want := range []string{
		"create\ttrue", "event\tperipheral\tmonitor_0", "names\tback,monitor_0",
		"again\tfalse\tCould not create peripheral: attach monitor_0: the cable already has a peripheral named so",
		"side\tfalse\tCould not create peripheral: attach \"top\": a cable's peripheral needs a name that is not a side",
		"host\tfalse\tCould not create peripheral: drive:/etc: \"/etc\" is not a disk id",
		"removed\ttrue\tfalse", "event\tperipheral_detach\tmonitor_0",
	} {
		assert.Contains(t, out, want)
	}
}

// TestModemMessageDistances: modem_message's distance is the straight line between two
// wireless modems (CC's WirelessNetwork), and for wired modems the length of the cable
// between them (CC's WiredNetworkImpl sums it block by block): fakecraft has no cables
// laid, so the shortest one, along the axes. It is never nil: CC gives none only between
// dimensions.
func TestModemMessageDistances(t *testing.T) {
	ctx := within(t)
	listener := `
local modem = peripheral.wrap("back")
modem.open(7)
print("ready")
local _, _, channel, reply, message, distance = os.pullEvent("modem_message")
print("heard", channel, reply, message, distance)
`
	w := fakecrafttest.StartWorld(t, world.Spec{
		Computers: []world.ComputerSpec{
			{ID: 1, Position: [3]float64{0, 64, 0}, Peripherals: map[string]string{"back": "wired_modem:lan", "top": "modem"},
				Files: map[string]string{"/startup.lua": `
os.pullEvent("go")
peripheral.call("back", "transmit", 7, 9, "by wire")
peripheral.call("top", "transmit", 7, 9, "by air")
`}},
			{ID: 2, Position: [3]float64{3, 64, 4}, Peripherals: map[string]string{"back": "wired_modem:lan"},
				Files: map[string]string{"/startup.lua": listener}},
			{ID: 3, Position: [3]float64{3, 64, 4}, Peripherals: map[string]string{"back": "modem"},
				Files: map[string]string{"/startup.lua": listener}},
		},
	})
	w.Computer(2).WaitFor(ctx, "ready")
	w.Computer(3).WaitFor(ctx, "ready")
	w.Computer(1).QueueString("go")
	w.Computer(2).WaitFor(ctx, "heard\t7\t9\tby wire\t7")
	w.Computer(3).WaitFor(ctx, "heard\t7\t9\tby air\t5")
}

// TestAWiredModemOnConnectsItsComputer: a wired modem that is on (wired_modem:CABLE:on)
// puts its computer on the cable as CC's computer peripheral, computer_0: the other
// computers there see its id, label and power, and shut it down; its own getNameLocal
// names it, and it does not see itself. Taking the modem away takes it off the cable.
func TestAWiredModemOnConnectsItsComputer(t *testing.T) {
	ctx := within(t)
	w := fakecrafttest.StartWorld(t, world.Spec{
		Computers: []world.ComputerSpec{
			{ID: 1, Label: "door", Peripherals: map[string]string{"back": "wired_modem:lan:on"},
				Files: map[string]string{"/startup.lua": `
print("local", peripheral.call("back", "getNameLocal"))
print("names", table.concat(peripheral.call("back", "getNamesRemote"), ","))
print("ready")
`}},
			{ID: 2, Peripherals: map[string]string{"back": "wired_modem:lan"},
				Files: map[string]string{"/startup.lua": `
print("local", peripheral.call("back", "getNameLocal"))
print("waiting")
os.pullEvent("go")
print("names", table.concat(peripheral.getNames(), ","))
print("type", peripheral.getType("computer_0"))
local c = peripheral.wrap("computer_0")
print("computer", c.getID(), c.getLabel(), c.isOn())
c.shutdown()
while c.isOn() do os.sleep(0) end
print("off", c.getLabel(), c.isOn())
print("detached", select(2, os.pullEvent("peripheral_detach")))
`}},
		},
	})
	w.Computer(1).WaitFor(ctx, "ready")
	assert.Contains(t, w.Computer(1).Output(), "local\tcomputer_0\nnames\t\n")
	w.Computer(2).WaitFor(ctx, "waiting")
	assert.Contains(t, w.Computer(2).Output(), "local\nwaiting\n", "a modem that is off has no local name")
	w.Computer(2).QueueString("go")
	w.Computer(2).WaitFor(ctx, "off")
	_, err := w.Computer(1).Wait(ctx)
	require.NoError(t, err)
	require.True(t, w.At(1).Detach("back"))
	w.Computer(2).WaitFor(ctx, "detached")
	assert.Contains(t, w.Computer(2).Output(), "names\tback,computer_0\ntype\tcomputer\ncomputer\t1\tdoor\ttrue\noff\tdoor\tfalse\ndetached\tcomputer_0\n")
}

// TestChatRoom: chat host serves a room over rednet in CC's format: a client that speaks
// the protocol itself (bob) and the chat join program (alice, typing from the test) hear
// each other, the room's commands answer, and terminating the host kicks who is left.
func TestChatRoom(t *testing.T) {
	ctx := within(t)
	modem := map[string]string{"top": "modem"}
	// Real time, not testScale: chat's sides drop each other after one 15 s ping period without
	// an answer, which testScale made 0.75 s of wall time, less than a loaded machine may take
	// to run the other side (it failed so on a CI run). No step below waits on the clock:
	// rednet.lookup returns on the host's answer.
	spec := world.Spec{TimeScale: 1, Computers: []world.ComputerSpec{
		{ID: 1, Position: [3]float64{0, 64, 0}, Peripherals: modem, Files: map[string]string{"/startup.lua": `shell.run("chat host room")`}},
		{ID: 2, Position: [3]float64{10, 64, 0}, Peripherals: modem, Files: map[string]string{"/startup.lua": `
rednet.open("top")
local server = rednet.lookup("chat", "room")
rednet.send(server, { sType = "login", nUserID = 7, sUsername = "bob" }, "chat")
while true do
  local from, m = rednet.receive("chat")
  if m.sType == "text" then
    print("bob heard", m.sText)
  elseif m.sType == "ping to client" then
    rednet.send(from, { sType = "pong to server", nUserID = 7 }, "chat")
  elseif m.sType == "kick" then
    print("bob kicked")
  end
end
`}},
		{ID: 3, Position: [3]float64{0, 64, 10}, Peripherals: modem, Files: map[string]string{"/startup.lua": `
shell.run("chat join room alice")
print("left the room")
`}},
	}}
	w := fakecrafttest.NewWorld(t, spec)
	start := func(i int, input computer.Input) *fakecrafttest.Computer {
		opts, err := w.Machine(spec, spec.Computers[i])
		require.NoError(t, err)
		opts.Input = input
		return fakecrafttest.Start(t, opts)
	}
	host := start(0, nil)
	host.WaitFor(ctx, "0 users connected.")
	bob := start(1, nil)
	bob.WaitFor(ctx, "bob heard\t* bob has joined the chat\n")
	lines := make(chan string)
	alice := start(2, lines)
	bob.WaitFor(ctx, "bob heard\t* alice has joined the chat\n")
	onScreen := func(c *fakecrafttest.Computer, text string) {
		require.Eventually(t, func() bool { return strings.Contains(c.Screen(), text) },
			30*time.Second, 5*time.Millisecond, "computer %d shows:\n%s", c.ID(), c.Screen())
	}
	onScreen(alice, "alice on room")
	onScreen(host, "2 users connected.")

	for _, step := range []struct{ line, bob, alice string }{
		{"hello", "<alice> hello", "<alice> hello"},
		{"/me waves", "* alice waves", "* alice waves"},
		{"/users", "", "* Connected Users:"},
		{"/help", "", "* /me /nick /users /help /logout"},
		{"/dance", "", "* Unrecognised command: /dance"},
		{"/me", "", "* Usage: /me [words]"},
		{"/nick al", "* alice is now known as al", "* alice is now known as al"},
		{"/logout", "* al has left the chat", ""},
	} {
		lines <- step.line
		if step.bob != "" {
			bob.WaitFor(ctx, "bob heard\t"+step.bob+"\n")
		}
		if step.alice != "" {
			onScreen(alice, step.alice)
		}
	}
	assert.NotContains(t, bob.Output(), "Connected Users", "what one asks is told to that one alone")
	assert.Regexp(t, `\* (alice bob|bob alice)`, alice.Screen())
	alice.WaitFor(ctx, "left the room\n")
	assert.Contains(t, alice.Output(), "Disconnected.")
	onScreen(host, "1 user connected.")

	host.Terminate()
	bob.WaitFor(ctx, "bob kicked\n")
}

// TestMonitorShowsAndIsTouched: a program run on a monitor with the monitor program draws
// on it (Go reads the monitor's screen), and a touch from Go reaches it as a click.
func TestMonitorShowsAndIsTouched(t *testing.T) {
	ctx := within(t)
	w := fakecrafttest.StartWorld(t, world.Spec{Computers: []world.ComputerSpec{{ID: 1,
		Peripherals: map[string]string{"top": "monitor:2:1"},
		Files: map[string]string{
			"/startup.lua": `shell.run("monitor top /touchme.lua") print("back")`,
			"/touchme.lua": `
term.clear()
term.setCursorPos(1, 1)
write("tap me")
local _, button, x, y = os.pullEvent("mouse_click")
print("")
print("clicked", button, x, y)
os.pullEvent("mouse_up")
`}}}})
	mon := w.At(1).Peripherals().Get("top").(*monitor.Monitor)
	onScreen := func(text string) {
		require.Eventually(t, func() bool { return strings.Contains(mon.Screen(), text) },
			30*time.Second, 5*time.Millisecond, "monitor shows:\n%s", mon.Screen())
	}
	onScreen("tap me")
	w.Computer(1).WaitFor(ctx, "Running /touchme.lua on monitor top")
	mon.Touch(3, 1)
	onScreen("clicked 1 3 1")
	w.Computer(1).WaitFor(ctx, "back")
	assert.Equal(t, "tap me", strings.Split(mon.Screen(), "\n")[0])
	w18, h5 := mon.Terminal().Size()
	assert.Equal(t, []int{18, 5}, []int{w18, h5})
}

// TestRedstoneWire: two computers wired side to side see each other's outputs as inputs,
// with a redstone event each time they change; the redstone program probes them.
func TestRedstoneWire(t *testing.T) {
	ctx := within(t)
	w := fakecrafttest.StartWorld(t, world.Spec{
		Wires: []world.Wire{{A: world.Port{Computer: 1, Side: "left"}, B: world.Port{Computer: 2, Side: "right"}}},
		Computers: []world.ComputerSpec{
			{ID: 1, Files: map[string]string{"/startup.lua": `
print("ready")
os.pullEvent("go")
shell.run("redstone set left 11")
os.pullEvent("redstone") -- the orange wire
os.pullEvent("redstone") -- the signal
shell.run("redstone probe")
`}},
			{ID: 2, Files: map[string]string{"/startup.lua": `
print("ready")
os.pullEvent("redstone")
print("input", rs.getAnalogInput("right"), rs.getInput("left"))
shell.run("redstone set right orange true")
shell.run("redstone set right true")
`}},
		},
	})
	// Computer 1 changes the wire only once computer 2 waits for it: during its boot, a
	// filtered pullEvent (as CC's own) drops events it does not want, a redstone one too.
	w.Computer(1).WaitFor(ctx, "ready")
	w.Computer(2).WaitFor(ctx, "ready")
	w.Computer(1).QueueString("go")
	w.Computer(2).WaitFor(ctx, "input\t11\tfalse")
	w.Computer(1).WaitFor(ctx, "Bundled inputs:")
	w.Computer(1).WaitFor(ctx, "left: orange.")
	assert.Contains(t, w.Computer(1).Output(), "Redstone inputs: \nleft.\n")
	assert.Error(t, w.Connect(world.Wire{A: world.Port{Computer: 1, Side: "top"}, B: world.Port{Computer: 9, Side: "top"}}))
	assert.Error(t, w.Connect(world.Wire{A: world.Port{Computer: 1, Side: "up"}, B: world.Port{Computer: 2, Side: "top"}}))
}

// TestTouchingComputersAreEachOthersPeripherals: two computers placed side by side are each
// other's computer peripheral on the sides that touch, as CC's ComputerPeripheral is for the
// block beside a computer (its id, label and power; one shuts the other down and turns it on
// again), and their redstone joins as a wire's does. A side that holds something else, a
// computer beside itself, and a pocket computer are refused.
func TestTouchingComputersAreEachOthersPeripherals(t *testing.T) {
	ctx := within(t)
	w := fakecrafttest.StartWorld(t, world.Spec{
		Touching: []world.Wire{{A: world.Port{Computer: 1, Side: "right"}, B: world.Port{Computer: 2, Side: "left"}}},
		Computers: []world.ComputerSpec{
			{ID: 1, Label: "door", Peripherals: map[string]string{"top": "modem"}, Files: map[string]string{"/startup.lua": `
print("names", table.concat(peripheral.getNames(), ","))
print("ready")
os.pullEvent("go")
rs.setOutput("right", true)
local c = peripheral.find("computer")
print("beside", peripheral.getName(c), c.getID(), c.getLabel(), c.isOn())
os.pullEvent("shut")
c.shutdown()
while c.isOn() do os.sleep(0) end
print("off", c.isOn())
`}},
			{ID: 2, Files: map[string]string{"/startup.lua": `
print("type", peripheral.getType("left"), peripheral.call("left", "getID"), peripheral.call("left", "getLabel"))
print("ready")
os.pullEvent("redstone")
print("input", rs.getInput("left"))
os.pullEvent("never")
`}},
		},
	})
	w.Computer(1).WaitFor(ctx, "ready")
	w.Computer(2).WaitFor(ctx, "ready")
	assert.Contains(t, w.Computer(1).Output(), "names\ttop,right\n")
	assert.Contains(t, w.Computer(2).Output(), "type\tcomputer\t1\tdoor\n")
	w.Computer(1).QueueString("go")
	w.Computer(2).WaitFor(ctx, "input\ttrue")
	w.Computer(1).QueueString("shut")
	w.Computer(1).WaitFor(ctx, "off\tfalse")
	assert.Contains(t, w.Computer(1).Output(), "beside\tright\t2\tnil\ttrue\n")

	assert.ErrorContains(t, w.Touch(world.Wire{A: world.Port{Computer: 1, Side: "top"}, B: world.Port{Computer: 2, Side: "right"}}),
		"touching: computer 1's top: Peripheral already attached on side top")
	assert.Nil(t, w.At(2).Peripherals().Get("right"), "nothing is left on the other computer's side")
	assert.ErrorContains(t, w.Touch(world.Wire{A: world.Port{Computer: 1, Side: "back"}, B: world.Port{Computer: 1, Side: "front"}}),
		"touching: computer 1 cannot touch itself")
	assert.ErrorContains(t, w.Touch(world.Wire{A: world.Port{Computer: 1, Side: "back"}, B: world.Port{Computer: 9, Side: "front"}}),
		"touching: computer 9 is not in the world")
	p, err := w.Place(3, world.Vec{})
	require.NoError(t, err)
	_, err = p.MakePocket()
	require.NoError(t, err)
	assert.ErrorContains(t, w.Touch(world.Wire{A: world.Port{Computer: 1, Side: "back"}, B: world.Port{Computer: 3, Side: "front"}}),
		"touching: computer 3 is a pocket computer")
}

// TestSpeakerKeepsWhatItPlayed: a silent speaker still tells Go what it was asked to play.
func TestSpeakerKeepsWhatItPlayed(t *testing.T) {
	ctx := within(t)
	w := fakecrafttest.StartWorld(t, world.Spec{Computers: []world.ComputerSpec{{ID: 1,
		Peripherals: map[string]string{"back": "speaker"},
		Files: map[string]string{"/startup.lua": `
local speaker = peripheral.find("speaker")
speaker.playNote("pling", 2, 6)
speaker.playSound("minecraft:block.bell.use", 9)
print("played")
`}}}})
	w.Computer(1).WaitFor(ctx, "played")
	s := w.At(1).Peripherals().Get("back").(*speaker.Speaker)
	assert.Equal(t, []speaker.Sound{
		{Kind: "note", Name: "pling", Volume: 2, Pitch: 6},
		{Kind: "sound", Name: "minecraft:block.bell.use", Volume: 3, Pitch: 1},
	}, s.Played())
}

// TestPrinterPages: pages a program prints reach Go and the printer's output file; an
// empty printer refuses a new page.
func TestPrinterPages(t *testing.T) {
	ctx := within(t)
	out := filepath.Join(t.TempDir(), "pages.txt")
	w := fakecrafttest.StartWorld(t, world.Spec{Computers: []world.ComputerSpec{{ID: 1,
		Peripherals: map[string]string{"right": "printer:" + out},
		Files: map[string]string{"/startup.lua": `
local p = peripheral.wrap("right")
p.newPage()
p.setPageTitle("Hello")
p.write("first line")
p.setCursorPos(1, 21)
p.write("last line, cut at the page's edge")
p.newPage() -- finishes the first
p.write("second")
p.endPage()
print("printed")
os.pullEvent("empty")
print("new page:", p.newPage())
`}}}})
	w.Computer(1).WaitFor(ctx, "printed")
	pr := w.At(1).Peripherals().Get("right").(*printer.Printer)
	pages := pr.Pages()
	require.Len(t, pages, 2)
	assert.Equal(t, "Hello", pages[0].Title)
	assert.Equal(t, "first line", pages[0].Lines[0])
	assert.Equal(t, "last line, cut at the pag", pages[0].Lines[20])
	assert.Equal(t, "second", pages[1].Lines[0])
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, pages[0].String()+pages[1].String(), string(data))
	require.NoError(t, pr.Err())
	pr.Load(0, 10)
	w.Computer(1).QueueString("empty")
	w.Computer(1).WaitFor(ctx, "new page:\tfalse")
}

// arrayFillBytes bounds what a test of an integer key near 2^26 may allocate: filling
// gopher-lua's array part up to it takes about a gigabyte, the whole test a few megabytes.
const arrayFillBytes = 256 << 20

// allocationsSince returns how many bytes the process has allocated since the call, when
// called.
func allocationsSince() func() uint64 {
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	return func() uint64 {
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
}

// TestRednetMessageIDInTheArrayRange: rednet remembers a message id up to 2^31, and one
// below 2^26 as a table's integer key makes gopher-lua fill the array part up to it, in Go
// no abort interrupts. An id at the top of that range is remembered and the message
// delivered without allocating the gigabyte of nils (minutes under -race: a computer that
// never stops, as when ~3% of random ids landed there).
func TestRednetMessageIDInTheArrayRange(t *testing.T) {
	ctx := within(t)
	allocated := allocationsSince()
	w := fakecrafttest.StartWorld(t, world.Spec{
		TimeScale: testScale,
		Computers: []world.ComputerSpec{
			{ID: 1, Position: [3]float64{0, 64, 0}, Peripherals: map[string]string{"top": "modem"},
				Files: map[string]string{"/startup.lua": `
peripheral.call("top", "open", 1)
os.pullEvent("modem_message")
-- 2^26 - 1: gopher-lua's largest array index.
peripheral.call("top", "transmit", 2, 1,
  { nMessageID = 67108863, nRecipient = 2, nSender = 1, message = "edge", sProtocol = "t" })
`}},
			{ID: 2, Position: [3]float64{10, 64, 0}, Peripherals: map[string]string{"top": "modem"},
				Files: map[string]string{"/startup.lua": `
rednet.open("top")
local msg
repeat
  peripheral.call("top", "transmit", 1, 2, "ready")
  msg = select(2, rednet.receive("t", 1))
until msg
print("got", msg)
`}},
		},
	})
	w.Computer(2).WaitFor(ctx, "got\tedge")
	assert.Less(t, allocated(), uint64(arrayFillBytes), "remembering one message id allocated the array part up to it")
}

// TestRepeaterMessageIDInTheArrayRange: the repeat program remembers the ids it repeated
// by their text, as rednet does: a random id just below 2^26 no longer makes it fill a
// table's array part up to it (the repeater of a world hung there, never stopping).
func TestRepeaterMessageIDInTheArrayRange(t *testing.T) {
	ctx := within(t)
	allocated := allocationsSince()
	w := fakecrafttest.StartWorld(t, world.Spec{
		TimeScale: testScale,
		Computers: []world.ComputerSpec{
			{ID: 3, Position: [3]float64{10, 64, 0}, Peripherals: map[string]string{"top": "modem"},
				Files: map[string]string{"/startup.lua": `shell.run("repeat")`}},
			{ID: 1, Position: [3]float64{0, 64, 0}, Peripherals: map[string]string{"top": "modem"},
				Files: map[string]string{"/startup.lua": `
-- Sent until the test ends: the repeater may not be listening yet, and repeats an id once.
while true do
  -- 2^26 - 1: gopher-lua's largest array index.
  peripheral.call("top", "transmit", rednet.CHANNEL_REPEAT, 1,
    { nMessageID = 67108863, nRecipient = 2, nSender = 1, message = "edge", sProtocol = "t" })
  sleep(0.5)
end
`}},
		},
	})
	w.Computer(3).WaitFor(ctx, "1 message repeated.")
	assert.Less(t, allocated(), uint64(arrayFillBytes), "remembering one repeated message id allocated the array part up to it")
}

// TestChatHostUserIDInTheArrayRange: chat host keeps its users by the text of their ids, as
// rednet keeps message ids: a chat join's random id below 2^26 made it fill a table's array
// part up to it, in Go no stop reaches (TestChatRoom's host hung so, about one run in 30, and
// the test failed after its time limits).
func TestChatHostUserIDInTheArrayRange(t *testing.T) {
	ctx := within(t)
	allocated := allocationsSince()
	w := fakecrafttest.StartWorld(t, world.Spec{
		TimeScale: testScale,
		Computers: []world.ComputerSpec{
			{ID: 1, Position: [3]float64{0, 64, 0}, Peripherals: map[string]string{"top": "modem"},
				Files: map[string]string{"/startup.lua": `shell.run("chat host room")`}},
			{ID: 2, Position: [3]float64{10, 64, 0}, Peripherals: map[string]string{"top": "modem"},
				Files: map[string]string{"/startup.lua": `
rednet.open("top")
local server
repeat server = rednet.lookup("chat", "room") until server
-- 2^26 - 1: gopher-lua's largest array index.
rednet.send(server, { sType = "login", nUserID = 67108863, sUsername = "bob" }, "chat")
while true do
  local _, m = rednet.receive("chat")
  if m.sType == "text" then print("bob heard", m.sText, m.nUserID) end
end
`}},
		},
	})
	w.Computer(2).WaitFor(ctx, "bob heard\t* bob has joined the chat\t67108863\n")
	assert.Less(t, allocated(), uint64(arrayFillBytes), "keeping one user allocated the array part up to its id")
}

// TestPlaceRefusesIdsCCCannotHave: a world file's computer ids are CC's, from 0 to
// 2^31-1 (a Java int).
func TestPlaceRefusesIdsCCCannotHave(t *testing.T) {
	w, err := world.New(world.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, w.Close()) })
	for _, id := range []int{-1, 1 << 31} {
		_, err := w.Place(id, world.Vec{})
		assert.ErrorContains(t, err, fmt.Sprintf("computer %d: CC's computer ids run from 0 to 2147483647", id))
	}
	_, err = w.Place(1<<31-1, world.Vec{})
	assert.NoError(t, err)
}

// TestAFloppyIsInOneDriveAtATime: a floppy disk is one item, as in CC: a second drive
// given it is refused (it was mounted in both), on a computer or on a cable; a drive
// removed or emptied lets it go.
func TestAFloppyIsInOneDriveAtATime(t *testing.T) {
	w, err := world.New(world.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, w.Close()) })
	p, err := w.Place(1, world.Vec{})
	require.NoError(t, err)
	require.NoError(t, p.Attach("left", "drive:5"))
	const refused = "drive:5: floppy disk 5 is already in another drive"
	assert.EqualError(t, p.Attach("right", "drive:5"), refused)
	assert.ErrorContains(t, w.AttachToCable("lan", "drive_0", "drive:5"), refused)
	assert.Nil(t, p.Peripherals().Get("right"))
	assert.ErrorContains(t, w.Build(world.Spec{Computers: []world.ComputerSpec{{ID: 2,
		Peripherals: map[string]string{"left": "drive:5"}}}}),
		"computer 2, left: "+refused)

	// Taken out of the left drive, it goes in another one.
	left := p.Peripherals().Get("left").(*drive.Drive)
	require.Same(t, w.Floppy(5), left.Eject())
	require.NoError(t, p.Attach("right", "drive:5"))
	right := p.Peripherals().Get("right").(*drive.Drive)
	_, err = left.Insert(w.Floppy(5))
	assert.EqualError(t, err, "floppy disk 5 is already in another drive")
	assert.Nil(t, left.Media())
	// Put back in the drive it is in, it stays.
	old, err := right.Insert(w.Floppy(5))
	require.NoError(t, err)
	assert.Nil(t, old)
	assert.Same(t, w.Floppy(5), right.Media())
	// A drive removed drops its disk.
	require.True(t, p.Detach("right"))
	_, err = left.Insert(w.Floppy(5))
	assert.NoError(t, err)
	// A drive that could not be attached (the side is taken) keeps nothing.
	require.True(t, p.Detach("left"))
	require.NoError(t, p.Attach("top", "monitor"))
	assert.Error(t, p.Attach("top", "drive:5"))
	assert.NoError(t, p.Attach("bottom", "drive:5"))
}
