package computer

import (
	lua "github.com/yuin/gopher-lua"
)

// cobaltLibrary is how Cobalt 0.9.3 (CC: Tweaked 1.113.1's Lua) makes one of its libraries:
// a table of hashSize nodes (new LuaTable(0, hashSize)), then its names set in this order
// (RegisteredFunction.bind over its source's list, then the library's own rawsets). The
// order a program's pairs walks the library in follows from it (the fork's cobaltorder.go).
// With romAPI, the library is instead one of CC's ROM's Lua files that fakecraft makes in
// Go: os.loadAPI runs the file in an empty environment, where it defines its globals in
// this order, then copies them into an empty table in the order the environment walks
// them, so that walk is what decides the table's.
type cobaltLibrary struct {
	name     string
	hashSize int
	order    []string
	romAPI   bool
}

// cobaltLibraries are the libraries Cobalt makes and CC leaves as they are (its bios adds
// nothing to them), their names in the order of Cobalt 0.9.3's source (lib/StringLib.java
// and the others), and textutils, Go here and Lua in CC. Not here: the tables CC makes in
// Java (fs, os, http, …), whose order is that of Java's getMethods (README, Known
// differences).
var cobaltLibraries = []cobaltLibrary{
	{"string", 17, []string{"len", "lower", "reverse", "upper", "packsize", "dump", "byte", "char",
		"find", "gmatch", "match", "rep", "sub", "pack", "unpack", "gsub", "format", "gfind"}, false},
	{"table", 11, []string{"getn", "maxn", "remove", "concat", "insert", "move", "pack", "sort",
		"foreach", "foreachi", "unpack"}, false},
	{"math", 31, []string{"abs", "ceil", "cos", "deg", "exp", "floor", "rad", "sin", "sqrt", "tan",
		"acos", "asin", "atan", "cosh", "log10", "sinh", "tanh", "fmod", "ldexp", "pow", "atan2",
		"log", "frexp", "max", "min", "modf", "randomseed", "random", "pi", "huge", "mod"}, false},
	{"coroutine", 7, []string{"create", "running", "status", "isyieldable", "wrap", "resume", "yield"}, false},
	{"bit32", 12, []string{"band", "bnot", "bor", "btest", "bxor", "extract", "replace", "arshift",
		"lrotate", "lshift", "rrotate", "rshift"}, false},
	{"utf8", 6, []string{"char", "codes", "codepoint", "len", "offset", "charpattern"}, false},
	{"debug", 16, []string{"debug", "getfenv", "gethook", "getinfo", "getlocal", "getmetatable",
		"getregistry", "getupvalue", "setfenv", "sethook", "setlocal", "setmetatable", "setupvalue",
		"traceback", "upvalueid", "upvaluejoin"}, false},
	// rom/apis/textutils.lua's globals, in the order CC 1.113.1's file defines them.
	{"textutils", 0, []string{"slowWrite", "slowPrint", "formatTime", "pagedPrint", "tabulate",
		"pagedTabulate", "empty_json_array", "json_null", "serialize", "serialise", "unserialize",
		"unserialise", "serializeJSON", "serialiseJSON", "unserializeJSON", "unserialiseJSON",
		"urlEncode", "complete"}, true},
}

// layOutCobaltLibraries gives each of Cobalt's libraries the layout Cobalt gives it, once
// every function of it is in place: fakecraft makes them in other orders (gopher-lua's, by
// name, then its own additions and stand-ins).
func layOutCobaltLibraries(L *lua.LState, _ *Env) error {
	for _, lib := range cobaltLibraries {
		t, ok := L.GetGlobal(lib.name).(*lua.LTable)
		if !ok {
			continue
		}
		order := lib.order
		if lib.romAPI {
			env := L.NewTable() // the names alone matter: each holds true
			for _, name := range lib.order {
				env.RawSetString(name, lua.LTrue)
			}
			order = order[:0:0]
			env.ForEach(func(k, _ lua.LValue) { order = append(order, k.String()) })
		}
		t.LayOutAsCobalt(lib.hashSize, order...)
	}
	return nil
}
