package lua

import (
	"math"
	"regexp"
	"testing"
)

// TestObjectStringHasNo0x: tostring of a table, function, coroutine, userdata or channel is
// its type and hexadecimal digits without "0x", the shape of CC: Tweaked's Lua (Cobalt:
// `table: 5f2a1c`), and two live objects read differently.
func TestObjectStringHasNo0x(t *testing.T) {
	L := NewState()
	defer L.Close()
	if err := L.DoString(`
		local a, b = {}, {}
		return tostring(a), tostring(print), tostring(function() end),
			tostring(coroutine.create(function() end)), tostring(a) ~= tostring(b)`); err != nil {
		t.Fatal(err)
	}
	if L.Get(-1) != LTrue {
		t.Errorf("two tables read the same: %s", L.Get(-1))
	}
	got := []string{
		L.Get(-5).String(), L.Get(-4).String(), L.Get(-3).String(), L.Get(-2).String(),
		L.NewUserData().String(), LChannel(make(chan LValue)).String(),
	}
	want := []string{"table", "function", "function", "thread", "userdata", "channel"}
	for i, text := range got {
		if !regexp.MustCompile(`^` + want[i] + `: [0-9a-f]+$`).MatchString(text) {
			t.Errorf("got %q, want %q then hexadecimal digits", text, want[i]+": ")
		}
	}
}

// TestNoNegativeZero: no arithmetic, constant folding or math function makes a negative
// zero, as in Cobalt (run from its source, every expression here is inf): 1/x tells -0 from
// 0.
func TestNoNegativeZero(t *testing.T) {
	L := NewState()
	defer L.Close()
	exprs := []string{
		"-0", "-0.0", "0 * -1", "-z", "z * -1", "-1 * z", "z / -1", "-1e-300 * 1e-300", "(-z) ^ 1",
		"(-1e-200) ^ 3", "-1 % 1", "-2 % -1", "z % -1", `-"0"`, `"0" * -1`,
		"math.ceil(-0.5)", "math.floor(-z)", "math.fmod(-1, 1)", "math.mod(-1, 1)", "math.modf(-0.5)",
		"select(2, math.modf(-1))", "math.ldexp(-1, -2000)", "math.sin(-z)", "math.atan(-z)", "math.rad(-1e-323)",
		"math.tanh(-z)", "math.sqrt(-z)", "math.pow(-z, 1)", "math.abs(-z)", "math.frexp(-z)",
	}
	for _, expr := range exprs {
		if err := L.DoString("local z = 0; return 1 / (" + expr + ")"); err != nil {
			t.Fatal(expr, err)
		}
		if got := L.Get(-1); got != LNumber(math.Inf(1)) {
			t.Errorf("1 / (%s) = %v, want inf", expr, got)
		}
		L.Pop(1)
	}
}
