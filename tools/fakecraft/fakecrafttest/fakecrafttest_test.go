package fakecrafttest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"go.uber.org/goleak"

	"fakecraft/computer"
	"fakecraft/computer/machine"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRunWithFiles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, out := Run(ctx, t, machine.Options{
		Files:   map[string]string{"/hello.lua": `print("hi", http ~= nil, textutils.serializeJSON({1}), type(parallel.waitForAll))`},
		Program: "/hello.lua",
		// Boot and a trivial program must not wait on the clock: with one tick every 50 000 s
		// of real time, any timer on the way would hold the run until ctx ends.
		TimeScale: 1e-6,
	})
	assert.True(t, res.OK)
	assert.Equal(t, "hi\ttrue\t[1]\tfunction\n", out)
	// No bound on its wall time: a loaded machine boots slower, and no test may depend on that.
}

func TestFloodAndTerminate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := Start(t, machine.Options{
		Files: map[string]string{"/wait.lua": `
print("ready")
os.pullEvent("go")
local n = 0
os.queueEvent("marker")
while true do
  local e = os.pullEvent()
  if e == "marker" then break end
  n = n + 1
end
print("flood", n)
os.pullEvent("never")`},
		Program: "/wait.lua",
	})
	c.WaitFor(ctx, "ready")
	// Queued from the Lua goroutine, so the burst lands between two resumes.
	c.Do(func(L *lua.LState) {
		c.QueueString("go")
		c.Flood("noise", 300)
	})
	c.WaitFor(ctx, "flood")
	c.Terminate()
	res, err := c.Wait(ctx)
	require.NoError(t, err)
	assert.False(t, res.OK)
	assert.Contains(t, c.Output(), "flood\t255\n", "256 slots: go plus 255 noise; the rest dropped")
	assert.Contains(t, c.Output(), "Terminated\n")
	assert.Equal(t, computer.EventQueueLimit, 256)
}

// A Go API function called straight from pcall has no caller name, as in CC (its spec
// text): a naive emulator names the pcall shim's local variable instead.
func TestArgumentErrorUnderPcallHasNoFunctionName(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, out := Run(ctx, t, machine.Options{
		Files: map[string]string{"/p.lua": `
local _, direct = pcall(textutils.serializeJSON)
local _, named = pcall(function() return textutils.serializeJSON() end)
print(direct)
print(named:find("to 'serializeJSON'", 1, true) ~= nil)`},
		Program: "/p.lua",
	})
	require.True(t, res.OK, out)
	assert.Equal(t, "bad argument #1 (table, string, number or boolean \nexpected, got nil)\ntrue\n", out)
}
