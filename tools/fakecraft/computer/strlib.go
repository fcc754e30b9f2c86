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
// computer's "Too long without yielding" instead of hanging the computer. The computer then
// installs a gsub whose replacement function may yield (gsubyield.go).
func installPatterns(L *lua.LState) {
	str := L.GetGlobal("string").(*lua.LTable)
	str.RawSetString("find", L.NewFunction(func(L *lua.LState) int { return strFind(L, true) }))
	str.RawSetString("match", L.NewFunction(func(L *lua.LState) int { return strFind(L, false) }))
	str.RawSetString("gmatch", L.NewFunction(strGmatch))
	str.RawSetString("gsub", L.NewFunction(func(L *lua.LState) int { return strGsub(L, nil) }))
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
		L.Error(lua.LString(abortMessage(L)), 0)
	}
	luakit.RaiseMessage(L, err.Error())
}

// startIndex is init as Cobalt's str_find_aux reads it: negative counts from the end,
// clipped at 1 and at the end (length + 1), as Lua 5.1 clips it; Lua 5.2 answers nil for an
// init past the end, Cobalt searches at the end (("").find("", 10) is 1, 0).
func startIndex(init, length int) int {
	if init < 0 {
		init = length + init + 1
	}
	return max(1, min(init, length+1))
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

// gsubLoop is string.gsub's walk over its subject: the matches found, the text between
// them copied, the replacements appended. strGsub runs it to the end in one go; a function
// replacement that may yield runs it in steps (gsubyield.go).
type gsubLoop struct {
	m      luapattern.Matcher // a value: on strGsub's stack, not the heap
	src    string
	p      int  // where the pattern starts: 1 after a '^'
	anchor bool // only one match is tried, at the start
	maxN   int
	b      strings.Builder
	s      int  // where the next match is tried
	e      int  // the end of the match being replaced
	n      int  // matches so far
	over   bool // nothing is left to try
}

// init checks gsub's arguments (string, pattern, count) as Cobalt does and returns the
// replacement, whose type is checked at the first match (addValue).
func (g *gsubLoop) init(L *lua.LState) lua.LValue {
	src := luakit.CheckString(L, 1)
	pat := luakit.CheckString(L, 2)
	repl := L.Get(3)
	g.src, g.maxN = src, luakit.OptInteger(L, 4, len(src)+1)
	if len(pat) > 0 && pat[0] == '^' {
		g.anchor, g.p = true, 1
	}
	g.m = *luapattern.New(src, pat, stopper(L))
	return repl
}

// find moves to the next match, copying the text it passes over; false when no match is
// left. The match is [g.s, g.e); its replacement is appended, then next is called.
func (g *gsubLoop) find() (bool, error) {
	for !g.over && g.n < g.maxN {
		e, err := g.m.Match(g.s, g.p)
		if err != nil {
			return false, err
		}
		if e >= 0 {
			g.n++
			g.e = e
			return true, nil
		}
		g.advance(e)
	}
	return false, nil
}

// next moves past the match that was just replaced.
func (g *gsubLoop) next() { g.advance(g.e) }

// advance moves past a match ending at e, or (e < 0, or an empty match) one character.
func (g *gsubLoop) advance(e int) {
	switch {
	case e > g.s:
		g.s = e
	case g.s < len(g.src):
		g.b.WriteByte(g.src[g.s])
		g.s++
	default:
		g.over = true
		return
	}
	if g.anchor {
		g.over = true
	}
}

// pushCaptures pushes the current match's captures, the whole match when it has none: the
// arguments of a function replacement.
func (g *gsubLoop) pushCaptures(L *lua.LState) error {
	for i := range max(g.m.Level(), 1) {
		text, pos, isPos, err := g.m.Capture(i, g.s, g.e)
		if err != nil {
			return err
		}
		if isPos {
			L.Push(lua.LNumber(pos))
		} else {
			L.Push(lua.LString(text))
		}
	}
	return nil
}

// results are gsub's two results: the new string and the number of matches.
func (g *gsubLoop) results() (lua.LString, lua.LNumber) {
	g.b.WriteString(g.src[min(g.s, len(g.src)):])
	return lua.LString(g.b.String()), lua.LNumber(g.n)
}

// strGsub is string.gsub. A function replacement is called from Go, where a yield is
// refused (boundary.go), unless yields (the computer's, may be nil) can run it in a helper
// coroutine.
func strGsub(L *lua.LState, yields *gsubYields) int {
	var g gsubLoop
	repl := g.init(L)
	if fn, ok := repl.(*lua.LFunction); ok && yields.canYield(L) {
		return yields.gsub(L, g, fn)
	}
	for {
		found, err := g.find()
		if err != nil {
			raisePattern(L, err)
		}
		if !found {
			break
		}
		addValue(L, &g.b, &g.m, g.s, g.e, repl)
		g.next()
	}
	text, n := g.results()
	L.Push(text)
	L.Push(n)
	return 2
}

// addValue appends the replacement of the match [s, e) by a string, number or table.
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
		value = L.GetTable(r, firstCapture(L, m, s, e))
	case *lua.LFunction:
		L.Push(r)
		n := pushCaptures(L, m, s, e, true)
		// A library function fires its call and return here too, as under Cobalt's Dispatch.
		L.CallFiringHooks(n, 1)
		value = L.Get(-1)
		L.Pop(1)
	default:
		// Cobalt's own wording, and only once something matched: string.gsub("b", "a", true)
		// is "b", 0.
		luakit.RaiseMessage(L, "bad argument: string/function/table expected")
	}
	if msg := appendResult(b, whole, value); msg != "" {
		luakit.RaiseMessage(L, msg)
	}
}

// appendResult appends what a table or function replacement answered for a match: the
// match itself (whole) for nil or false, a string or number as text. Anything else is an
// error, whose message it returns.
func appendResult(b *strings.Builder, whole string, value lua.LValue) string {
	switch v := value.(type) {
	case *lua.LNilType:
		b.WriteString(whole)
	case lua.LBool:
		if v {
			return "invalid replacement value (a boolean)"
		}
		b.WriteString(whole)
	case lua.LString:
		b.WriteString(string(v))
	case lua.LNumber:
		b.WriteString(ccformat.FormatNumber(float64(v)))
	default:
		return "invalid replacement value (a " + value.Type().String() + ")"
	}
	return ""
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
