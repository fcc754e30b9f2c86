package computer

import (
	lua "github.com/yuin/gopher-lua"
)

// MainThread answers a call of an API's Go function as CC: Tweaked answers a main-thread
// function (a @LuaFunction(mainThread = true), such as pocket.equipBack): work runs on the
// computer's next tick, as the server's main thread runs it, and its results reach the
// caller through a task_complete event (the task's id, true), which the call waits for in a
// stand-in (cfuncs.lua's task_wait, CC's TaskCallback): other events the calling coroutine is
// sent meanwhile are not its own, and terminate ends the call with "Terminated". The Go
// function returns what MainThread returns. Called where it cannot hand off (a Go function's
// call of it), work runs at once and its results return directly; as a coroutine's body it
// is called by pcall's stand-in body (boot.go's create), so it waits there too.
func (c *Computer) MainThread(L *lua.LState, work func() []lua.LValue) int {
	if c.taskWait == nil || !L.CanHandOff() {
		results := work()
		for _, v := range results {
			L.Push(v)
		}
		return len(results)
	}
	c.lastTask++
	id := c.lastTask
	c.After(0, func() {
		if c.taskResults == nil {
			c.taskResults = map[int64][]lua.LValue{}
		}
		c.taskResults[id] = work()
		c.QueueEvent("task_complete", lua.LNumber(id), lua.LTrue)
	})
	L.Push(lua.LNumber(id))
	return L.HandOff(c.taskWait, 1)
}

// luaTaskResults returns what the task left and forgets it (task_wait's native.task_results).
func (c *Computer) luaTaskResults(L *lua.LState) int {
	id := int64(L.CheckNumber(1))
	results := c.taskResults[id]
	delete(c.taskResults, id)
	for _, v := range results {
		L.Push(v)
	}
	return len(results)
}
