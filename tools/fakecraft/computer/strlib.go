package computer

import (
	"errors"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
	"fakecraft/luakit"
	"fakecraft/luapattern"
)

// patternSpecials are the characters that make a find pattern more than plain text.
const patternSpecials = "^$*+?.([%-"

// installPatterns replaces string.find, match, gmatch and gsub with Lua 5.2's matcher
// (package luapattern): it knows %g and %f, and a runaway pattern is stopped by the
// computer's "Too long without yielding" instead of hanging the computer.
func installPatterns(L *lua.LState) {
	str := L.GetGlobal("string").(*lua.LTable)
	str.RawSetString("find", L.NewFunction(func(L *lua.LState) int { return strFind(L, true) }))
	str.RawSetString("match", L.NewFunction(func(L *lua.LState) int { return strFind(L, false) }))
	str.RawSetString("gmatch", L.NewFunction(strGmatch))
	str.RawSetString("gsub", L.NewFunction(strGsub))
}

// stopper is the matcher's poll: has the computer's yield guard fired?
func stopper(L *lua.LState) func() bool {
	ctx := L.Context()
	if ctx == nil {
		return nil
	}
	return func() bool {
		select {
		case <-ctx.Done():
			_ = ctx.Err() // a soft abort re-arms the guard, as the VM's own check does
			return true
		default:
			return false
		}
	}
}

// raisePattern turns a matcher error into the Lua error CC raises.
func raisePattern(L *lua.LState, err error) {
	if errors.Is(err, luapattern.ErrStopped) {
		L.Error(lua.LString(TooLongMessage), 0)
	}
	luakit.RaiseMessage(L, err.Error())
}

// startIndex is Lua's posrelat for init: negative counts from the end, clipped at 1.
func startIndex(init, length int) int {
	if init < 0 {
		init = length + init + 1
	}
	if init < 1 {
		init = 1
	}
	return init
}

func pushCaptures(L *lua.LState, m *luapattern.Matcher, s, e int, wholeIfNone bool) int {
	n := m.Level()
	if n == 0 && wholeIfNone {
		n = 1
	}
	for i := 0; i < n; i++ {
		text, pos, isPos, err := m.Capture(i, s, e)
		if err != nil {
			raisePattern(L, err)
		}
		if isPos {
			L.Push(lua.LNumber(pos))
		} else {
			L.Push(lua.LString(text))
		}
	}
	return n
}

func strFind(L *lua.LState, find bool) int {
	src := luakit.CheckString(L, 1)
	pat := luakit.CheckString(L, 2)
	init := startIndex(luakit.OptInteger(L, 3, 1), len(src))
	if init > len(src)+1 {
		L.Push(lua.LNil)
		return 1
	}
	if find && (lua.LVAsBool(L.Get(4)) || !strings.ContainsAny(pat, patternSpecials)) {
		if i := strings.Index(src[init-1:], pat); i >= 0 {
			L.Push(lua.LNumber(init + i))
			L.Push(lua.LNumber(init + i + len(pat) - 1))
			return 2
		}
		L.Push(lua.LNil)
		return 1
	}
	m := luapattern.New(src, pat, stopper(L))
	p := 0
	anchor := len(pat) > 0 && pat[0] == '^'
	if anchor {
		p = 1
	}
	for s := init - 1; s <= len(src); s++ {
		e, err := m.Match(s, p)
		if err != nil {
			raisePattern(L, err)
		}
		if e >= 0 {
			if find {
				L.Push(lua.LNumber(s + 1))
				L.Push(lua.LNumber(e))
				return 2 + pushCaptures(L, m, s, e, false)
			}
			return pushCaptures(L, m, s, e, true)
		}
		if anchor {
			break
		}
	}
	L.Push(lua.LNil)
	return 1
}

