package fakecrafttest

import (
	"context"
	"fmt"
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

// cleanupRecorder is a testing.TB whose cleanups and errors stay with the test that made
// it, so a test can run them and read what they reported.
type cleanupRecorder struct {
	testing.TB
	cleanups []func()
	errors   []string
}

func (r *cleanupRecorder) Cleanup(f func())             { r.cleanups = append(r.cleanups, f) }
func (r *cleanupRecorder) Error(args ...any)            { r.errors = append(r.errors, fmt.Sprint(args...)) }
func (r *cleanupRecorder) Errorf(f string, args ...any) { r.Error(fmt.Sprintf(f, args...)) }

func (r *cleanupRecorder) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// TestCleanupReportsAComputerThatDoesNotStop: a computer stuck in Go that no abort reaches
// (here a function waiting on a channel; in the world tests, gopher-lua filling a table's
// array part) fails its test naming it, with the stuck goroutine's stack, instead of
// holding the test's cleanup until go test's timeout.
func TestCleanupReportsAComputerThatDoesNotStop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	saved := stopWait
	stopWait = 100 * time.Millisecond
	t.Cleanup(func() { stopWait = saved })

	release := make(chan struct{})
	entered := make(chan struct{})
	stuck := func(L *lua.LState, _ *computer.Env) error {
		L.SetGlobal("stuck_in_go", L.NewFunction(func(L *lua.LState) int {
			close(entered)
			<-release
			return 0
		}))
		return nil
	}
	rec := &cleanupRecorder{TB: t}
	c := Start(rec, machine.Options{
		ID:        42,
		Files:     map[string]string{"/stuck.lua": `stuck_in_go()`},
		Program:   "/stuck.lua",
		ExtraAPIs: []computer.Installer{stuck},
	})
	select {
	case <-entered:
	case <-ctx.Done():
		t.Fatal("the computer never called stuck_in_go")
	}
	rec.runCleanups() // returns after stopWait, the computer still inside stuck_in_go
	require.Len(t, rec.errors, 1)
	assert.Contains(t, rec.errors[0], "computer 42 did not stop within 100ms of being told to")
	assert.Contains(t, rec.errors[0], "fakecrafttest.TestCleanupReportsAComputerThatDoesNotStop.func")

	close(release) // the hard abort then ends the computer, as it would any Lua code
	_, err := c.Wait(ctx)
	assert.ErrorIs(t, err, computer.ErrTimeLimit)
}
