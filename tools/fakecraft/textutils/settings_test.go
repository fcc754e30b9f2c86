package textutils

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// settingsSource is the ROM file under test, relative to this package.
const settingsSource = "../romfs/rom/apis/settings.lua"

// romDir is the ROM's root, where dofile finds "rom/modules/main/cc/expect.lua".
const romDir = "../romfs"

// settingsEnv is a Lua state with textutils, a map-backed fs, a recording os.queueEvent
// and the settings API loaded as os.loadAPI loads it.
type settingsEnv struct {
	L      *lua.LState
	files  map[string]string
	events [][]lua.LValue
}

func newSettingsEnv(t *testing.T) *settingsEnv {
	t.Helper()
	e := &settingsEnv{L: newState(t), files: map[string]string{}}
	L := e.L

	osTable := L.NewTable()
	osTable.RawSetString("queueEvent", L.NewFunction(func(L *lua.LState) int {
		args := make([]lua.LValue, 0, L.GetTop())
		for i := 1; i <= L.GetTop(); i++ {
			args = append(args, L.Get(i))
		}
		e.events = append(e.events, args)
		return 0
	}))
	L.SetGlobal("os", osTable)

	// gopher-lua's error(msg, level) blames one frame too few for level ≥ 2; CC's Lua 5.2
	// error does not. The computer must install a conforming error (reported to the
	// lead); until then the test provides one so settings.lua is checked against CC.
	L.SetGlobal("error", L.NewFunction(standardError))

	// dofile reads ROM paths from the repository's ROM, as the computer's bios does from /rom:
	// settings.lua takes its argument checks from cc/expect.lua.
	L.SetGlobal("dofile", L.NewFunction(func(L *lua.LState) int {
		fn, err := L.LoadFile(filepath.Join(romDir, filepath.FromSlash(L.CheckString(1))))
		if err != nil {
			L.RaiseError("%s", err.Error())
		}
		L.Push(fn)
		L.Call(0, lua.MultRet)
		return L.GetTop() - 1
	}))

	fsTable := L.NewTable()
	fsTable.RawSetString("open", L.NewFunction(e.fsOpen))
	L.SetGlobal("fs", fsTable)

	src, err := os.ReadFile(settingsSource)
	require.NoError(t, err)
	fn, err := L.Load(strings.NewReader(string(src)), "settings.lua")
	require.NoError(t, err)
	// os.loadAPI: run the file in a fresh environment that falls back to _G, then
	// publish everything it defined as the API table.
	env := L.NewTable()
	meta := L.NewTable()
	meta.RawSetString("__index", L.Get(lua.GlobalsIndex))
	L.SetMetatable(env, meta)
	fn.Env = env
	L.Push(fn)
	require.NoError(t, L.PCall(0, 0, nil))
	api := L.NewTable()
	env.ForEach(func(k, v lua.LValue) { api.RawSet(k, v) })
	L.SetGlobal("settings", api)
	return e
}

// fsOpen is fs.open(path, mode) over the files map: "r" handles have readAll and close,
// "w" handles have write and close and replace the file on close.
func (e *settingsEnv) fsOpen(L *lua.LState) int {
	path := strings.TrimPrefix(L.CheckString(1), "/")
	mode := L.CheckString(2)
	h := L.NewTable()
	switch mode {
	case "r":
		contents, ok := e.files[path]
		if !ok {
			L.Push(lua.LNil)
			L.Push(lua.LString("/" + path + ": No such file"))
			return 2
		}
		h.RawSetString("readAll", L.NewFunction(func(L *lua.LState) int {
			L.Push(lua.LString(contents))
			return 1
		}))
	case "w":
		var b strings.Builder
		h.RawSetString("write", L.NewFunction(func(L *lua.LState) int {
			b.WriteString(L.CheckString(1))
			return 0
		}))
		h.RawSetString("close", L.NewFunction(func(L *lua.LState) int {
			e.files[path] = b.String()
			return 0
		}))
	default:
		L.RaiseError("unsupported mode %s", mode)
	}
	if h.RawGetString("close") == lua.LNil {
		h.RawSetString("close", L.NewFunction(func(*lua.LState) int { return 0 }))
	}
	L.Push(h)
	return 1
}

// takeEvents returns and forgets the recorded events.
func (e *settingsEnv) takeEvents() [][]lua.LValue {
	ev := e.events
	e.events = nil
	return ev
}

