// Package textutils is CC: Tweaked's textutils API for fakecraft: serialize and
// unserialize, the JSON encoder and decoder with every quirk CC:T 1.113 has (objects for
// empty tables, \u00XX byte escapes, %.14g numbers, repeated-table errors, the shared
// immutable empty_json_array and json_null sentinels, nil-and-message parse failures),
// urlEncode and formatTime.
package textutils

import (
	_ "embed"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
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
// texts (cc.expect style argument errors through luakit, level-0 serialisation errors).
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
	L.SetFuncs(t, fns) // in the names' order: the same on every run
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
		luakit.RaiseMessage(L, "attempt to mutate "+name)
		return 0
	}))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(str))
		return 1
	}))
	L.SetMetatable(t, mt)
	return t
}

// optBool reads an optional boolean option field, def when it is absent.
func optBool(L *lua.LState, opts *lua.LTable, key string, def bool) bool {
	if opts == nil {
		return def
	}
	v := luakit.ExpectField(L, opts, key, "boolean", "nil")
	if v == lua.LNil {
		return def
	}
	return lua.LVAsBool(v)
}
