package luakit

import (
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Expect checks argument n of a Go function standing in for one CC writes in Lua, against
// Lua type names ("string", "nil", …), as cc.expect does: the message lists the types
// without "nil" ("string or number"), names the function when the caller called it by a
// name ("bad argument #1 to 'complete' (string expected, got nil)"), and names a table by
// its metatable's __name. The error is placed as cc.expect's error(msg, 3) is
// (RaiseAtCaller): at the function's caller, none when that is C (pcall(f, …)).
func Expect(L *lua.LState, n int, types ...string) lua.LValue {
	v := L.Get(n)
	if hasType(v, types) {
		return v
	}
	msg := "bad argument #" + strconv.Itoa(n)
	if name := calledName(L); name != "" {
		msg += " to '" + name + "'"
	}
	RaiseAtCaller(L, msg+" ("+typeList(types)+" expected, got "+displayType(L, v)+")")
	return lua.LNil
}

// ExpectField checks t[key] (through __index, as Lua indexing does) as cc.expect's field
// does and returns it: "bad field 'key' (boolean expected, got number)", or "field 'key'
// missing from table" when it is nil and nil is not allowed.
func ExpectField(L *lua.LState, t *lua.LTable, key string, types ...string) lua.LValue {
	v := L.GetField(t, key)
	if hasType(v, types) {
		return v
	}
	if v == lua.LNil {
		RaiseAtCaller(L, "field '"+key+"' missing from table")
	}
	RaiseAtCaller(L, "bad field '"+key+"' ("+typeList(types)+" expected, got "+displayType(L, v)+")")
	return lua.LNil
}

func hasType(v lua.LValue, types []string) bool {
	got := v.Type().String()
	for _, t := range types {
		if t == got {
			return true
		}
	}
	return false
}

// typeList joins the expected types as cc.expect does, leaving "nil" out: "a, b or c".
// With one type or none left, cc.expect shows the first type it was given, "nil" included.
func typeList(types []string) string {
	listed := make([]string, 0, len(types))
	for _, t := range types {
		if t != "nil" {
			listed = append(listed, t)
		}
	}
	if len(listed) <= 1 {
		if len(types) == 0 {
			return "value"
		}
		return types[0]
	}
	return strings.Join(listed[:len(listed)-1], ", ") + " or " + listed[len(listed)-1]
}

// displayType is Lua's type of v, or the __name of a table's or userdata's metatable, as
// cc.expect and CC's Java APIs show it.
func displayType(L *lua.LState, v lua.LValue) string {
	t := v.Type()
	if t == lua.LTTable || t == lua.LTUserData {
		if mt, ok := L.GetMetatable(v).(*lua.LTable); ok {
			if name, ok := mt.RawGetString("__name").(lua.LString); ok {
				return string(name)
			}
		}
	}
	return t.String()
}

// calledName is the name the caller used for the running Go function ("complete" for
// fs.complete(x)), or "" when it is not known, as cc.expect finds it with debug.getinfo.
func calledName(L *lua.LState) string {
	dbg, ok := L.GetStack(0)
	if !ok {
		return ""
	}
	if _, err := L.GetInfo("n", dbg, lua.LNil); err != nil {
		return ""
	}
	name := dbg.Name
	// gopher-lua's placeholders for "no name": "?", "(anonymous)", "<src:line>",
	// "main chunk", "corountine" (sic).
	if name == "" || name == "?" || name == "main chunk" || name == "corountine" ||
		strings.HasPrefix(name, "(") || strings.HasPrefix(name, "<") {
		return ""
	}
	return name
}
