package computer

import (
	_ "embed"
	"errors"
	"fmt"
	"regexp"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

// cFuncsSource stands in for C functions in Lua: pcall's coroutine body and the library
// functions whose callbacks must be able to yield (see the file's header).
//
//go:embed cfuncs.lua
var cFuncsSource string

// installCFuncs runs cfuncs.lua over the Go functions it wraps and returns pcall's
// trampoline and the table of what it shares with Go (native: gsub_helper, gsub_answered,
// inext, proxy_inext).
// The standard library and patterns must be installed.
func installCFuncs(L *lua.LState) (*lua.LFunction, *lua.LTable, error) {
	fn, err := compileChunk(L, cFuncsSource, cFuncsChunk, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("compile cfuncs: %w", err)
	}
	// The VM places its errors past the stand-ins, at the Lua code that called them, as
	// Cobalt places an error a Java function raises (luakit.CallerWhere); one with no Lua
	// code below it in its coroutine (pcall's body) is placed again by protected().
	L.SetStandInSource(cFrameSource)
	tbl := L.GetGlobal("table").(*lua.LTable)
	native := L.NewTable()
	native.RawSetString("sort", L.NewFunction(placedAtCaller(tbl.RawGetString("sort").(*lua.LFunction))))
	native.RawSetString("go_sortable", L.NewFunction(goSortable))
	native.RawSetString("inext", L.NewFunction(luaInext))
	for name, check := range proxyChecks {
		native.RawSetString(name, L.NewFunction(check))
	}
	native.RawSetString("load_text", L.NewFunction(loadText))
	native.RawSetString("reader_not_string", lua.LString(readerNotString))
	native.RawSetString("format_step", L.NewFunction(placedAtCaller(L.NewFunction(formatStep))))
	// gopher-lua's own yield (coroutine.yield checks the boundary first, boot.go): a helper's
	// yield at the base of its coroutine never crosses Go.
	native.RawSetString("yield", L.NewFunction(func(*lua.LState) int { return -1 }))
	// pcall's and xpcall's: an error placed where Cobalt places it, an xpcall handler set on
	// its coroutine, and the running coroutine's handler (load's reader runs under it).
	native.RawSetString("placed", L.NewFunction(func(L *lua.LState) int {
		L.Push(placedAtPcall(L, L.Get(1)))
		return 1
	}))
	// coroutine.wrap's own errors, placed as Cobalt places a Java function's.
	native.RawSetString("raise", L.NewFunction(func(L *lua.LState) int {
		luakit.RaiseMessage(L, L.CheckString(1))
		return 0
	}))
	// pcall's coroutine shares its caller's debug hook (the fork's ShareHooks).
	native.RawSetString("shares_hooks", L.NewFunction(func(L *lua.LState) int {
		L.CheckThread(1).ShareHooks()
		return 1
	}))
	native.RawSetString("set_error_handler", L.NewFunction(func(L *lua.LState) int {
		L.CheckThread(1).SetErrorHandler(L.Get(2), placedAtPcall)
		return 0
	}))
	native.RawSetString("error_handler", L.NewFunction(func(L *lua.LState) int {
		handler, ok := L.ErrorHandler()
		if !ok {
			handler = L.Get(1)
		}
		L.Push(handler)
		return 1
	}))
	if err := L.CallByParam(lua.P{Fn: fn, NRet: 1, Protect: true}, native); err != nil {
		return nil, nil, fmt.Errorf("run cfuncs: %w", err)
	}
	tramp, ok := L.Get(-1).(*lua.LFunction)
	L.Pop(1)
	if !ok {
		return nil, nil, errors.New("cfuncs did not return the trampoline")
	}
	return tramp, native, nil
}

// cFramePosition is the position gopher-lua gives an error raised under a stand-in.
var cFramePosition = regexp.MustCompile(`^` + regexp.QuoteMeta(cFrameSource) + `:\d+: `)

// placedAtPcall is err, an error that ends a pcall's or xpcall's function, placed where CC's
// Cobalt places it when gopher-lua placed it in the stand-in for pcall (the coroutine's body,
// when the function pcall called directly raised it): at the Lua code nearest, the line
// calling pcall (luakit.CallerWhere, past pcall's workings). Any other error is as it was.
func placedAtPcall(L *lua.LState, err lua.LValue) lua.LValue {
	msg, ok := err.(lua.LString)
	if !ok || !cFramePosition.MatchString(string(msg)) {
		return err
	}
	return lua.LString(luakit.CallerWhere(L) + cFramePosition.ReplaceAllLiteralString(string(msg), ""))
}

// goSortable says whether table.sort with no comparator may leave the table t to
// gopher-lua's sort: t has no metatable, and its elements 1 to #t are all numbers (none NaN)
// or all strings. Their order is then one and the same however they are sorted; any other
// table goes to Cobalt's heapsort (cfuncs.lua), whose first comparison that fails names its
// pair, and whose order of a NaN, a metatable's __len and __index and __lt it follows.
func goSortable(L *lua.LState) int {
	t := L.CheckTable(1)
	L.Push(lua.LBool(t.Metatable == lua.LNil && sameOrderedKind(t)))
	return 1
}

func sameOrderedKind(t *lua.LTable) bool {
	n := t.Len()
	if n < 2 {
		return true
	}
	_, strings := t.RawGetInt(1).(lua.LString)
	for i := 1; i <= n; i++ {
		switch v := t.RawGetInt(i).(type) {
		case lua.LNumber:
			if strings || v != v {
				return false
			}
		case lua.LString:
			if !strings {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// placedAtCaller runs one of gopher-lua's library functions for a stand-in. gopher-lua
// places the function's own errors at the nearest Lua frame, the stand-in; those are placed
// again where luakit places errors, at the Lua code that called the stand-in. Errors raised
// in Lua code it called (a metamethod) keep their position.
func placedAtCaller(fn *lua.LFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		L.Insert(fn, 1)
		err := L.PCall(L.GetTop()-1, lua.MultRet, nil)
		if err == nil {
			return L.GetTop()
		}
		var apiErr *lua.ApiError
		if !errors.As(err, &apiErr) {
			L.RaiseError("%s", err.Error())
		}
		if msg, ok := apiErr.Object.(lua.LString); ok && cFramePosition.MatchString(string(msg)) {
			luakit.RaiseMessage(L, cFramePosition.ReplaceAllString(string(msg), ""))
		}
		L.Error(apiErr.Object, 0)
		return 0
	}
}
