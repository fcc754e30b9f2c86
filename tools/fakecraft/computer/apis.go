package computer

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/fsapi"
	"fakecraft/httpapi"
	"fakecraft/peripheral"
	"fakecraft/textutils"
)

// API is one row of the table of a computer's APIs: the globals it sets, for the reader
// and for errors, and its installer.
type API struct {
	Name    string
	Install Installer
}

// Installer puts one API into a computer's Lua state while it boots: on the goroutine that
// owns the state, before the bios runs. Every API goes in through this signature, the
// core's, the machine's and a caller's own (Config.APIs) alike.
type Installer func(L *lua.LState, e *Env) error

// Env is what every installer is given, as CC: Tweaked's APIs are given their computer's
// environment: the computer that is booting and the parts it was built with. As a
// host.Host (through Computer) it is what an API's goroutines queue events on and hand work
// to; the core's own APIs reach the computer's state through it. A part left nil leaves out
// the API that needs it, as the core's own tests run without fsapi.
type Env struct {
	*Computer
	// FS is the computer's file system (Config.FS).
	FS *fsapi.FS
	// HTTP is the http API's state (Config.HTTP).
	HTTP *httpapi.API
	// Peripherals are the computer's sides (Config.Peripherals).
	Peripherals *peripheral.Bus
}

// apis is every API a computer gets, in the order boot installs them, as gopher-lua's
// linit.go lists its libraries: adding an API is adding a row. The bios (bios.lua) runs
// after the last one and builds the Lua half of the environment over them (os.pullEvent,
// the ROM's APIs, the shell), as CC: Tweaked's bios runs once its Java APIs are in place.
//
// The order matters where a row builds on an earlier one: the Lua libraries come first,
// as every API may use them and the os and coroutine rows rewrap theirs; the caller's APIs
// come after the standard ones, so they may use or replace them; and the C stand-ins come
// last, because cfuncs.lua keeps the library functions it calls (table.pack, error,
// debug.getmetatable, gopher-lua's table.sort, …) as the rows above left them.
var apis = []API{
	{"Lua 5.2's libraries as CC's: _G, string, table, math, coroutine, debug, bit32", openLibraries},
	{"os (the Go half; the bios adds the rest)", openOS},
	{"coroutine under the yield guard", openCoroutine},
	{"term (native, as _FAKECRAFT_TERM for the bios)", openTerm},
	{"_FAKECRAFT_BIOS (settings, the shell, what to boot)", openBiosTable},
	{"fs", openFS},
	{"textutils", openTextutils},
	{"http", openHTTP},
	{"peripheral, redstone, rs", openPeripherals},
	{"pocket (a pocket computer's, over its back: after the sides)", openPocket},
	{"the caller's (Config.APIs)", openCallers},
	{"C functions written in Lua: pairs, ipairs' iterator over a proxy, table.sort, foreach, foreachi; string.gsub's yieldable replacement (gsubyield.go); the stand-ins tostring, string.format, load and the table functions hand off to; coroutine.wrap; pcall's body", openCFuncs},
	{"Cobalt's libraries (string, table, math, coroutine, bit32, utf8) laid out as Cobalt lays them out, now that each is whole", layOutCobaltLibraries},
}

func openLibraries(L *lua.LState, e *Env) error {
	openLibs(L)
	return nil
}

func openOS(L *lua.LState, e *Env) error {
	e.installOS(L)
	return nil
}

func openCoroutine(L *lua.LState, e *Env) error {
	e.installCoroutine(L)
	return nil
}

func openTerm(L *lua.LState, e *Env) error {
	L.SetGlobal("_FAKECRAFT_TERM", e.term.install(L))
	return nil
}

func openBiosTable(L *lua.LState, e *Env) error {
	L.SetGlobal("_FAKECRAFT_BIOS", e.biosTable(L))
	return nil
}

func openFS(L *lua.LState, e *Env) error {
	if e.FS != nil {
		e.FS.Install(L)
	}
	return nil
}

func openTextutils(L *lua.LState, _ *Env) error {
	textutils.Install(L)
	return nil
}

func openHTTP(L *lua.LState, e *Env) error {
	if e.HTTP != nil {
		e.HTTP.Install(L, e.Computer)
	}
	return nil
}

func openPeripherals(L *lua.LState, e *Env) error {
	if e.Peripherals == nil {
		return nil
	}
	// The bus mounts disks in the file system; a nil *fsapi.FS must reach it as no
	// file system at all, not as an interface holding a nil pointer.
	var fs peripheral.Mounter
	if e.FS != nil {
		fs = e.FS
	}
	return e.Peripherals.Install(L, e.Computer, fs)
}

func openPocket(L *lua.LState, e *Env) error {
	if e.cfg.Pocket == nil {
		return nil
	}
	if e.Peripherals == nil {
		return fmt.Errorf("a pocket computer needs its sides (Config.Peripherals) for its back")
	}
	e.cfg.Pocket.Install(L, e.Peripherals, e.Computer)
	return nil
}

// openCallers installs Config.APIs in order (the conformance runner's cct_test, a world's
// periphemu, a test's probes).
func openCallers(L *lua.LState, e *Env) error {
	for i, install := range e.cfg.APIs {
		if err := install(L, e); err != nil {
			return fmt.Errorf("api %d: %w", i, err)
		}
	}
	return nil
}

func openCFuncs(L *lua.LState, e *Env) error {
	tramp, native, err := installCFuncs(L)
	if err != nil {
		return err
	}
	e.Computer.installGsub(L, native)
	installIpairs(L, native.RawGetString("inext"), native.RawGetString("proxy_inext"))
	installHandOffs(L, native)
	native.RawSetString("task_results", L.NewFunction(e.Computer.luaTaskResults))
	e.Computer.taskWait = native.RawGetString("task_wait").(*lua.LFunction)
	e.Computer.trampoline = tramp
	if err := L.CallByParam(lua.P{Fn: tramp, NRet: 1, Protect: true}, tramp); err != nil {
		return fmt.Errorf("make a pcall body: %w", err)
	}
	e.Computer.pcallBody = L.Get(-1).(*lua.LFunction).Proto
	L.Pop(1)
	return nil
}

// installHandOffs installs the Go library functions that hand a call of Lua code off to
// cfuncs.lua's stand-ins (lua.LState.HandOff) so that it may yield: tostring and
// string.format (their __tostring), load (its reader), and table.concat, unpack,
// table.insert and table.remove (a proxy's metamethods).
func installHandOffs(L *lua.LState, native *lua.LTable) {
	standIn := func(name string) *lua.LFunction { return native.RawGetString(name).(*lua.LFunction) }
	L.SetGlobal("tostring", L.NewFunction(luaToString(standIn("tostring_meta"))))
	L.SetGlobal("load", L.NewFunction(luaLoad(standIn("load_reader"))))
	str := L.GetGlobal("string").(*lua.LTable)
	str.RawSetString("format", L.NewFunction(luaStringFormat(standIn("format_rest"))))
	installProxyHandOffs(L, native)
}
