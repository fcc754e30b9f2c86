package computer

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
	"fakecraft/luachunk"
	"fakecraft/luakit"
)

// LuaVersion is the _VERSION CC: Tweaked's Cobalt VM reports.
const LuaVersion = "Lua 5.2"

// HostString is the _HOST of a fakecraft computer: CC's form, naming fakecraft instead of a
// Minecraft version so programs can tell where they run.
const HostString = "ComputerCraft 1.113.1 (fakecraft)"

// absentGlobals are the Lua 5.1 names gopher-lua defines that CC: Tweaked does not have.
var absentGlobals = []string{"collectgarbage", "module", "newproxy", "gcinfo", "io", "os", "channel"}

// openLibs opens the gopher-lua libraries CC keeps, then reshapes them into CC's Lua 5.2
// surface. Its os library is fakecraft's own (osapi.go), as are os.date and os.time.
func openLibs(L *lua.LState) {
	luakit.UseStdLibArgRules(L)
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
		{lua.DebugLibName, lua.OpenDebug},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	G := L.G.Global
	for _, name := range absentGlobals {
		G.RawSetString(name, lua.LNil)
	}
	// package is not global in CC: the shell gives each program its own require/package.
	G.RawSetString("package", lua.LNil)
	L.SetField(L.Get(lua.RegistryIndex), "_LOADED", L.NewTable())
	G.RawSetString("_VERSION", lua.LString(LuaVersion))
	G.RawSetString("_HOST", lua.LString(HostString))
	G.RawSetString("_CC_DEFAULT_SETTINGS", lua.LString(""))
	// tostring and string.format hand __tostring off to Lua stand-ins: openCFuncs installs them.
	// load hands its reader off to a Lua stand-in: openCFuncs installs it.
	G.RawSetString("loadstring", L.NewFunction(luaLoadString))
	G.RawSetString("rawlen", L.NewFunction(luaRawLen))
	G.RawSetString("tonumber", L.NewFunction(luaToNumber))
	G.RawSetString("error", L.NewFunction(luaError))
	G.RawSetString("require", lua.LNil)

	str := L.GetGlobal("string").(*lua.LTable)
	str.RawSetString("dump", lua.LNil)
	str.RawSetString("rep", L.NewFunction(luaStringRep))

	tab := L.GetGlobal("table").(*lua.LTable)
	tab.RawSetString("pack", L.NewFunction(luaTablePack))
	tab.RawSetString("unpack", G.RawGetString("unpack"))

	m := L.GetGlobal("math").(*lua.LTable)
	m.RawSetString("huge", lua.LNumber(math.Inf(1)))
	m.RawSetString("log", L.NewFunction(func(L *lua.LState) int {
		x := luakit.CheckNumber(L, 1)
		if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
			base := luakit.CheckNumber(L, 2)
			L.Push(lua.LNumber(math.Log(x) / math.Log(base)))
			return 1
		}
		L.Push(lua.LNumber(math.Log(x)))
		return 1
	}))
	if m.RawGetString("log10") == lua.LNil {
		m.RawSetString("log10", L.NewFunction(func(L *lua.LState) int {
			L.Push(lua.LNumber(math.Log10(luakit.CheckNumber(L, 1))))
			return 1
		}))
	}
	installCobaltChecks(L)
	installBit32(L)
	installDebug(L)
	installPatterns(L)
	installPack(L)
	installManyResults(L)
	installUTF8(L)
}

// parseErrorPattern matches gopher-lua's parser message so it can be rewritten in C Lua's
// shape where luachunk found no Lua wording for it.
var parseErrorPattern = regexp.MustCompile(`(?s)^(.*) line:(\d+)\(column:\d+\) near '(.*)':\s+(.*?)\s*$`)

// compileChunk compiles source under a Lua chunk name ("@path", "=name" or the source).
// Syntax errors come worded as Lua's from luachunk; any other compile error is put into
// Lua's "name:line: message near 'token'" shape.
func compileChunk(L *lua.LState, src string, chunkName string, env *lua.LTable) (*lua.LFunction, error) {
	if env == nil {
		env = L.G.Global
	}
	fn, err := luachunk.Load(L, src, chunkName, env)
	if err != nil {
		var syntaxErr *luachunk.SyntaxError
		if errors.As(err, &syntaxErr) {
			return nil, syntaxErr
		}
		msg := err.Error()
		var apiErr *lua.ApiError
		if errors.As(err, &apiErr) {
			msg = apiErr.Object.String()
		}
		if m := parseErrorPattern.FindStringSubmatch(msg); m != nil {
			msg = fmt.Sprintf("%s:%s: %s near '%s'", m[1], m[2], m[4], m[3])
		}
		return nil, errors.New(strings.TrimSpace(msg))
	}
	return fn, nil
}