func changed(name string, newV, oldV lua.LValue) []lua.LValue {
	return []lua.LValue{lua.LString("setting_changed"), lua.LString(name), newV, oldV}
}

func TestSettingsDefineSetGet(t *testing.T) {
	e := newSettingsEnv(t)
	L := e.L
	assert.Equal(t, []lua.LValue{lua.LString("ws://default"), lua.LString("fallback"), lua.LNil},
		run(t, L, `
			settings.define("sandbox.url", {description = "Gateway URL", type = "string", default = "ws://default"})
			return settings.get("sandbox.url"), settings.get("other", "fallback"), settings.get("other")`))
	assert.Empty(t, e.takeEvents(), "define queues nothing")

	run(t, L, `settings.set("sandbox.url", "ws://x:4444")`)
	assert.Equal(t, [][]lua.LValue{changed("sandbox.url", lua.LString("ws://x:4444"), lua.LString("ws://default"))}, e.takeEvents())
	run(t, L, `settings.set("sandbox.url", "ws://x:4444")`)
	assert.Empty(t, e.takeEvents(), "setting the same value queues nothing")
	assert.Equal(t, []lua.LValue{lua.LString("ws://x:4444"), lua.LString("ws://x:4444")},
		run(t, L, `return settings.get("sandbox.url"), settings.get("sandbox.url", "ignored")`))

	// A fresh setting's old value is nil; its value is a copy on the way in and out.
	assert.Equal(t, []lua.LValue{lua.LNumber(1), lua.LNumber(1), lua.LTrue},
		run(t, L, `
			local t = {1}
			settings.set("list", t)
			t[1] = 99
			local a, b = settings.get("list"), settings.get("list")
			a[1] = 42
			return b[1], settings.get("list")[1], a ~= b`))
	events := e.takeEvents()
	require.Len(t, events, 1)
	assert.Equal(t, lua.LString("list"), events[0][1])
	assert.Equal(t, lua.LNil, events[0][3])

	assert.Equal(t, []lua.LValue{lua.LString("Gateway URL"), lua.LString("ws://default"), lua.LString("string"),
		lua.LString("ws://x:4444"), lua.LTrue, lua.LFalse},
		run(t, L, `
			local d = settings.getDetails("sandbox.url")
			return d.description, d.default, d.type, d.value, d.changed, settings.getDetails("nope").changed`))

	// Defaults are copied too.
	assert.Equal(t, []lua.LValue{lua.LNumber(1)}, run(t, L, `
		local def = {1}
		settings.define("tbl", {default = def})
		def[1] = 2
		settings.get("tbl")[1] = 3
		return settings.get("tbl")[1]`))
}

func TestSettingsUnsetClearNames(t *testing.T) {
	e := newSettingsEnv(t)
	L := e.L
	run(t, L, `
		settings.define("b", {default = 5})
		settings.define("a")
		settings.set("c", true)
		settings.set("b", 6)`)
	e.takeEvents()
	assert.Equal(t, []lua.LValue{lua.LString("a,b,c")}, run(t, L, `return table.concat(settings.getNames(), ",")`))

	run(t, L, `settings.unset("b")`)
	assert.Equal(t, [][]lua.LValue{changed("b", lua.LNil, lua.LNumber(6))}, e.takeEvents())
	assert.Equal(t, []lua.LValue{lua.LNumber(5)}, run(t, L, `return settings.get("b")`))

	run(t, L, `settings.clear()`)
	assert.Equal(t, [][]lua.LValue{changed("c", lua.LNil, lua.LTrue)}, e.takeEvents())
	assert.Equal(t, []lua.LValue{lua.LString("a,b"), lua.LNil},
		run(t, L, `return table.concat(settings.getNames(), ","), settings.get("c")`))

	run(t, L, `settings.undefine("a") settings.undefine("b")`)
	assert.Equal(t, []lua.LValue{lua.LString(""), lua.LNil}, run(t, L, `return table.concat(settings.getNames(), ","), settings.get("b")`))
}

