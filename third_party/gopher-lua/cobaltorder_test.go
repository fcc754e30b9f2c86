package lua

import (
	"fmt"
	"math/rand"
	"testing"
)

// The orders and lengths Cobalt 0.9.4 (CC: Tweaked 1.113.1's Lua), built from its source,
// gave for the same code; fakecraft's runs of thousands of random tables (constructors,
// string, whole, fractional and large number keys, keys set to nil, set again,
// table.insert and table.remove) agreed with it.
func TestTraversalOrderAsCobalt(t *testing.T) {
	cases := []struct{ code, want string }{
		{`return show({ b = 1, a = 2, c = 3, [10] = 4, "x", "y", long_name = 5, [2.5] = 6 })`,
			"1 2 a c b long_name 2.5 10"},
		{`local t = {} t.b = 1 t.a = 2 t.c = 3 return show(t)`, "a c b"},
		{`local t = {}
		  for _, k in ipairs({ "id", "label", "x", "y", "z", "fuel", "name", "type", "value", "data" }) do t[k] = true end
		  return show(t)`, "fuel label id data y x name z value type"},
		{`return show({ id = 1, label = 2, x = 3, y = 4, z = 5, fuel = 6, name = 7, type = 8, value = 9, data = 10 })`,
			"fuel label id data y x name z value type"},
		{`local t = {} for i = 10, 1, -1 do t[i] = i end return show(t) .. " #" .. #t`, "1 2 3 4 5 6 7 8 9 10 #10"},
		{`local t = {} t[3] = 1 t[1] = 1 t[100] = 1 t[-1] = 1 t[0] = 1 t[2147483648] = 1 t[0.5] = 1 return show(t)`,
			"1 0 -1 100 3 0.5 2147483648"},
		{`local t = { a = 1, b = 2, c = 3, d = 4 } t.b = nil t.e = 5 t.b = 6 return show(t)`, "a c b e d"},
		{`local t = { a = 1 } t.zz = nil t.yy = nil t.b = 2 return show(t)`, "a b"},
		{`local t = { 1, 2, 3, 4, 5, 6, 7, 8 } t[2] = nil t[4] = nil t[8] = nil return #t .. " " .. show(t)`,
			"1 1 3 5 6 7"},
		{`local t = {} t[1] = 1 t[2] = 2 t[4] = 4 t[5] = 5 t[6] = 6 return #t .. " " .. show(t)`, "6 1 2 4 5 6"},
		{`return show({ ("x"):rep(40), key_with_a_much_longer_name_than_thirty_two_bytes = 1, short = 2, [("k"):rep(33)] = 3 })`,
			"1 key_with_a_much_longer_name_than_thirty_two_bytes kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk short"},
		{`local function three() return 1, 2, 3 end return show({ a = 1, b = 2, three() })`, "1 2 3 a b"},
	}
	L := NewState()
	defer L.Close()
	if err := L.DoString(`function show(t)
		local o = {} for k in pairs(t) do o[#o + 1] = tostring(k) end return table.concat(o, " ")
	end`); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if err := L.DoString(`result = (function() ` + c.code + ` end)()`); err != nil {
			t.Fatalf("%s: %v", c.code, err)
		}
		if got := L.GetGlobal("result").String(); got != c.want {
			t.Errorf("%s\ngot  %s\nwant %s", c.code, got, c.want)
		}
	}
}

