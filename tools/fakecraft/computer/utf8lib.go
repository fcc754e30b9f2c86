package computer

import (
	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

// maxUnicode is the largest code point the utf8 library reads or writes (Cobalt's
// Utf8Lib.MAX_UNICODE).
const maxUnicode = 0x10FFFF

// utf8CharPattern matches one UTF-8 sequence, lead byte and continuation bytes
// (utf8.charpattern).
const utf8CharPattern = "[\x00-\x7F\xC2-\xF4][\x80-\xBF]*"

// utf8Limits are the largest code point a sequence of 1 to 4 bytes may not hold: anything at
// or below is an overlong encoding (index 0 refuses a lone continuation byte).
var utf8Limits = [...]int{0xFF, 0x7F, 0x7FF, 0xFFFF}

// installUTF8 sets the global utf8: Lua 5.3's library as CC's Cobalt 0.9.4 has it in its
// VM (Utf8Lib, read from its source and run), not as a ROM file. Its rules where Lua 5.3's
// manual leaves room: encoded surrogates (ED A0 80) are code points, a position outside the
// string is "out of bounds", and utf8.codes returns the same iterator every time.
func installUTF8(L *lua.LState) {
	t := L.NewTable()
	codesIter := L.NewFunction(utf8CodesIter)
	t.RawSetString("char", L.NewFunction(utf8Char))
	t.RawSetString("charpattern", lua.LString(utf8CharPattern))
	t.RawSetString("codepoint", L.NewFunction(utf8Codepoint))
	t.RawSetString("codes", L.NewFunction(func(L *lua.LState) int {
		s := luakit.CheckString(L, 1)
		L.Push(codesIter)
		L.Push(lua.LString(s))
		L.Push(lua.LNumber(0))
		return 3
	}))
	t.RawSetString("len", L.NewFunction(utf8Len))
	t.RawSetString("offset", L.NewFunction(utf8Offset))
	L.SetGlobal("utf8", t)
}

// decodeUTF8 reads the sequence at byte i (0-based) of s as Cobalt's decodeUtf8 does: its
// code point and length, or -1 for a sequence cut short, an overlong one, one past
// U+10FFFF or of more than four bytes. Surrogates are taken.
func decodeUTF8(s string, i int) (code, size int) {
	first := int(s[i])
	if first < 0x80 {
		return first, 1
	}
	count, code := 0, 0
	for ; first&0x40 != 0; first <<= 1 {
		i++
		if i >= len(s) || s[i]&0xC0 != 0x80 {
			return -1, 0
		}
		count++
		code = code<<6 | int(s[i]&0x3F)
	}
	code |= (first & 0x7F) << (count * 5)
	if count > 3 || code > maxUnicode || code <= utf8Limits[count] {
		return -1, 0
	}
	return code, count + 1
}

// isContinuation says whether byte i of s is a continuation byte (10xxxxxx); false past the
// end.
func isContinuation(s string, i int) bool {
	return i < len(s) && s[i]&0xC0 == 0x80
}

// relativePosition is a position counted from the end when negative, as Cobalt's
// posRelative: -1 is the last byte, and a position before the first stays below 1.
func relativePosition(pos, length int) int {
	if pos >= 0 {
		return pos
	}
	return length + pos + 1
}

// utf8Char is utf8.char(...): each code point's UTF-8, surrogates included.
func utf8Char(L *lua.LState) int {
	var out []byte
	for i := 1; i <= L.GetTop(); i++ {
		code := luakit.CheckInteger(L, i)
		if code < 0 || code > maxUnicode {
			luakit.BadArgumentReason(L, i, "value out of range")
		}
		out = appendUTF8(out, code)
	}
	L.Push(lua.LString(out))
	return 1
}

// appendUTF8 appends code's UTF-8 to b; unlike Go's encoder it writes a surrogate's three
// bytes, as Cobalt's buildCharacter does.
func appendUTF8(b []byte, code int) []byte {
	switch {
	case code < 0x80:
		return append(b, byte(code))
	case code < 0x800:
		return append(b, byte(0xC0|code>>6), byte(0x80|code&0x3F))
	case code < 0x10000:
		return append(b, byte(0xE0|code>>12), byte(0x80|code>>6&0x3F), byte(0x80|code&0x3F))
	}
	return append(b, byte(0xF0|code>>18), byte(0x80|code>>12&0x3F), byte(0x80|code>>6&0x3F), byte(0x80|code&0x3F))
}

// utf8Codepoint is utf8.codepoint(s [, i [, j]]): the code points of the sequences starting
// from byte i to byte j (j defaults to i).
func utf8Codepoint(L *lua.LState) int {
	s := luakit.CheckString(L, 1)
	i := relativePosition(luakit.OptInteger(L, 2, 1), len(s))
	j := relativePosition(luakit.OptInteger(L, 3, i), len(s))
	if i < 1 {
		luakit.BadArgumentReason(L, 2, "out of bounds")
	}
	if j > len(s) {
		luakit.BadArgumentReason(L, 3, "out of bounds")
	}
	n := 0
	for ; i <= j; n++ {
		code, size := decodeUTF8(s, i-1)
		if code < 0 {
			luakit.RaiseMessage(L, "invalid UTF-8 code")
		}
		L.Push(lua.LNumber(code))
		i += size
	}
	return n
}

// utf8Len is utf8.len(s [, i [, j]]): how many sequences start between bytes i and j, or
// nil and the position of the first invalid one.
func utf8Len(L *lua.LState) int {
	s := luakit.CheckString(L, 1)
	i := relativePosition(luakit.OptInteger(L, 2, 1), len(s)) - 1
	j := relativePosition(luakit.OptInteger(L, 3, -1), len(s)) - 1
	if i < 0 || i > len(s) {
		luakit.BadArgumentReason(L, 2, "initial position out of string")
	}
	if j >= len(s) {
		luakit.BadArgumentReason(L, 3, "final position out of string")
	}
	n := 0
	for ; i <= j; n++ {
		code, size := decodeUTF8(s, i)
		if code < 0 {
			L.Push(lua.LNil)
			L.Push(lua.LNumber(i + 1))
			return 2
		}
		i += size
	}
	L.Push(lua.LNumber(n))
	return 1
}

// utf8Offset is utf8.offset(s, n [, i]): where the n-th sequence counted from byte i
// starts (n 0: the start of the sequence holding byte i), or nil.
func utf8Offset(L *lua.LState) int {
	s := luakit.CheckString(L, 1)
	n := luakit.CheckInteger(L, 2)
	start := 1
	if n < 0 {
		start = len(s) + 1
	}
	pos := relativePosition(luakit.OptInteger(L, 3, start), len(s)) - 1
	if pos < 0 || pos > len(s) {
		luakit.BadArgumentReason(L, 3, "position out of bounds")
	}
	switch {
	case n == 0:
		for pos > 0 && isContinuation(s, pos) {
			pos--
		}
	case isContinuation(s, pos):
		luakit.RaiseMessage(L, "initial position is a continuation byte")
	case n < 0:
		for ; n < 0 && pos > 0; n++ {
			pos--
			for pos > 0 && isContinuation(s, pos) {
				pos--
			}
		}
	default:
		for n--; n > 0 && pos < len(s); n-- {
			pos++
			for isContinuation(s, pos) {
				pos++
			}
		}
	}
	if n != 0 {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(lua.LNumber(pos + 1))
	return 1
}

// utf8CodesIter is the iterator utf8.codes returns: from the sequence at byte i (1-based; 0
// before the first) to the next, its position and code point; "invalid UTF-8 code" for a
// bad sequence or one followed by a stray continuation byte.
func utf8CodesIter(L *lua.LState) int {
	s := luakit.CheckString(L, 1)
	i := luakit.CheckInteger(L, 2) - 1
	if i < 0 {
		i = 0
	} else if i < len(s) {
		i++
		for isContinuation(s, i) {
			i++
		}
	}
	if i >= len(s) {
		return 0
	}
	code, size := decodeUTF8(s, i)
	if code < 0 || isContinuation(s, i+size) {
		luakit.RaiseMessage(L, "invalid UTF-8 code")
	}
	L.Push(lua.LNumber(i + 1))
	L.Push(lua.LNumber(code))
	return 2
}
