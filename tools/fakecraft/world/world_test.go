package world_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"fakecraft/fakecrafttest"
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
