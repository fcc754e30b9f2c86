package computer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// virtual puts a test's computer on the virtual clock at the real pace (TimeScale 1): what
// waits for the clock there takes no real time, so a test of hours of computer time passes
// at once, and without the virtual clock it would run into testTimeout.
func virtual(cfg *Config) {
	cfg.VirtualTime = true
	cfg.TimeScale = 1
}

// TestVirtualSleepTakesNoTime: an hour's sleep on the virtual clock ends at once, and
// os.clock and os.epoch have moved by exactly that hour: the ticks and the wall time they
// stand for.
func TestVirtualSleepTakesNoTime(t *testing.T) {
	out, res, c := runLua(t, `
local c0, e0 = os.clock(), os.epoch("utc")
sleep(3600)
print(os.clock() - c0, os.epoch("utc") - e0, os.epoch("local") - e0)
return true
`, virtual)
	require.NoError(t, res.Err, out)
	assert.Equal(t, "3600\t3600000\t3600000\n", out)
	assert.Equal(t, int64(3600*20), c.ticks.Load(), "the clock stops where the sleep ended")
}

// TestVirtualTimersFireInOrder: timers fire on their own tick, those due on the same tick in
// id order, and os.clock reads that tick when each is taken.
func TestVirtualTimersFireInOrder(t *testing.T) {
	out, res, _ := runLua(t, `
local later = os.startTimer(7200)
local soon = os.startTimer(3600)
local alsoSoon = os.startTimer(3600)
local got = {}
for _ = 1, 3 do
  local _, id = os.pullEvent("timer")
  got[#got + 1] = id .. "@" .. os.clock()
end
print(table.concat(got, " "))
return true
`, virtual)
	require.NoError(t, res.Err, out)
	assert.Equal(t, "1@3600 2@3600 0@7200\n", out)
}

// TestVirtualAlarmRings: an alarm half an in-game day ahead (10 minutes of computer time)
// rings at its hour on the virtual clock.
func TestVirtualAlarmRings(t *testing.T) {
	out, res, _ := runLua(t, `
local start = os.time()
local id = os.setAlarm((start + 12) % 24)
local _, rang = os.pullEvent("alarm")
print(rang == id, os.clock(), (os.time() - start) % 24)
return true
`, virtual)
	require.NoError(t, res.Err, out)
	assert.Equal(t, "true\t600\t12\n", out)
}

// TestVirtualClockWaitsForGoroutines: while a goroutine started with Go runs (real I/O in
// flight), the virtual clock does not jump: the program waits on an hour's timer and on the
// goroutine's event, and the goroutine's comes first even though the test lets it go only
// once the computer waits with nothing else to do. Once it is done, the timer's hour passes
// at once.
func TestVirtualClockWaitsForGoroutines(t *testing.T) {
	out, res, _ := runLua(t, `
local timer = os.startTimer(3600)
startWork()
local first = os.pullEvent()
if first ~= "work_done" then error("the clock ran on while work was in flight: " .. first .. " came first", 0) end
local _, fired = os.pullEvent("timer")
print(first, fired == timer, os.clock())
return true
`, virtual, func(cfg *Config) {
		cfg.APIs = append(cfg.APIs, func(L *lua.LState, e *Env) error {
			release := make(chan struct{})
			// The computer's first wait is the program's, with the work in flight: let it go
			// then, when only the work stands between the computer and its timer.
			go func() {
				<-e.Settled()
				close(release)
			}()
			L.SetGlobal("startWork", L.NewFunction(func(*lua.LState) int {
				select {
				case <-e.Settled():
					t.Error("the computer waited before the program started its work: the test proves nothing")
				default:
				}
				e.Go(func() {
					select {
					case <-release:
						e.QueueEvent("work_done")
					case <-e.Done():
					}
				})
				return 0
			}))
			return nil
		})
	})
	require.NoError(t, res.Err, out)
	assert.Equal(t, "work_done\ttrue\t3600\n", out)
}

// TestVirtualClockRunsOnRealTimeWhileWorkIsInFlight: while a goroutine started with Go runs,
// the virtual clock's ticks come from the real ticker, so a program waiting on a timer beside
// work in flight (a request with a timeout) still sees it fire; the work ends only when the
// program says so, after its timer.
func TestVirtualClockRunsOnRealTimeWhileWorkIsInFlight(t *testing.T) {
	out, res, _ := runLua(t, `
startWork()
local timer = os.startTimer(1)
local _, fired = os.pullEvent("timer")
print(fired == timer, os.clock())
endWork()
return true
`, virtual, func(cfg *Config) {
		cfg.TimeScale = 20 // a second of computer time is 50 ms of real time
		cfg.APIs = append(cfg.APIs, func(L *lua.LState, e *Env) error {
			release := make(chan struct{})
			L.SetGlobal("startWork", L.NewFunction(func(*lua.LState) int {
				e.Go(func() {
					select {
					case <-release:
					case <-e.Done():
					}
				})
				return 0
			}))
			L.SetGlobal("endWork", L.NewFunction(func(*lua.LState) int {
				close(release)
				return 0
			}))
			return nil
		})
	})
	require.NoError(t, res.Err, out)
	assert.Equal(t, "true\t1\n", out)
}
