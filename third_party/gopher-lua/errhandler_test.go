package lua

import (
	"fmt"
	"strings"
	"testing"
)

// runHandlerScript runs script with echoPrelude and handled(handler, f, ...): f in a
// coroutine whose error handler is handler, resumed with what it yields until it ends (echo).
// setup, when given, adds to the state first.
func runHandlerScript(t *testing.T, script string, setup ...func(L *LState)) {
	t.Helper()
	L := NewState(Options{CallStackSize: 64, MinimizeStackMemory: true})
	defer L.Close()
	for _, f := range setup {
		f(L)
	}
	L.SetGlobal("handled_co", L.NewFunction(func(L *LState) int {
		co, _ := L.NewThread()
		fn := L.CheckFunction(2)
		co.stack.Push(callFrame{Fn: fn, NRet: MultRet})
		co.SetErrorHandler(L.Get(1), nil)
		L.Push(co)
		return 1
	}))
	L.SetGlobal("lines", L.NewFunction(func(L *LState) int {
		// The current lines of the Lua frames from level 1 on, as "a,b,c".
		var lines []string
		for level := 1; ; level++ {
			dbg, ok := L.GetStack(level)
			if !ok {
				break
			}
			_, _ = L.GetInfo("Sl", dbg, LNil)
			if dbg.What != "G" {
				lines = append(lines, LNumber(dbg.CurrentLine).String())
			}
		}
		L.Push(LString(strings.Join(lines, ",")))
		return 1
	}))
	if err := L.DoString(echoPrelude + `
function handled(handler, f, ...)
	local co = handled_co(handler, f)
	local res = { coroutine.resume(co, ...) }
	while coroutine.status(co) ~= "dead" do
		res = { coroutine.resume(co, unpack(res, 2)) }
	end
	return unpack(res)
end
` + script); err != nil {
		t.Fatal(err)
	}
}

func TestErrorHandlerRunsOverTheFramesOfTheError(t *testing.T) {
	runHandlerScript(t, `
	local function inner()
		error("boom")
	end
	local function outer()
		inner()
	end
	local ok, err = handled(function(msg) return msg .. " at " .. lines() end, outer)
	check(false, ok, "ok")
	-- lines(): the handler's line, inner's error, outer's call of inner
	check("<string>:27: boom at 32,27,30", err, "handler's view")

	-- a runtime error the VM raises, and the handler's name: none, as Lua's
	ok, err = handled(function(msg) return msg .. " at " .. lines() end, function()
		local t = nil
		return t.x
	end)
	check("<string>:40: attempt to index local 't' (a nil value) at 38,40", err, "runtime error")

	-- a coroutine with no handler still dies of its error, where it was raised
	local after = false
	local co = coroutine.create(function() error("plain", 0); after = true end)
	check(false, coroutine.resume(co), "no handler: resume")
	check("dead", coroutine.status(co), "no handler: status")
	check(false, after, "no handler: went on")

	-- an error no handler sees: caught by a pcall inside the coroutine
	ok, err = handled(function() return "handled" end, function()
		local ok2, e = pcall(error, "inner")
		return ok2, e
	end)
	check(true, ok, "caught inside")
	check(false, err, "pcall's result")
	`)
}

func TestErrorHandlerYieldsAndFails(t *testing.T) {
	runHandlerScript(t, `
	-- Cobalt's coroutine/xpcall.lua: a handler may yield; its error is "error in error handling"
	local ok, err = handled(function(msg) return coroutine.yield(msg) .. "!" end, function()
		coroutine.yield(1)
		error("late", 0)
	end)
	check(false, ok, "ok")
	check("late!", err, "yielding handler")
	ok, err = handled(function(msg) error("nope") end, function() error("x") end)
	check("error in error handling", err, "failing handler")
	ok, err = handled(function(msg) coroutine.yield(msg) error("nope") end, function() error("x") end)
	check("error in error handling", err, "failing after a yield")
	ok, err = handled("not callable", function() error("x") end)
	check("error in error handling", err, "not callable")
	-- a callable table, and a Go handler
	ok, err = handled(setmetatable({}, { __call = function(self, m) return "t:" .. m end }), function() error("x", 0) end)
	check("t:x", err, "callable table")
	ok, err = handled(tostring, function() error(42) end)
	check("42", err, "Go handler")
	ok, err = handled(error, function() error("x") end)
	check("error in error handling", err, "failing Go handler")
	-- a stack overflow still has room for its handler
	local function deep() return 1 + deep() end
	ok, err = handled(function(msg) return "overflow: " .. lines():sub(1, 5) end, deep)
	check(false, ok, "overflow ok")
	check("overflow: 48,47", err, "overflow handler")
	`)
}

