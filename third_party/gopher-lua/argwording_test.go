package lua

import (
	"fmt"
	"strings"
	"testing"
)

// testWording words argument errors as an embedding VM might, naming what each check saw.
type testWording struct{}

func (testWording) BadArgument(ls *LState, n int, reason string) string {
	return fmt.Sprintf("arg %d: %s", n, reason)
}

func (testWording) WrongType(ls *LState, n int, expected string) string {
	return fmt.Sprintf("want %s, have %s", expected, ls.Get(n).Type())
}

// TestArgErrorWording: once set, the library's own checks (CheckAny, CheckTable, CheckTypes,
// ArgError) use the embedder's wording, at the position gopher-lua gives them.
func TestArgErrorWording(t *testing.T) {
	L := NewState()
	defer L.Close()
	L.SetArgErrorWording(testWording{})
	for src, want := range map[string]string{
		`rawset(1, 2, 3)`:     "<string>:1: want table, have number",
		`getmetatable()`:      "<string>:1: arg 1: value expected",
		`setmetatable({}, 1)`: "<string>:1: want nil or table, have number",
		`select(0)`:           "<string>:1: arg 1: index out of range",
		`co = coroutine.create(function() string.sub() end); local ok, e = coroutine.resume(co); error(e, 0)`: "<string>:1: want string, have nil",
	} {
		err := L.DoString(src)
		if err == nil {
			t.Errorf("%s: no error", src)
			continue
		}
		if got := strings.SplitN(err.Error(), "\n", 2)[0]; got != want {
			t.Errorf("%s: %q, want %q", src, got, want)
		}
	}
}

// TestArgErrorWordingDefault: without one, gopher-lua's own wording stays.
func TestArgErrorWordingDefault(t *testing.T) {
	L := NewState()
	defer L.Close()
	err := L.DoString(`setmetatable({}, 1)`)
	if err == nil || !strings.Contains(err.Error(), "bad argument #2 to setmetatable (nil or table expected, got number)") {
		t.Fatalf("got %v", err)
	}
}

// TestArgNumberReader: the integer and number checks take a string holding a number, as PUC
// Lua's do, read by the embedder's reader when one is set (gopher-lua's parseNumber else).
func TestArgNumberReader(t *testing.T) {
	L := NewState()
	defer L.Close()
	check := func(src, want string) {
		t.Helper()
		if err := L.DoString(`result = tostring(` + src + `)`); err != nil {
			t.Errorf("%s: %v", src, err)
			return
		}
		if got := L.GetGlobal("result").String(); got != want {
			t.Errorf("%s = %s, want %s", src, got, want)
		}
	}
	check(`string.rep("ab", "2")`, "abab")
	check(`string.sub("abc", "2.9")`, "bc")
	check(`string.byte("abc", "3")`, "99")
	L.SetArgNumberReader(func(s string) (float64, bool) {
		if s == "two" {
			return 2, true
		}
		return 0, false
	})
	check(`string.rep("ab", "two")`, "abab")
	// Arithmetic on a string reads it with the same reader.
	check(`"two" * 3 + -"two" % "two"`, "6")
	if err := L.DoString(`return "2" + 1`); err == nil || !strings.Contains(err.Error(), "attempt to perform arithmetic on a string value") {
		t.Errorf("arithmetic read \"2\" past the reader: got %v", err)
	}
	if err := L.DoString(`string.rep("ab", "2")`); err == nil || !strings.Contains(err.Error(), "number expected, got string") {
		t.Errorf("the reader refused \"2\": got %v", err)
	}
}

// TestArgIntConverter: CheckInt and OptInt turn a number argument into an int with the
// state's converter (here a 32-bit wrap, as Java's (int) cast), a numeric string too.
func TestArgIntConverter(t *testing.T) {
	L := NewState()
	defer L.Close()
	L.SetArgIntConverter(func(f float64) int { return int(int32(int64(f))) })
	if err := L.DoString(`result = string.rep("ab", 2^32 + 2) .. "|" .. string.sub("abc", "4294967298")`); err != nil {
		t.Fatal(err)
	}
	if got := L.GetGlobal("result").String(); got != "abab|bc" {
		t.Errorf("got %q, want %q", got, "abab|bc")
	}
}

// TestStringByteDefaults: string.byte's j defaults to i (Lua 5.2), not to the string's end.
func TestStringByteDefaults(t *testing.T) {
	L := NewState()
	defer L.Close()
	if err := L.DoString(`n1 = select("#", string.byte("abc")); n2 = select("#", string.byte("abc", -2, nil))`); err != nil {
		t.Fatal(err)
	}
	if n1, n2 := L.GetGlobal("n1"), L.GetGlobal("n2"); n1 != LNumber(1) || n2 != LNumber(1) {
		t.Errorf("string.byte answered %v and %v values, want 1 and 1", n1, n2)
	}
}
