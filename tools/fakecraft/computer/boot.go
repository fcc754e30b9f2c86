package computer

import (
	_ "embed"
	"fmt"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

// biosSource is fakecraft's own bios: the Lua half of the global environment and the boot
// sequence (APIs, settings, shell).
//
//go:embed bios.lua
var biosSource string

// cFrameSource names code that stands in for a C function (cfuncs.lua): error positions
// never point into it, as C Lua's never point into C.
const cFrameSource = luakit.CFrameSource

// Chunk names of fakecraft's own pieces (Lua's "=name" is shown as it is).
const (
	cFuncsChunk = "=" + cFrameSource
	biosChunk   = "@bios.lua"
)

// Computer paths the bios starts. The launcher directory is fakecraft's own, outside /rom
// (as CC's bios.lua is not in its ROM); the machine mounts it on every computer that is not
// bare. Its name starts with a dot, so `ls` leaves it out as it does any hidden file.
const (
	ShellPath      = "/rom/programs/shell.lua"
	MultishellPath = "/rom/programs/advanced/multishell.lua"
	LauncherDir    = "/.fakecraft"
	BootPath       = LauncherDir + "/boot.lua"
)

// boot builds the Lua state: every API of the table (apis.go), the bios chunk and the
// computer coroutine.
func (c *Computer) boot() error {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		RegistrySize:        registryInitial,
		RegistryMaxSize:     registryMax,
		RegistryGrowStep:    registryGrowStep,
		CallStackSize:       callStackMax,
		GoCallDepth:         goCallDepthMax,
		MinimizeStackMemory: true,
	})
	c.L = L
	env := &Env{Computer: c, FS: c.cfg.FS, HTTP: c.cfg.HTTP, Peripherals: c.cfg.Peripherals}
	c.mu.Lock()
	queued := len(c.queue)
	c.mu.Unlock()
	for _, api := range apis {
		if err := api.Install(L, env); err != nil {
			return fmt.Errorf("install %s: %w", api.Name, err)
		}
	}
	// CC starts its APIs before the computer is on, and drops every event queued until it
	// is (ComputerExecutor.turnOn, queueEvent): the peripherals attached meanwhile (a disk
	// drive's disk, a cable's peripherals on a wired modem) announce nothing at boot.
	c.mu.Lock()
	c.queue = c.queue[:queued]
	c.mu.Unlock()
	fn, err := compileChunk(L, biosSource, biosChunk, nil)
	if err != nil {
		return fmt.Errorf("compile bios: %w", err)
	}
	c.mainFn = fn
	co, _ := L.NewThread()
	co.SetContext(c.guard)
	L.SetContext(c.guard)
	c.co = co
	c.gsubs.computer = co
	return nil
}

// biosTable is what the bios (and through it boot.lua) reads from Go; both remove it from _G.
func (c *Computer) biosTable(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	settings := L.NewTable()
	for k, v := range c.cfg.Settings {
		settings.RawSetString(k, lua.LString(v))
	}
	t.RawSetString("settings", settings)
	if report := c.cfg.SettingOverridden; report != nil {
		t.RawSetString("settingOverridden", L.NewFunction(func(L *lua.LState) int {
			report(L.CheckString(1), L.CheckString(2))
			return 0
		}))
	}
	t.RawSetString("shell", lua.LString(ShellPath))
	if c.cfg.Multishell {
		t.RawSetString("multishell", lua.LString(MultishellPath))
	}
	if !c.cfg.Bare {
		t.RawSetString("boot", lua.LString(BootPath))
	}
	b := L.NewTable()
	b.RawSetString("program", lua.LString(c.cfg.Boot.Program))
	args := L.NewTable()
	for _, a := range c.cfg.Boot.Args {
		args.Append(lua.LString(a))
	}
	b.RawSetString("args", args)
	auto := L.NewTable()
	for _, p := range c.cfg.Boot.Autostart {
		auto.Append(lua.LString(p))
	}
	b.RawSetString("autostart", auto)
	b.RawSetString("finish", L.NewFunction(func(L *lua.LState) int {
		if !c.result.Reported {
			c.result.OK = L.ToBool(1)
			c.result.Reported = true
		}
		c.stop = true
		return 0
	}))
	t.RawSetString("bootTable", b)
	return t
}

