package lua

import (
	"strings"
	"testing"
)

// TestFuncNameNamesCallsAsCobalt: FuncName names a frame by how the Lua code that called it
// names the function, as Cobalt's tracebacks do (Lua 5.2's getfuncname): a global's,
// local's, method's, field's or upvalue's name, a metamethod by its event; a frame reached
// by a tail call or called by Go has none.
func TestFuncNameNamesCallsAsCobalt(t *testing.T) {
	L := NewState()
	defer L.Close()
	var seen []string
	L.SetGlobal("name", L.NewFunction(func(L *LState) int {
		callee, _ := L.GetStack(1)
		caller, _ := L.GetStack(2)
		kind, name, ok := L.FuncName(callee, caller)
		if !ok {
			kind, name = "none", ""
		}
		seen = append(seen, kind+" "+name)
		return 0
	}))
	err := L.DoString(`
function global() name() end
local function loc() name() end
local t = { field = function() name() end }
function t:method() name() end
local function up() name() end
local function viaUpvalue() up() end
local function tail() return loc() end
global(); loc(); t.field(); t:method(); viaUpvalue(); tail()
local _ = setmetatable({}, { __index = function() name() end }).x
local _ = setmetatable({}, { __add = function() name() end }) + 1
pcall(function() name() end)
`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"global global", "local loc", "field field", "method method", "upvalue up",
		"none ", "metamethod __index", "metamethod __add", "none "}
	if len(seen) != len(want) {
		t.Fatalf("names %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("call %d named %q, want %q", i+1, seen[i], want[i])
		}
	}
}

// TestStandInSourcePlacesErrorsBelow: with SetStandInSource, an error the VM raises in Lua
// code of that source is placed at the Lua code below it, as one a Go function raises; with
// no Lua code below it in the coroutine, it stays in the stand-in.
func TestStandInSourcePlacesErrorsBelow(t *testing.T) {
	L := NewState()
	defer L.Close()
	standIn, err := L.Load(strings.NewReader("local t = ...; return t.x.y"), "[C]")
	if err != nil {
		t.Fatal(err)
	}
	L.SetGlobal("standin", standIn)
	run := func() (string, string) {
		if err := L.DoString(`
local function call() local r = standin({}); return r end
_, below = pcall(call)
_, alone = coroutine.resume(coroutine.create(standin), {})
`); err != nil {
			t.Fatal(err)
		}
		return L.GetGlobal("below").String(), L.GetGlobal("alone").String()
	}
	below, alone := run()
	if want := "[C]:1: attempt to index field 'x' (a nil value)"; below != want || alone != want {
		t.Errorf("without a stand-in source: %q and %q, want %q for both", below, alone, want)
	}
	L.SetStandInSource("[C]")
	below, alone = run()
	if want := "<string>:2: attempt to index field 'x' (a nil value)"; below != want {
		t.Errorf("below a stand-in: %q, want %q", below, want)
	}
	if want := "[C]:1: attempt to index field 'x' (a nil value)"; alone != want {
		t.Errorf("a stand-in alone: %q, want %q", alone, want)
	}
}

// TestStandInTailCallKeepsTheCaller: with SetStandInSource, a tail call of a stand-in from
// other code keeps the caller's frame, as a Go function's does; a stand-in's own tail call of
// a stand-in still replaces its frame.
func TestStandInTailCallKeepsTheCaller(t *testing.T) {
	L := NewState()
	defer L.Close()
	standIn, err := L.Load(strings.NewReader(`
local f = ...
local function again(n) if n == 0 then local a, b = f(); return a, b end return again(n - 1) end
return again(1000)`), "[C]")
	if err != nil {
		t.Fatal(err)
	}
	L.SetGlobal("standin", standIn)
	L.SetStandInSource("[C]")
	if err := L.DoString(`
local function depth() local n = 1; while debug.getinfo(n) do n = n + 1 end return n end
local function caller() return standin(function() return depth(), debug.getinfo(3, "n").name end) end
levels, name = caller()
`); err != nil {
		t.Fatal(err)
	}
	if got, want := L.GetGlobal("name").String(), "caller"; got != want {
		t.Errorf("level 3 under a stand-in a tail call reached: %q, want %q", got, want)
	}
	if levels := int(L.GetGlobal("levels").(LNumber)); levels > 10 {
		t.Errorf("%d levels: the stand-in's own tail calls kept their frames", levels)
	}
}