// luaLoad is Lua 5.2's load(chunk [, name [, mode [, env]]]): chunk is a string (a number
// is read as its text, as Cobalt reads it) or a reader function, and the environment
// defaults to _G rather than the caller's. A reader is handed off to readerStandIn
// (cfuncs.lua's load_reader), which calls it so that it may yield, as Cobalt's load resumes
// it, and loads what it read with loadText; called by Go, load calls the reader at once
// (readChunk).
func luaLoad(readerStandIn *lua.LFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		switch chunk := L.Get(1).(type) {
		case lua.LString:
			return loadChunk(L, string(chunk), string(chunk))
		case lua.LNumber:
			text := ccformat.FormatNumber(float64(chunk))
			return loadChunk(L, text, text)
		case *lua.LFunction:
			if L.CanHandOff() {
				return L.HandOff(readerStandIn, L.GetTop()) // load's own arguments
			}
			src, failure := readChunk(L, chunk)
			if failure != nil {
				L.Push(lua.LNil)
				L.Push(failure)
				return 2
			}
			return loadChunk(L, src, "=(load)")
		}
		// Cobalt reads anything but a string as the reader function.
		luakit.TypeError(L, 1, "function")
		return 0
	}
}

// readerNotString is load's answer to a reader that returns neither a string, a number nor
// nil.
const readerNotString = "reader function must return a string"

// readChunk calls reader until it returns nil or "" and returns what it read, as
// cfuncs.lua's load_reader does: a number piece is its text; a piece of another type fails
// with readerNotString, an error of the reader with its value (failure not nil).
func readChunk(L *lua.LState, reader *lua.LFunction) (text string, failure lua.LValue) {
	var b strings.Builder
	for {
		L.Push(reader)
		if err := L.PCall(0, 1, nil); err != nil {
			var apiErr *lua.ApiError
			if errors.As(err, &apiErr) {
				return "", apiErr.Object
			}
			return "", lua.LString(err.Error())
		}
		piece := L.Get(-1)
		L.Pop(1)
		switch piece := piece.(type) {
		case *lua.LNilType:
			return b.String(), nil
		case lua.LString:
			if piece == "" {
				return b.String(), nil
			}
			b.WriteString(string(piece))
		case lua.LNumber:
			b.WriteString(ccformat.FormatNumber(float64(piece)))
		default:
			return "", lua.LString(readerNotString)
		}
	}
}

// loadText is load of the text load_reader read (loadText(text [, name [, mode [, env]]])).
func loadText(L *lua.LState) int {
	return loadChunk(L, luakit.CheckString(L, 1), "=(load)")
}

// loadChunk compiles src as load(src, name, mode, env) with the arguments on the stack from
// 2 on, name defaulting to defaultName.
func loadChunk(L *lua.LState, src, defaultName string) int {
	name := luakit.OptString(L, 2, defaultName)
	mode := luakit.OptString(L, 3, "bt")
	if !strings.Contains(mode, "t") {
		L.Push(lua.LNil)
		L.Push(lua.LString(fmt.Sprintf("attempt to load a text chunk (mode is %s)", mode))) // Cobalt's LoadState
		return 2
	}
	var env *lua.LTable
	if L.Get(4) != lua.LNil {
		env = luakit.CheckTable(L, 4)
	}
	fn, err := compileChunk(L, src, name, env)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	L.Push(fn)
	return 1
}

// luaLoadString is loadstring(s [, name]), kept by CC, loading into _G.
func luaLoadString(L *lua.LState) int {
	s := luakit.CheckString(L, 1)
	name := luakit.OptString(L, 2, s)
	fn, err := compileChunk(L, s, name, nil)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	L.Push(fn)
	return 1
}

func luaRawLen(L *lua.LState) int {
	switch v := L.Get(1).(type) {
	case *lua.LTable:
		L.Push(lua.LNumber(v.Len()))
	case lua.LString:
		L.Push(lua.LNumber(len(v)))
	default:
		luakit.BadArgumentReason(L, 1, "table or string expected")
	}
	return 1
}

