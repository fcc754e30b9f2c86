package lua

import (
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