// TestErrorMessageWithoutHandler: a coroutine given a message function and no handler dies
// of what the message function makes of its error, turned over the frames of the error
// (error's, after a yield, and the VM's), and has no handler for others to read; a pcall
// inside it is not affected.
// A Go error handler fires its call and return events, as Cobalt's Dispatch fires a Java
// handler's, over a frame of its own: a Go hook is called at once, a Lua hook runs as a
// frame of the loop and may yield, and an error in it is an error in error handling.
func TestGoErrorHandlerFiresItsHooks(t *testing.T) {
	var goEvents []string
	runHandlerScript(t, `
	watched = type
	local ok, err = handled(type, function() debug.sethook(gohook, "cr"); error("x") end)
	check("string", err, "under a Go hook")
	gohook("|")
	watched = error
	ok, err = handled(error, function() debug.sethook(gohook, "cr"); error("x") end)
	check("error in error handling", err, "a handler that fails, under a Go hook")

	local yields = 0
	ok, err = handled(type, function()
		debug.sethook(function(event)
			if debug.getinfo(2, "f").func == type then
				yields = yields + 1
				coroutine.yield(event)
			end
		end, "r")
		error("x")
	end)
	check(false, ok, "return hook that yields: ok")
	check("string", err, "return hook that yields: the handler's result")
	check(1, yields, "return hook that yields: the handler's return")

	ok, err = handled(type, function()
		debug.sethook(function(event)
			if debug.getinfo(2, "f").func == type then error("in hook") end
		end, "c")
		error("x")
	end)
	check("error in error handling", err, "an error in the handler's call hook")
	`, func(L *LState) {
		L.SetGlobal("gohook", L.NewFunction(func(L *LState) int {
			dbg, _ := L.GetStack(1)
			fn := LValue(LNil)
			if dbg != nil {
				_, _ = L.GetInfo("f", dbg, LNil)
				fn = dbg.frame.Fn
			}
			goEvents = append(goEvents, fmt.Sprintf("%s %v", L.CheckString(1), fn == L.GetGlobal("watched")))
			return 0
		}))
	})
	// The handler error, which fails, fires no return.
	want := "return false,call false,call true,return true,| false,return false,call true,call true"
	if got := strings.Join(goEvents, ","); got != want {
		t.Errorf("a Go hook's events: %s, want %s", got, want)
	}
}

func TestErrorMessageWithoutHandler(t *testing.T) {
	L := NewState()
	defer L.Close()
	L.SetGlobal("unhandled_co", L.NewFunction(func(L *LState) int {
		co, _ := L.NewThread()
		co.stack.Push(callFrame{Fn: L.CheckFunction(1), NRet: MultRet})
		co.SetErrorHandler(nil, func(co *LState, err LValue) LValue {
			// the line of the innermost Lua frame, below error's own
			for level := 0; ; level++ {
				dbg, ok := co.GetStack(level)
				if !ok {
					return LString("no Lua frame")
				}
				if _, _ = co.GetInfo("l", dbg, LNil); dbg.CurrentLine > 0 {
					return LString(fmt.Sprintf("%v at %d", err, dbg.CurrentLine))
				}
			}
		})
		if _, ok := co.ErrorHandler(); ok {
			L.RaiseError("a handler")
		}
		L.Push(co)
		return 1
	}))
	if err := L.DoString(`
	local co = unhandled_co(function(x)
		local ok, e = pcall(error, "caught", 0)
		assert(not ok and e == "caught", "pcall inside: " .. tostring(e))
		coroutine.yield(x)
		error("boom", 0)
	end)
	assert(select(2, coroutine.resume(co, 1)) == 1)
	local ok, err = coroutine.resume(co)
	assert(not ok and err == "boom at 6", err)
	assert(coroutine.status(co) == "dead")
	ok, err = coroutine.resume(unhandled_co(function() local t = nil; return t.x end))
	assert(not ok and err:find(" at 12$"), err)
	`); err != nil {
		t.Fatal(err)
	}
}
