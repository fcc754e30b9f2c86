package textutils

import (
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
	"fakecraft/luakit"
)

// maxJSONArrayLength bounds the array serializeJSON writes for a table whose largest
// positive numeric key is N: CC writes t[1]..t[N] with null for holes, so {[1e15]=1} would
// otherwise be a petabyte of "null,". CC itself would run into its 7 s yield timeout;
// fakecraft raises jsonArrayTooLong instead.
const maxJSONArrayLength = 1 << 22

// jsonArrayTooLong is fakecraft's own error for the case above (CC has none).
const jsonArrayTooLong = "Cannot serialize sparse array: largest index is too large"

// errInvalidUTF8 is what utf8.codes raises in CC when unicode_strings meets bad UTF-8.
const errInvalidUTF8 = "invalid UTF-8 code"

const hexDigits = "0123456789ABCDEF"

// jsonEncoder writes textutils.serializeJSON output.
type jsonEncoder struct {
	a       *api
	tr      *tracker
	nbt     bool
	unicode bool
	b       strings.Builder
}

// serializeJSON is textutils.serializeJSON(value [, opts | nbt_style]).
func (a *api) serializeJSON(L *lua.LState) int {
	v := luakit.Expect(L, 1, "table", "string", "number", "boolean")
	e := &jsonEncoder{a: a}
	allowRepeats := false
	switch o := luakit.Expect(L, 2, "table", "boolean", "nil").(type) {
	case lua.LBool:
		e.nbt = bool(o)
	case *lua.LTable:
		e.nbt = optBool(L, o, "nbt_style", false)
		e.unicode = optBool(L, o, "unicode_strings", false)
		allowRepeats = optBool(L, o, "allow_repetitions", false)
	}
	e.tr = newTracker(L, allowRepeats, jsonDepth(L), atCCLine(lineJSONOverflow, errTooDeep))
	e.value(v)
	L.Push(lua.LString(e.b.String()))
	return 1
}

func (e *jsonEncoder) value(v lua.LValue) {
	switch v := v.(type) {
	case *lua.LTable:
		e.table(v)
	case lua.LString:
		e.str(string(v))
	case lua.LNumber:
		// Deliberately FormatNumber: CC writes nan, inf and -inf raw (invalid JSON).
		e.b.WriteString(ccformat.FormatNumber(float64(v)))
	case lua.LBool:
		e.b.WriteString(v.String())
	case *lua.LNilType:
		e.b.WriteString("null")
	default:
		luakit.RaiseBare(e.tr.L, "Cannot serialize type "+v.Type().String())
	}
}

func (e *jsonEncoder) table(t *lua.LTable) {
	switch t {
	case e.a.emptyArray:
		e.b.WriteString("[]")
		return
	case e.a.jsonNull:
		e.b.WriteString("null")
		return
	}
	L := e.tr.L
	e.tr.enter(t)
	defer e.tr.leave(t)

	// Object members are written straight away, in pairs order (so their errors and
	// repeats surface in that order); numeric keys only record the largest index, and the
	// array values are read afterwards. As in CC they are serialised even when a string key
	// made the table an object, which then drops them: their errors and repeats still raise.
	objEmpty := true
	largest := 0.0
	forEachPair(L, t, func(k, v lua.LValue) {
		switch k := k.(type) {
		case lua.LString:
			if objEmpty {
				e.b.WriteByte('{')
				objEmpty = false
			} else {
				e.b.WriteByte(',')
			}
			if e.nbt {
				e.b.WriteString(string(k))
			} else {
				e.keyOnTheLastLevel()
				e.str(string(k))
			}
			e.b.WriteByte(':')
			e.value(v)
		case lua.LNumber:
			if f := float64(k); f > largest {
				largest = f
			}
		}
	})
	if largest >= 1 && largest > maxJSONArrayLength {
		luakit.RaiseBare(L, jsonArrayTooLong)
	}
	switch {
	case !objEmpty:
		e.b.WriteByte('}')
		dropped := &jsonEncoder{a: e.a, tr: e.tr, nbt: e.nbt, unicode: e.unicode}
		for i := 1; i <= int(largest); i++ {
			dropped.value(L.GetTable(t, lua.LNumber(i)))
		}
	case largest >= 1:
		n := int(largest)
		e.b.WriteByte('[')
		for i := 1; i <= n; i++ {
			if i > 1 {
				e.b.WriteByte(',')
			}
			e.value(L.GetTable(t, lua.LNumber(i)))
		}
		e.b.WriteByte(']')
	default:
		// Empty, or only keys that JSON cannot hold (≤ 0, fractions below 1, booleans,
		// tables): an empty object, never [].
		e.b.WriteString("{}")
	}
}

