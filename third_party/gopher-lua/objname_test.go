package lua

import (
	"strings"
	"testing"
)

// TestOperandErrorsNameTheOperand: an operand of the wrong type is named as CC: Tweaked's
// Lua (Cobalt 0.9, Lua 5.2's wording) names it: by the local, global, field, upvalue or method
// it was read from at the failing instruction, and by its type (a metatable's __name) alone
// when it has no name there.
func TestOperandErrorsNameTheOperand(t *testing.T) {
	cases := []struct{ code, want string }{
		{"local x; return x.y", "attempt to index local 'x' (a nil value)"},
		{"local x; x.y = 1", "attempt to index local 'x' (a nil value)"},
		{"return nothing.y", "attempt to index global 'nothing' (a nil value)"},
		{"local t = {}; return t.a.b", "attempt to index field 'a' (a nil value)"},
		{"local t, k = {}, 'a'; return t[k].b", "attempt to index field '?' (a nil value)"},
		{"local t = setmetatable({}, { __index = 5 }); return t.x", "attempt to index a number value"},
		{"nothing()", "attempt to call global 'nothing' (a nil value)"},
		{"local t = {}; t.m()", "attempt to call field 'm' (a nil value)"},
		{"local t = {}; t:m()", "attempt to call method 'm' (a nil value)"},
		{"local f = 1; f()", "attempt to call local 'f' (a number value)"},
		{"local f = 1; return f()", "attempt to call local 'f' (a number value)"},
		{"local a = {}; return a + 1", "attempt to perform arithmetic on local 'a' (a table value)"},
		{"local a = {}; return 1 - a", "attempt to perform arithmetic on local 'a' (a table value)"},
		{"local a, b = 1; return a * b", "attempt to perform arithmetic on local 'b' (a nil value)"},
		{"local s = 'x'; return -s", "attempt to perform arithmetic on local 's' (a string value)"},
		{"return -{}", "attempt to perform arithmetic on a table value"},
		{"local t = setmetatable({}, { __name = 'Thing' }); return t % 2", "attempt to perform arithmetic on local 't' (a Thing value)"},
		{"local n; return #n", "attempt to get length of local 'n' (a nil value)"},
		{"local t = {}; return 'x' .. t", "attempt to concatenate local 't' (a table value)"},
		{"local t = {}; return t .. 'x'", "attempt to concatenate local 't' (a table value)"},
		{"local b = true; return 1 .. b .. 2", "attempt to concatenate local 'b' (a boolean value)"},
		{"return {} < {}", "attempt to compare two table values"},
		{"return 1 < 'x'", "attempt to compare number with string"},
		{"return {} <= 1", "attempt to compare table with number"},
	}
	for _, c := range cases {
		// An upvalue: the function below reads it.
		L := NewState()
		err := L.DoString("local up; local function f() return up.x end; " + c.code)
		if err == nil || !strings.Contains(err.Error(), "<string>:1: "+c.want+"\n") {
			t.Errorf("%s: want %q, got %v", c.code, c.want, err)
		}
		L.Close()
	}

	L := NewState()
	defer L.Close()
	if err := L.DoString("local up; (function() return up.x end)()"); err == nil ||
		!strings.Contains(err.Error(), "attempt to index upvalue 'up' (a nil value)") {
		t.Errorf("upvalue: got %v", err)
	}
	// A closure's upvalues are listed by pseudo-instructions after it, which set no register:
	// the call's function, in register 0 of a function with no locals, is still the field.
	if err := L.DoString("local up; (function() holder = {}; holder.x(function() return up end) end)()"); err == nil ||
		!strings.Contains(err.Error(), "attempt to call field 'x' (a nil value)") {
		t.Errorf("closure: got %v", err)
	}
	// Only the value the instruction read has its name; one met on the __index chain has none.
	if err := L.DoString("local t = setmetatable({}, { __index = setmetatable({}, { __index = true }) }); return t.x"); err == nil ||
		!strings.Contains(err.Error(), "attempt to index a boolean value") {
		t.Errorf("chain: got %v", err)
	}
	// A value a Go function indexes or calls has no name either.
	if err := L.DoString("local x; pcall(x)"); err != nil {
		t.Fatal(err)
	}
	L.Push(LNil)
	if err := L.PCall(0, 0, nil); err == nil || !strings.Contains(err.Error(), "attempt to call a nil value") {
		t.Errorf("Go call: got %v", err)
	}
	// A register whose value depends on a branch has no name: either path may have set it.
	if err := L.DoString("local c = ...; local v; v = c and nothing or nothing2; return v.x"); err == nil ||
		!strings.Contains(err.Error(), "attempt to index local 'v' (a nil value)") {
		t.Errorf("branch: got %v", err)
	}
	if err := L.DoString("return (nothing or nothing2).x"); err == nil ||
		!strings.Contains(err.Error(), "attempt to index a nil value") {
		t.Errorf("branch: got %v", err)
	}
}

// TestHiddenCallNamedByItsValue: the result of a Hidden Go function called with one value
// from an upvalue (the call an embedder's compiler makes, fakecraft's operand of `..`) is
// named in an error as that value is; one that is not Hidden names nothing.
func TestHiddenCallNamedByItsValue(t *testing.T) {
	for _, hidden := range []bool{true, false} {
		L := NewState()
		filter := L.NewFunction(func(L *LState) int { L.SetTop(1); return 1 })
		filter.Hidden = hidden
		L.SetGlobal("filter", filter)
		err := L.DoString(`local filter = filter
		return (function() local t = {}; return "x" .. filter(t) end)()`)
		want := "attempt to concatenate a table value"
		if hidden {
			want = "attempt to concatenate local 't' (a table value)"
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("hidden %v: want %q, got %v", hidden, want, err)
		}
		L.Close()
	}
}
