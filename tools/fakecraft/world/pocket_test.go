package world_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"
	"fakecraft/world"
)

// TestPocketComputerInAWorld: a world file's pocket computer is one (26x20, the pocket
// API), its back modem reaches the others over rednet from where it stands, and an upgrade
// its player carries (Carry, from Go) goes on with pocket.equipBack, the modem going into
// the inventory; a speaker carried, then the modem again, as a player swaps them.
// periphemu cannot put anything beside it either.
func TestPocketComputerInAWorld(t *testing.T) {
	ctx := within(t)
	spec := world.Spec{
		TimeScale: testScale,
		Computers: []world.ComputerSpec{
			{ID: 1, Position: [3]float64{0, 64, 0}, Peripherals: map[string]string{"top": "modem"},
				Files: map[string]string{"/startup.lua": `
rednet.open("top")
rednet.host("echo", "server")
while true do
  local from, msg = rednet.receive("echo")
  rednet.send(from, "echo: " .. msg, "echo")
end
`}},
			{ID: 2, Pocket: true, Position: [3]float64{20, 64, 0}, Peripherals: map[string]string{"back": "modem"},
				Files: map[string]string{"/startup.lua": `
print("size", term.getSize())
print(periphemu.create("top", "speaker"))
rednet.open("back")
local id
repeat id = rednet.lookup("echo", "server") until id
rednet.send(id, "hi", "echo")
print(select(2, rednet.receive("echo")))
os.pullEvent("carried")
print("equip", pocket.equipBack())
print(peripheral.getType("back"), peripheral.hasType("back", "speaker"))
print("equip", pocket.equipBack())
print(peripheral.getType("back"), peripheral.call("back", "isOpen", 1))
`}},
		},
	}
	w := fakecrafttest.NewWorld(t, spec)
	w.StartAll(spec)
	pc := w.Computer(2)
	pc.WaitFor(ctx, "echo: hi")
	assert.Contains(t, pc.Output(), "size\t26\t20\nfalse\tCould not create \nperipheral: a pocket \ncomputer has no \nperipherals but its back \nupgrade (back=modem, \nender_modem or speaker)\n",
		"nothing stands beside it: not even what a program asks for")
	pk := w.At(2).Pocket()
	require.NotNil(t, pk)
	assert.Empty(t, pk.Carried())
	pk.Carry("speaker")
	pc.QueueString("carried")
	pc.WaitFor(ctx, "modem\tfalse")
	out := pc.Output()
	assert.Contains(t, out, "equip\ttrue\nspeaker\ttrue\nequip\ttrue\nmodem\tfalse\n",
		"the speaker goes on, then the modem, a fresh one: its channels closed")
	assert.Equal(t, []string{"speaker"}, pk.Carried())
	assert.Nil(t, w.At(1).Pocket(), "an ordinary computer has no pocket")
}
