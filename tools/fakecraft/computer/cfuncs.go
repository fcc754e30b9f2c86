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
	// The position of the Lua code nearest the calling stand-in (pcall): where an error of the
	// function pcall called directly is placed.
	native.RawSetString("caller_where", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(luakit.CallerWhere(L)))
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
