package lua

import (
	"strings"
	"testing"
)

// TestErrorColumns: each instruction that can fail carries the column of the token Cobalt
// places its error at (CC's cc.internal.exception marks it under the line): a call's '(',
// '{' or string, an index's '.' or '[' (reading and assigning), a method call's arguments,
// an operator. The coroutine that died of the error keeps its frames, so its frame 0 still
// says where, as in Lua 5.2 and Cobalt.
func TestErrorColumns(t *testing.T) {
	for _, tc := range []struct {
		src  string
		mark string // the source with ^ under the column
	}{
		{"local t = nil; local x = t.y", "                          ^"},
		{"local t = {}; t.a.b = 1", "                 ^"},
		{"local t = {}; t.a[1] = 1", "                 ^"},
		{"foo(1, 2)", "   ^"},
		{"foo { 1 }", "    ^"},
		{`foo "x"`, "    ^"},
		{"local s = {}; s:m()", "                 ^"},
		{"local s = nil; s:m()", "                  ^"},
		// A method call indexes its receiver at the character after the method's name.
		{"local s = nil; s:m ()", "                  ^"},
		{"local s = {}; s:m ()", "                  ^"},
		// A numeric for checks its values after `do`, as Cobalt's OP_FORPREP.
		{"for i = 1, nil do end", "                 ^"},
		{"local x = 1 + {}", "            ^"},
		{"local x = 2 * (1 ^ {})", "                 ^"},
		{"local x = -{}", "          ^"},
		{"local x = #5", "          ^"},
		{"local x = {} < {}", "             ^"},
		{`local x = "a" .. {}`, "              ^"},
		// A chain of concatenations is one instruction, which Cobalt places at its last `..`:
		// the chain nests to the right, and its innermost `..` is the first it emits.
		{`local x = "a" .. {} .. "b"`, "                    ^"},
		{`local x = {} .. "a" .. 1 .. "b"`, "                         ^"},
		{`local x = "a" .. ({} .. "b")`, "                     ^"},
		{`local x = ("a" .. {}) .. "b"`, "               ^"},
		{"local a = {}\nlocal b = a.x.y", "             ^"},
		// The token on a later line than the expression's start: Cobalt gives the instruction
		// that token's line as well as its column, so the error names that line.
		{"local t = {}\nlocal s = t\n  + 1", "  ^"},
		{"local t = {}\nlocal s = \"a\"\n  .. t\n  .. \"b\"", "  ^"},
		{"local t = {}\nlocal s = t\n  .a\n  .b", "  ^"},
		{"local t = {}\nlocal s = t.x\n  (1)", "  ^"},
		{"local t = {}\nt\n  :m()", "    ^"},
		{"local t = {}\nlocal s = t\n  [1].x", "     ^"},
		{"local t = {}\nfor i = 1, t.n\ndo end", "  ^"},
		{"local t = {}\nlocal s = 1 +\n  #t.x", "  ^"},
		// A generic for's iterator call: the first token after `in`, as Cobalt's OP_TFORCALL.
		{"for k in fail do end", "         ^"},
		{"local t = {}\nfor k, v in t.fail, 1 do end", "            ^"},
		// A global's read and assignment fail through the environment's metatable (CC's
		// bios.strict_globals): Cobalt places them at the name, as its GETTABUP/SETTABUP.
		{"setmetatable(_G, { __newindex = fail })\ncounter = 1", "^"},
		{"setmetatable(_G, { __newindex = fail })\nlocal a\na, b = 1, 2", "   ^"},
		{"setmetatable(_G, { __index = fail })\nlocal x = 1 + missing", "              ^"},
		// A function statement's store: at `function`, as Cobalt's funcStmt fixes it.
		{"setmetatable(_G, { __newindex = fail })\nfunction f() end", "^"},
		{"local t\nfunction t.x() end", "^"},
		{"local t = {}\n  function t.a.b() end", "  ^"},
		{"local t\nfunction t:m() end", "^"},
	} {
		L := NewState()
		L.SetGlobal("fail", L.NewFunction(func(L *LState) int { L.RaiseError("failed"); return 0 }))
		co, _ := L.NewThread()
		fn, err := L.LoadString(tc.src)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		state, err, _ := L.Resume(co, fn)
		if state != ResumeError {
			t.Fatalf("%q: no error (%v)", tc.src, err)
		}
		// The first Lua frame, as CC's cc.internal.exception looks for it: below it may be
		// the Go function that raised the error.
		var dbg *Debug
		for level := 0; ; level++ {
			frame, ok := co.GetStack(level)
			if !ok {
				t.Fatalf("%q: the dead coroutine kept no Lua frame (%v)", tc.src, err)
			}
			if _, err := co.GetInfo("Sl", frame, LNil); err != nil {
				t.Fatal(err)
			}
			if frame.What != "G" {
				dbg = frame
				break
			}
		}
		lines := strings.Split(tc.src, "\n")
		if dbg.CurrentLine != len(lines) {
			t.Errorf("%q: line %d, want %d", tc.src, dbg.CurrentLine, len(lines))
		}
		if want := strings.Index(tc.mark, "^") + 1; dbg.CurrentColumn != want {
			t.Errorf("%q (%v): column %d, want %d\n%s\n%s^", tc.src, err, dbg.CurrentColumn, want,
				lines[len(lines)-1], strings.Repeat(" ", max(dbg.CurrentColumn-1, 0)))
		}
		L.Close()
	}
}

// TestCurrentColumnOfRunningCode: debug.getinfo's "l" gives currentcolumn with currentline
// where the instruction running has one (a call: its '('), and leaves it out where not.
func TestCurrentColumnOfRunningCode(t *testing.T) {
	L := NewState()
	defer L.Close()
	err := L.DoString(`
local function here() return debug.getinfo(2, "l") end
local info = here()
line, column = info.currentline, info.currentcolumn
local none = debug.getinfo(1, "S")
nocolumn = none.currentcolumn
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := L.GetGlobal("line").String() + ":" + L.GetGlobal("column").String(); got != "3:18" {
		t.Errorf("getinfo(2, \"l\") at `local info = here()`: %s, want 3:18", got)
	}
	if got := L.GetGlobal("nocolumn"); got != LNil {
		t.Errorf("getinfo(1, \"S\").currentcolumn: %v, want nil", got)
	}
}

// TestNumericForValues: a numeric for takes numbers and strings that read as numbers for
// its initial value, limit and step, checked in that order with Cobalt's messages (upstream
// refused strings, checked the limit only once the loop ran, and said "for statement limit
// must be a number").
func TestNumericForValues(t *testing.T) {
	L := NewState()
	defer L.Close()
	err := L.DoString(`
local n = 0
for i = "1", "3" do n = n + i end
for i = 1, 2, " 1 " do n = n + 1 end
sum = n
local function fails(f) local ok, err = pcall(f) return err end
limit = fails(function() for i = 1, nil do end end)
init = fails(function() for i = {}, nil do end end)
step = fails(function() for i = 1, 2, "x" do end end)
`)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"sum":   "8",
		"limit": "<string>:7: 'for' limit must be a number",
		"init":  "<string>:8: 'for' initial value must be a number",
		"step":  "<string>:9: 'for' step must be a number",
	} {
		if got := L.GetGlobal(name).String(); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