func strGmatch(L *lua.LState) int {
	src := luakit.CheckString(L, 1)
	pat := luakit.CheckString(L, 2)
	stop := stopper(L)
	pos := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		m := luapattern.New(src, pat, stop)
		for s := pos; s <= len(src); s++ {
			e, err := m.Match(s, 0)
			if err != nil {
				raisePattern(L, err)
			}
			if e >= 0 {
				if e == s {
					pos = e + 1 // an empty match: move on at least one place
				} else {
					pos = e
				}
				return pushCaptures(L, m, s, e, true)
			}
		}
		pos = len(src) + 1
		return 0
	}))
	return 1
}

func strGsub(L *lua.LState) int {
	src := luakit.CheckString(L, 1)
	pat := luakit.CheckString(L, 2)
	repl := L.Get(3)
	switch repl.(type) {
	case lua.LNumber, lua.LString, *lua.LTable, *lua.LFunction:
	default:
		luakit.ArgError(L, 3, "string/function/table")
	}
	maxN := luakit.OptInteger(L, 4, len(src)+1)
	p := 0
	anchor := len(pat) > 0 && pat[0] == '^'
	if anchor {
		p = 1
	}
	m := luapattern.New(src, pat, stopper(L))
	var b strings.Builder
	n := 0
	s := 0
	for n < maxN {
		e, err := m.Match(s, p)
		if err != nil {
			raisePattern(L, err)
		}
		if e >= 0 {
			n++
			addValue(L, &b, m, s, e, repl)
		}
		switch {
		case e >= 0 && e > s:
			s = e
		case s < len(src):
			b.WriteByte(src[s])
			s++
		default:
			goto done
		}
		if anchor {
			break
		}
	}
done:
	b.WriteString(src[min(s, len(src)):])
	L.Push(lua.LString(b.String()))
	L.Push(lua.LNumber(n))
	return 2
}

// addValue appends the replacement of the match [s, e).
func addValue(L *lua.LState, b *strings.Builder, m *luapattern.Matcher, s, e int, repl lua.LValue) {
	whole := m.Source()[s:e] // what a nil or false replacement keeps
	var value lua.LValue
	switch r := repl.(type) {
	case lua.LString, lua.LNumber:
		text := lua.LVAsString(r)
		if n, ok := r.(lua.LNumber); ok {
			text = ccformat.FormatNumber(float64(n))
		}
		for i := 0; i < len(text); i++ {
			c := text[i]
			if c != '%' {
				b.WriteByte(c)
				continue
			}
			i++
			if i >= len(text) {
				luakit.RaiseMessage(L, "invalid use of '%' in replacement string")
			}
			d := text[i]
			switch {
			case d == '%':
				b.WriteByte('%')
			case d == '0':
				b.WriteString(whole)
			case '1' <= d && d <= '9':
				t, pos, isPos, err := m.Capture(int(d-'1'), s, e)
				if err != nil {
					raisePattern(L, err)
				}
				if isPos {
					b.WriteString(ccformat.FormatNumber(float64(pos)))
				} else {
					b.WriteString(t)
				}
			default:
				luakit.RaiseMessage(L, "invalid use of '%' in replacement string")
			}
		}
		return
	case *lua.LTable:
		key := firstCapture(L, m, s, e)
		value = L.GetTable(r, key)
	case *lua.LFunction:
		L.Push(r)
		n := pushCaptures(L, m, s, e, true)
		L.Call(n, 1)
		value = L.Get(-1)
		L.Pop(1)
	}
	switch v := value.(type) {
	case *lua.LNilType:
		b.WriteString(whole)
	case lua.LBool:
		if v {
			luakit.RaiseMessage(L, "invalid replacement value (a boolean)")
		}
		b.WriteString(whole)
	case lua.LString:
		b.WriteString(string(v))
	case lua.LNumber:
		b.WriteString(ccformat.FormatNumber(float64(v)))
	default:
		luakit.Raise(L, "invalid replacement value (a %s)", value.Type().String())
	}
}

func firstCapture(L *lua.LState, m *luapattern.Matcher, s, e int) lua.LValue {
	text, pos, isPos, err := m.Capture(0, s, e)
	if err != nil {
		raisePattern(L, err)
	}
	if isPos {
		return lua.LNumber(pos)
	}
	return lua.LString(text)
}