// luaToNumber is Cobalt's tonumber: text is read by ccformat.ParseNumber (gopher-lua's own
// misreads "1e+5", "0x1p4" and "010"); with a base other than 10 a number argument is first
// turned into its text ("10" in base 16 is 16), and the argument errors are Cobalt's words.
func luaToNumber(L *lua.LState) int {
	if L.GetTop() < 1 {
		luakit.BadArgumentReason(L, 1, "value expected")
	}
	base := 10
	if b := L.Get(2); b != lua.LNil {
		base = javaInteger(L, b)
	}
	v := L.Get(1)
	if base == 10 {
		switch v := v.(type) {
		case lua.LNumber:
			L.Push(v)
		case lua.LString:
			pushParsed(L, string(v), 10)
		default:
			L.Push(lua.LNil)
		}
		return 1
	}
	if base < 2 || base > 36 {
		luakit.BadArgumentReason(L, 2, "base out of range")
	}
	switch v := v.(type) {
	case lua.LNumber:
		pushParsed(L, ccformat.FormatNumber(float64(v)), base)
	case lua.LString:
		pushParsed(L, string(v), base)
	default:
		// Cobalt checks the value itself, not argument 1, so its message has no number.
		luakit.RaiseMessage(L, "bad argument (string expected, got "+luakit.TypeName(v)+")")
	}
	return 1
}

func pushParsed(L *lua.LState, text string, base int) {
	if f, ok := ccformat.ParseNumber(text, base); ok {
		L.Push(lua.LNumber(f))
		return
	}
	L.Push(lua.LNil)
}

// javaInteger is Cobalt's checkInteger of a value: cobaltLong cut to a Java int, which keeps
// the low 32 bits.
func javaInteger(L *lua.LState, v lua.LValue) int {
	return int(int32(cobaltLong(L, v)))
}

// cobaltLong is Cobalt's checkLong of a value: a number (or a string holding one) converted as
// Java's (long) cast does (NaN is 0, out of range saturates); anything else is
// "bad argument (number expected, got T)".
func cobaltLong(L *lua.LState, v lua.LValue) int64 {
	var f float64
	switch v := v.(type) {
	case lua.LNumber:
		f = float64(v)
	case lua.LString:
		parsed, ok := ccformat.ParseNumber(string(v), 10)
		if !ok {
			luakit.RaiseMessage(L, "bad argument (number expected, got string)")
		}
		f = parsed
	default:
		luakit.RaiseMessage(L, "bad argument (number expected, got "+luakit.TypeName(v)+")")
	}
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

func luaTablePack(L *lua.LState) int {
	n := L.GetTop()
	t := L.CreateTable(n, 1)
	for i := 1; i <= n; i++ {
		t.RawSetInt(i, L.Get(i))
	}
	t.RawSetString("n", lua.LNumber(n))
	L.Push(t)
	return 1
}

// luaError is error(message [, level]). gopher-lua's own counts levels of 2 and more one
// frame short, so error(msg, 2) in a library would blame the library, not its caller.
func luaError(L *lua.LState) int {
	obj := L.Get(1)
	level := luakit.OptInteger(L, 2, 1)
	if s, ok := obj.(lua.LString); ok && level > 0 {
		obj = lua.LString(where(L, level) + string(s))
	}
	L.Error(obj, 0)
	return 0
}

// where is luaL_where: "source:line: " of the function level frames up from the running Go
// function (1 = its caller), counted as CC counts them past pcall (luakit.FrameAt), or ""
// for a C function (Go, or code standing in for C: pcall itself) or a level past the stack.
func where(L *lua.LState, level int) string {
	th, dbg, _, ok := luakit.FrameAt(L, level)
	if !ok {
		return ""
	}
	if _, err := th.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.What == "G" || dbg.CurrentLine <= 0 || dbg.Source == cFrameSource {
		return ""
	}
	return fmt.Sprintf("%s:%d: ", dbg.Source, dbg.CurrentLine)
}

// luaStringRep is Cobalt's string.rep(s, n [, sep]): n a 32-bit int (luakit.CheckInteger),
// nothing for n <= 0, and "resulting string too large" past 2^31 - 1 bytes, as a Java
// array's length. gopher-lua's took any n and built what it asked for.
func luaStringRep(L *lua.LState) int {
	s, n := luakit.CheckString(L, 1), luakit.CheckInteger(L, 2)
	sep := luakit.OptString(L, 3, "")
	if n <= 0 {
		L.Push(lua.LString(""))
		return 1
	}
	if int64(len(s))*int64(n)+int64(len(sep))*int64(n-1) > math.MaxInt32 {
		luakit.RaiseMessage(L, "resulting string too large")
	}
	if sep == "" {
		L.Push(lua.LString(strings.Repeat(s, n)))
		return 1
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = s
	}
	L.Push(lua.LString(strings.Join(parts, sep)))
	return 1
}