// keyOnTheLastLevel raises CC's stack overflow where a string key is written on the last
// level the stack holds: CC's writer calls serializeJSONString for it, whose string
// functions are a call deeper than anything else of the level, so the stack overflows there
// (at its s:find with unicode_strings, else at its gsub) before the writer goes a level
// down.
func (e *jsonEncoder) keyOnTheLastLevel() {
	if e.tr.depth < e.tr.maxDepth {
		return
	}
	line := lineJSONKeyOverflow
	if e.unicode {
		line = lineJSONUnicodeKeyOverflow
	}
	luakit.RaiseBare(e.tr.L, atCCLine(line, errTooDeep))
}

// str writes a JSON string. By default every byte is its own character (Latin-1): bytes
// 0x7F-0xFF become \u00XX one by one. With unicode_strings a string holding any byte
// ≥ 0x80 is decoded as UTF-8 and code points ≥ 0x7F become \uXXXX (surrogate pairs above
// the BMP).
func (e *jsonEncoder) str(s string) {
	e.b.WriteByte('"')
	if e.unicode && hasHighByte(s) {
		for i := 0; i < len(s); {
			r, size := decodeLuaUTF8(s[i:])
			if size == 0 {
				luakit.RaiseBare(e.tr.L, atCCLine(lineJSONInvalidUTF8, errInvalidUTF8))
			}
			i += size
			switch {
			case r < 0x7F:
				e.asciiByte(byte(r))
			case r < 0x10000:
				e.u4(r)
			default:
				r -= 0x10000
				e.u4(0xD800 + (r >> 10))
				e.u4(0xDC00 + (r & 0x3FF))
			}
		}
	} else {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c >= 0x7F {
				e.u4(rune(c))
			} else {
				e.asciiByte(c)
			}
		}
	}
	e.b.WriteByte('"')
}

// asciiByte writes one byte below 0x7F with JSON's escapes.
func (e *jsonEncoder) asciiByte(c byte) {
	switch c {
	case '"':
		e.b.WriteString(`\"`)
	case '\\':
		e.b.WriteString(`\\`)
	case '\b':
		e.b.WriteString(`\b`)
	case '\f':
		e.b.WriteString(`\f`)
	case '\n':
		e.b.WriteString(`\n`)
	case '\r':
		e.b.WriteString(`\r`)
	case '\t':
		e.b.WriteString(`\t`)
	default:
		if c < 0x20 {
			e.u4(rune(c))
		} else {
			e.b.WriteByte(c)
		}
	}
}

// u4 writes \uXXXX with uppercase hex.
func (e *jsonEncoder) u4(r rune) {
	e.b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		e.b.WriteByte(hexDigits[(r>>shift)&0xF])
	}
}

func hasHighByte(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// decodeLuaUTF8 decodes one UTF-8 sequence as Lua's utf8 library does: like Go's decoder,
// but encoded surrogates (ED A0 80..ED BF BF) are accepted, since utf8.char writes them.
// It returns size 0 for an invalid sequence.
func decodeLuaUTF8(s string) (rune, int) {
	r, size := utf8.DecodeRuneInString(s)
	if r != utf8.RuneError || size > 1 {
		return r, size
	}
	if len(s) >= 3 && s[0] == 0xED && s[1] >= 0xA0 && s[1] <= 0xBF && s[2] >= 0x80 && s[2] <= 0xBF {
		return rune(0xD000) | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F), 3
	}
	return 0, 0
}

// forEachPair calls fn for each key and value as pairs(t) yields them, honouring a
// __pairs metamethod as CC's pairs does.
func forEachPair(L *lua.LState, t *lua.LTable, fn func(k, v lua.LValue)) {
	mm := L.GetMetaField(t, "__pairs")
	if mm == lua.LNil {
		for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
			fn(k, v)
		}
		return
	}
	L.Push(mm)
	L.Push(t)
	L.Call(1, 3)
	iter, state, ctl := L.Get(-3), L.Get(-2), L.Get(-1)
	L.Pop(3)
	for {
		L.Push(iter)
		L.Push(state)
		L.Push(ctl)
		L.Call(2, 2)
		k, v := L.Get(-2), L.Get(-1)
		L.Pop(2)
		if k == lua.LNil {
			return
		}
		fn(k, v)
		ctl = k
	}
}
