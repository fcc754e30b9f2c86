package computer

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// withTask installs task(x), a main-thread function (MainThread) whose work returns
// "done", x and how many tasks have run.
func withTask(cfg *Config) {
	ran := 0
	cfg.APIs = append(cfg.APIs, func(L *lua.LState, e *Env) error {
		L.SetGlobal("task", L.NewFunction(func(L *lua.LState) int {
			x := L.Get(1)
			return e.MainThread(L, func() []lua.LValue {
				ran++
				return []lua.LValue{lua.LString("done"), x, lua.LNumber(ran)}
			})
		}))
		return nil
	})
}

// TestMainThreadFunction: a main-thread function answers as CC's do (pocket.equipBack): on
// the next tick, through its task_complete (ids from 1), which the call waits for; an event
// the caller is sent meanwhile is not its own, a task_complete of another id does not end
// the wait, and terminate ends it with "Terminated". It reads as a C function.
func TestMainThreadFunction(t *testing.T) {
	check(t, `
local t0 = os.clock()
os.queueEvent("lost")
os.queueEvent("task_complete", 7, true)
local a, b, n = task("x")
assert(a == "done" and b == "x" and n == 1, tostring(a) .. tostring(b) .. tostring(n))
assert(os.clock() - t0 == 0.05, "one tick: " .. (os.clock() - t0))
os.queueEvent("kept")
assert(os.pullEvent() == "kept")

-- Another coroutine sees the task's event: its id and true.
local co = coroutine.create(function(x) local a, b = task(x) return a, b end)
assert(select(2, coroutine.resume(co, "y")) == "task_complete")
local ev = table.pack(coroutine.yield())
assert(ev[1] == "task_complete" and ev[2] == 2 and ev[3] == true and ev.n == 3, textutils and textutils.serialize(ev) or ev[1])
local ok, a2, b2 = coroutine.resume(co, table.unpack(ev, 1, ev.n))
assert(ok and a2 == "done" and b2 == "y")

os.queueEvent("terminate")
local ok3, err = pcall(task, "z")
assert(not ok3 and err == "Terminated", tostring(err))

assert(debug.getinfo(task).what == "C")
`, withTask, virtual) // the virtual clock: a loaded machine may let two real ticks pass
}

// TestMainThreadFunctionAsCoroutineBody: a main-thread function that is a coroutine's body
// waits for its tick there too, as in CC, where the body is called as any function is (it
// answered at once, where gopher-lua could not hand the wait off).
func TestMainThreadFunctionAsCoroutineBody(t *testing.T) {
	check(t, `
local co = coroutine.create(task)
local ok, filter = coroutine.resume(co, "w")
assert(ok and filter == "task_complete", tostring(ok) .. " " .. tostring(filter))
assert(coroutine.status(co) == "suspended")
local ev = table.pack(coroutine.yield())
assert(ev[1] == "task_complete" and ev[2] == 1 and ev[3] == true, tostring(ev[1]))
local ok2, a, b, n = coroutine.resume(co, table.unpack(ev, 1, ev.n))
assert(ok2 and a == "done" and b == "w" and n == 1, tostring(a))
assert(coroutine.status(co) == "dead")
`, withTask)
}
