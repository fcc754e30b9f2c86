package lua

import (
	"testing"
)

// TestLevelsCountOnlyFrames: a tail call leaves no level of its own, as in Lua 5.2 and CC:
// Tweaked's Cobalt, so level 2 of a function reached by a tail call is the function that
// called the one which made the tail call. fakecraft's error(msg, level) counts levels here
// too: CC's window.lua, reached through the term API's forwarding tail call, places a
// program's bad argument at the program's line.
func TestLevelsCountOnlyFrames(t *testing.T) {
	L := NewState()
	defer L.Close()
	err := L.DoString(`
local function where() local info = debug.getinfo(2, "Sl") return info.what .. "@" .. info.currentline end
local function forward() return where() end
local function caller()
  local at = forward()
  return at
end
seen = caller()
`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := L.GetGlobal("seen").String(), "Lua@5"; got != want {
		t.Errorf("debug.getinfo(2) after a tail call: %q, want %q", got, want)
	}
}

// TestNoPositionAddsNoSpace: an error raised where no Lua code gives it a position (in a
// coroutine whose body is a Go function) is the message alone, not " message".
func TestNoPositionAddsNoSpace(t *testing.T) {
	L := NewState()
	defer L.Close()
	L.SetGlobal("fail", L.NewFunction(func(L *LState) int { L.RaiseError("went wrong"); return 0 }))
	if err := L.DoString(`ok, msg = coroutine.resume(coroutine.create(fail))`); err != nil {
		t.Fatal(err)
	}
	if got := L.GetGlobal("msg").String(); got != "went wrong" {
		t.Errorf("the error of a Go coroutine body: %q, want %q", got, "went wrong")
	}
}