// Whatever was set and cleared, a traversal visits each key that holds a value once, and
// nothing else; a key set to nil during it still leads on (Lua's rule for next).
func TestTraversalVisitsEveryKeyOnce(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	keys := []LValue{LNumber(0.5), LNumber(-3), LNumber(1e10), LNumber(1 << 31), LTrue, LFalse}
	for i := 1; i <= 40; i++ {
		keys = append(keys, LNumber(i), LString(fmt.Sprintf("k%d", i)))
	}
	for round := 0; round < 300; round++ {
		tb := newLTable(0, 0)
		if round%3 == 0 {
			tb.SizeAsCobalt(r.Intn(9), r.Intn(9))
		}
		want := map[LValue]LValue{}
		for op := r.Intn(200); op > 0; op-- {
			k := keys[r.Intn(len(keys))]
			if r.Intn(3) == 0 {
				tb.RawSet(k, LNil)
				delete(want, k)
			} else {
				v := LNumber(op)
				tb.RawSet(k, v)
				want[k] = v
			}
		}
		seen := map[LValue]bool{}
		for k, v := tb.Next(LNil); k != LNil; k, v = tb.Next(k) {
			if seen[k] || want[k] != v {
				t.Fatalf("round %d: key %v (value %v) seen twice or not held (%v)", round, k, v, want[k])
			}
			seen[k] = true
			if r.Intn(4) == 0 {
				tb.RawSet(k, LNil) // cleared while the traversal runs
				delete(want, k)
			}
		}
		for k := range want {
			if !seen[k] {
				t.Fatalf("round %d: key %v never visited", round, k)
			}
		}
	}
}

// A library's functions are set in their names' order, so two states walk them alike, as
// every run of CC does; and strings' metatable is a table of its own, not the library.
func TestLibrariesWalkAlikeInEveryState(t *testing.T) {
	walk := func() string {
		L := NewState()
		defer L.Close()
		if err := L.DoString(`local out = {}
			for _, lib in ipairs({ math, string, table, os, coroutine }) do
				for k in pairs(lib) do out[#out + 1] = k end
			end
			result = table.concat(out, " ")
			assert(rawget(string, "__index") == nil and getmetatable("").__index == string)`); err != nil {
			t.Fatal(err)
		}
		return L.GetGlobal("result").String()
	}
	first := walk()
	for range 5 {
		if again := walk(); again != first {
			t.Fatalf("another state walked its libraries in another order:\n%s\n%s", first, again)
		}
	}
}

// LayOutAsCobalt makes a table walk as one made with new LuaTable(0, n) and its keys set
// in the order given does, whatever order it had them set in and what it cleared; keys the
// order leaves out come after, and no value changes. Cobalt's string library is such a
// table: its functions set in its source's order, then gfind (the order read off Cobalt
// 0.9.4 built from its source).
func TestLayOutAsCobalt(t *testing.T) {
	cobalt := []string{"len", "lower", "reverse", "upper", "packsize", "dump", "byte", "char", "find",
		"gmatch", "match", "rep", "sub", "pack", "unpack", "gsub", "format"}
	L := NewState()
	defer L.Close()
	walk := func(tb *LTable) string {
		var out []string
		tb.ForEach(func(k, v LValue) {
			if v.String() != k.String() {
				t.Fatalf("%v holds %v", k, v)
			}
			out = append(out, k.String())
		})
		return fmt.Sprint(out)
	}
	tb := L.NewTable()
	for _, k := range []string{"zz", "format", "byte", "gfind"} {
		tb.RawSetString(k, LString(k))
	}
	tb.RawSetString("zz", LNil)
	for i := len(cobalt) - 1; i >= 0; i-- {
		tb.RawSetString(cobalt[i], LString(cobalt[i]))
	}
	tb.LayOutAsCobalt(len(cobalt), cobalt...)
	want := "[match gmatch upper gsub format lower sub pack gfind find char dump packsize reverse len unpack rep byte]"
	if got := walk(tb); got != want {
		t.Errorf("laid out as Cobalt's string library:\ngot  %s\nwant %s", got, want)
	}
	// A key the order leaves out follows the named ones, where setting it next would put it.
	fresh := L.CreateTable(0, len(cobalt))
	for _, k := range append(cobalt, "gfind") {
		fresh.RawSetString(k, LString(k))
	}
	if got, want := walk(fresh), walk(tb); got != want {
		t.Errorf("a fresh table set in that order walks otherwise:\n%s\n%s", got, want)
	}
}