func TestSettingsErrors(t *testing.T) {
	cases := []struct {
		name, code, want string
	}{
		{"set nil name, direct", `local _, e = pcall(settings.set) error(e, 0)`, "bad argument #1 (string expected, got nil)"},
		{"set nil name, named call", `settings.set(nil, 1)`, "test:1: bad argument #1 to 'set' (string expected, got nil)"},
		{"set nil value", `settings.set("x", nil)`, "test:1: bad argument #2 to 'set' (number, string, boolean or table expected, got nil)"},
		{"set function value", `settings.set("x", print)`, "test:1: bad argument #2 to 'set' (number, string, boolean or table expected, got function)"},
		{"set wrong defined type", `settings.define("x", {type = "string"}) settings.set("x", 1)`, "test:1: bad argument #2 to 'set' (string expected, got number)"},
		{"set table holding a function", `settings.set("x", {print})`, "Cannot serialize type function"},
		{"define unknown type", `settings.define("x", {type = "int"})`, `test:1: Unknown type "int". Expected one of number, string, boolean, table.`},
		{"define bad options", `settings.define("x", 1)`, "test:1: bad argument #2 to 'define' (table expected, got number)"},
		{"define bad description", `settings.define("x", {description = 1})`, "test:1: bad field 'description' (string expected, got number)"},
		{"define bad default", `settings.define("x", {default = print})`, "test:1: bad field 'default' (number, string, boolean or table expected, got function)"},
		{"get bad name", `settings.get(1)`, "test:1: bad argument #1 to 'get' (string expected, got number)"},
		{"load bad path", `settings.load(1)`, "test:1: bad argument #1 to 'load' (string expected, got number)"},
		{"save bad path", `settings.save({})`, "test:1: bad argument #1 to 'save' (string expected, got table)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newSettingsEnv(t)
			assert.Equal(t, tc.want, runError(t, e.L, tc.code))
		})
	}
}

func TestSettingsSaveLoad(t *testing.T) {
	e := newSettingsEnv(t)
	L := e.L
	run(t, L, `settings.define("d", {default = 1}) settings.set("sandbox.url", "ws://h:1")`)
	assert.Equal(t, []lua.LValue{lua.LTrue}, run(t, L, `return settings.save()`))
	// Only set values are written, in serialize's pretty format.
	assert.Equal(t, "{\n  [ \"sandbox.url\" ] = \"ws://h:1\",\n}", e.files[".settings"])
	run(t, L, `settings.set("n", 2) settings.save("other")`)
	assert.Contains(t, e.files, "other")
	e.takeEvents()

	// A second computer reads the file back and gets events for what changed.
	e2 := newSettingsEnv(t)
	e2.files = e.files
	assert.Equal(t, []lua.LValue{lua.LTrue, lua.LString("ws://h:1"), lua.LNil},
		run(t, e2.L, `return settings.load(), settings.get("sandbox.url"), settings.get("n")`))
	assert.Equal(t, [][]lua.LValue{changed("sandbox.url", lua.LString("ws://h:1"), lua.LNil)}, e2.takeEvents())
	run(t, e2.L, `settings.load()`)
	assert.Empty(t, e2.takeEvents(), "loading unchanged values queues nothing")

	// Missing or non-table files.
	e2.files["bad"] = "not a table ("
	e2.files["num"] = "42"
	assert.Equal(t, []lua.LValue{lua.LFalse, lua.LFalse, lua.LFalse},
		run(t, e2.L, `return settings.load("missing"), settings.load("bad"), settings.load("num")`))

	// Bad entries are skipped silently; good ones apply.
	e2.files["mixed"] = `{ [1] = "x", typed = 5, ok = "yes", fn = print, [true] = 1 }`
	assert.Equal(t, []lua.LValue{lua.LTrue, lua.LString("fallback"), lua.LString("yes"), lua.LNil},
		run(t, e2.L, `
			settings.define("typed", {type = "string"})
			return settings.load("mixed"), settings.get("typed", "fallback"), settings.get("ok"), settings.get("fn")`))
	assert.Equal(t, [][]lua.LValue{changed("ok", lua.LString("yes"), lua.LNil)}, e2.takeEvents())
}

// standardError is Lua 5.2's error(msg [, level]): a string message gets the position of
// the function `level` frames up (1 = the caller of error), if that function is Lua code.
func standardError(L *lua.LState) int {
	msg := L.Get(1)
	level := L.OptInt(2, 1)
	if s, ok := msg.(lua.LString); ok && level > 0 {
		if dbg, ok := L.GetStack(level); ok {
			if _, err := L.GetInfo("S", dbg, lua.LNil); err == nil && dbg.What != "G" {
				msg = lua.LString(L.Where(level) + " " + string(s))
			}
		}
	}
	L.Error(msg, 0)
	return 0
}
