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