// installCoroutine makes every coroutine run under the computer's yield guard (gopher-lua
// would otherwise give each a child context of the resume that created it), gives create
// and resume CC's argument errors, refuses a yield gopher-lua cannot make (boundary.go), and
// resumes a coroutine suspended in string.gsub through its gsub (gsubyield.go). A Go
// function as a coroutine's body runs under pcall's stand-in body (trampoline), as any call
// of it: gopher-lua's own run of one never returned to the resume (the coroutine stayed
// running) and could not resume it after a yield. Such a coroutine, and one whose body is
// a Lua stand-in for a C function (standInBody), dies of its error without the stand-in's
// position (unplaced), as CC's has none.
func (c *Computer) installCoroutine(L *lua.LState) {
	co := L.GetGlobal("coroutine").(*lua.LTable)
	create := co.RawGetString("create").(*lua.LFunction).GFunction
	resume := co.RawGetString("resume").(*lua.LFunction).GFunction
	co.RawSetString("create", L.NewFunction(func(L *lua.LState) int {
		fn, ok := L.Get(1).(*lua.LFunction)
		if !ok {
			luakit.TypeError(L, 1, "function")
		}
		goBody := fn.IsG && c.trampoline != nil
		unplace := goBody || c.standInBody(fn)
		if goBody {
			L.Push(c.trampoline)
			L.Push(fn)
			L.Call(1, 1)
			L.Replace(1, L.Get(-1))
			L.Pop(1)
		}
		saved := L.RemoveContext()
		n := create(L)
		if saved != nil {
			L.SetContext(saved)
		}
		if th, ok := L.Get(-1).(*lua.LState); ok {
			th.SetContext(c.guard)
			if unplace {
				th.SetErrorHandler(nil, unplaced)
			}
		}
		return n
	}))
	co.RawSetString("running", L.NewFunction(func(L *lua.LState) int {
		// Lua 5.2's two results; the computer never runs code on the main thread.
		running := luakit.Running(L)
		L.Push(running)
		L.Push(lua.LBool(running == L.G.MainThread))
		return 2
	}))
	c.gsubs.create = co.RawGetString("create").(*lua.LFunction)
	c.gsubs.resume = L.NewFunction(resume)
	co.RawSetString("resume", L.NewFunction(func(L *lua.LState) int {
		th, ok := L.Get(1).(*lua.LState)
		if !ok {
			luakit.TypeError(L, 1, "thread")
		}
		if msg := notResumable(L, th); msg != "" {
			L.Push(lua.LFalse)
			L.Push(lua.LString(msg))
			return 2
		}
		if c.gsubs.suspendedIn(th) != nil {
			return c.gsubs.pushResume(L, th)
		}
		return resume(L)
	}))
	status := co.RawGetString("status").(*lua.LFunction).GFunction
	co.RawSetString("status", L.NewFunction(func(L *lua.LState) int {
		th, ok := L.Get(1).(*lua.LState)
		if !ok {
			return status(L)
		}
		L.Push(lua.LString(c.statusOf(L, th, status)))
		return 1
	}))
	yield := co.RawGetString("yield").(*lua.LFunction).GFunction
	co.RawSetString("yield", L.NewFunction(func(L *lua.LState) int {
		if yieldCrossesGo(L) {
			luakit.RaiseMessage(L, YieldBoundaryMessage)
		}
		c.noteYield(L)
		return yield(L)
	}))
}

// statusOf is coroutine.status(th) called in L, as CC answers it: running for the coroutine
// coroutine.running() names (the caller of the pcall or string.gsub whose function L runs),
// normal for one that waits on a coroutine it resumed (gopher-lua's said so only of L's
// resumer, and suspended of its resumer's) or on its gsub's replacement function, else
// gopher-lua's status (goStatus).
func (c *Computer) statusOf(L, th *lua.LState, goStatus lua.LGFunction) string {
	switch {
	case th.Dead:
		return "dead"
	case th == luakit.Running(L):
		return "running"
	case c.gsubs.running(th) || resumedBy(L, th):
		return "normal"
	}
	goStatus(L)
	answer := lua.LVAsString(L.Get(-1))
	L.Pop(1)
	return answer
}

// resumedBy reports whether th resumed L, or a coroutine that resumed L, and so on.
func resumedBy(L, th *lua.LState) bool {
	for t := L.Parent; t != nil; t = t.Parent {
		if t == th {
			return true
		}
	}
	return false
}

// standInBody reports whether fn, a program's coroutine body, is one of cfuncs.lua's
// stand-ins for C functions (pairs, table.sort, table.foreach, …): like a Go function, it
// dies of an error the VM raises in it without the stand-in's position. Not the stand-ins'
// own coroutines: pcall's body (its error is placed at pcall's caller, placedAtPcall) and
// string.gsub's helper (a replacement function's error is placed where gsub was called).
func (c *Computer) standInBody(fn *lua.LFunction) bool {
	if fn.IsG || fn.Proto == nil || fn.Proto.SourceName != cFrameSource {
		return false
	}
	return fn.Proto != c.pcallBody && fn != c.gsubs.helper
}

// unplaced is err, the error that ends a coroutine whose body is a Go function or a
// stand-in for a C function, without the position gopher-lua gave it in the stand-in: no
// Lua code of the program raised it, and CC's has none.
func unplaced(_ *lua.LState, err lua.LValue) lua.LValue {
	if msg, ok := err.(lua.LString); ok {
		return lua.LString(cFramePosition.ReplaceAllLiteralString(string(msg), ""))
	}
	return err
}
