// Package textutils is CC: Tweaked's textutils API for fakecraft: serialize and
// unserialize, the JSON encoder and decoder with every quirk CC:T 1.113 has (objects for
// empty tables, \u00XX byte escapes, %.14g numbers, repeated-table errors, the shared
// immutable empty_json_array and json_null sentinels, nil-and-message parse failures),
// urlEncode and formatTime.
package textutils

import (
	_ "embed"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
)

// Names of the two sentinel tables, used in their mutation error and __tostring.
const (
	emptyArrayName = "textutils.empty_json_array"
	jsonNullName   = "textutils.json_null"
)

// api holds the per-state sentinels that the encoder and decoder recognise by identity.
type api struct {
	emptyArray *lua.LTable
	jsonNull   *lua.LTable
}

// Install creates the global textutils table in L. The functions raise CC's own error
// texts (cc.expect style argument errors, level-0 serialisation errors).
func Install(L *lua.LState) {
	a := &api{
		emptyArray: newSentinel(L, emptyArrayName, "[]"),
		jsonNull:   newSentinel(L, jsonNullName, "null"),
	}
	t := L.NewTable()
	fns := map[string]lua.LGFunction{
		"serialize":       a.serialize,
		"serialise":       a.serialize,
		"unserialize":     a.unserialize,
		"unserialise":     a.unserialize,
		"serializeJSON":   a.serializeJSON,
		"serialiseJSON":   a.serializeJSON,
		"unserializeJSON": a.unserializeJSON,
		"unserialiseJSON": a.unserializeJSON,
		"urlEncode":       urlEncode,
		"formatTime":      formatTime,
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	t.RawSetString("empty_json_array", a.emptyArray)
	t.RawSetString("json_null", a.jsonNull)
	L.SetGlobal("textutils", t)
	fn, err := L.LoadString(luaSource)
	if err != nil {
		// luaSource is a constant compiled into the binary; a syntax error in it is a bug.
		panic("textutils.lua: " + err.Error())
	}
	L.Push(fn)
	L.Push(t)
	L.Call(1, 0)
}

// luaSource is the Lua half of the API: the functions that draw on the terminal.
//
//go:embed textutils.lua
var luaSource string

// newSentinel makes an empty table whose writes raise "attempt to mutate <name>" and
// whose tostring is str. Reads are untouched, so #t is 0 and next(t) is nil.
func newSentinel(L *lua.LState, name, str string) *lua.LTable {
	t := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		// CC raises at level 2: the position of the code doing the assignment.
		raise(L, callerWhere(L)+"attempt to mutate "+name)
		return 0
	}))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(str))
		return 1
	}))
	L.SetMetatable(t, mt)
	return t
}

// raise throws msg as a Lua error without gopher-lua adding a position of its own.
func raise(L *lua.LState, msg string) {
	L.Error(lua.LString(msg), 0)
}

// callerWhere is the "source:line: " prefix of the Lua function that called the running
// Go function, or "" when the caller is not Lua code (e.g. pcall), as Lua's error(msg, 2)
// from a Lua-written API would give.
func callerWhere(L *lua.LState) string {
	dbg, ok := L.GetStack(1)
	if !ok {
		return ""
	}
	if _, err := L.GetInfo("S", dbg, lua.LNil); err != nil || dbg.What == "G" {
		return ""
	}
	return L.Where(1) + " "
}

// calledName is the name the caller used for the running Go function ("serializeJSON"
// for textutils.serializeJSON(x)), or "" when it is not known, as cc.expect finds it
// through debug.getinfo.
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

// typeName is Lua's type() of v.
func typeName(v lua.LValue) string {
	return v.Type().String()
}

// typeList joins type names the way cc.expect does: "a, b or c".
func typeList(types []string) string {
	if len(types) <= 1 {
		return strings.Join(types, "")
	}
	return strings.Join(types[:len(types)-1], ", ") + " or " + types[len(types)-1]
}

// expectArg checks argument n against the allowed Lua type names ("nil" allowed but not
// listed in the message, as cc.expect does) and raises CC's message when it does not match.
func expectArg(L *lua.LState, n int, types ...string) lua.LValue {
	v := L.Get(n)
	got := typeName(v)
	listed := make([]string, 0, len(types))
	for _, ty := range types {
		if ty == got {
			return v
		}
		if ty != "nil" {
			listed = append(listed, ty)
		}
	}
	var msg string
	if name := calledName(L); name != "" {
		msg = "bad argument #" + itoa(n) + " to '" + name + "' (" + typeList(listed) + " expected, got " + got + ")"
	} else {
		msg = "bad argument #" + itoa(n) + " (" + typeList(listed) + " expected, got " + got + ")"
	}
	raise(L, callerWhere(L)+msg)
	return lua.LNil
}

// expectField checks opts[key] as cc.expect's field does and returns the value.
func expectField(L *lua.LState, opts *lua.LTable, key string, types ...string) lua.LValue {
	v := L.GetField(opts, key)
	got := typeName(v)
	listed := make([]string, 0, len(types))
	for _, ty := range types {
		if ty == got {
			return v
		}
		if ty != "nil" {
			listed = append(listed, ty)
		}
	}
	raise(L, callerWhere(L)+"bad field '"+key+"' ("+typeList(listed)+" expected, got "+got+")")
	return lua.LNil
}

// optBool reads an optional boolean option field, def when it is absent.
func optBool(L *lua.LState, opts *lua.LTable, key string, def bool) bool {
	if opts == nil {
		return def
	}
	v := expectField(L, opts, key, "boolean", "nil")
	if v == lua.LNil {
		return def
	}
	return lua.LVAsBool(v)
}

func itoa(n int) string {
	return ccformat.FormatNumber(float64(n))
}
