package textutils

import (
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

// urlEncode is textutils.urlEncode(s): newlines become CRLF, spaces "+", ASCII letters,
// digits and - _ . stay, other ASCII bytes become %XX (uppercase hex), and a byte ≥ 0x80
// is taken as a Latin-1 character and written as its two UTF-8 bytes, each %XX.
func urlEncode(L *lua.LState) int {
	s := string(luakit.Expect(L, 1, "string").(lua.LString))
	var b strings.Builder
	pct := func(c byte) {
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xF])
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n':
			b.WriteString("%0D%0A")
		case c == ' ':
			b.WriteByte('+')
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '-', c == '_', c == '.':
			b.WriteByte(c)
		case c >= 0x80:
			pct(0xC0 | c>>6)
			pct(0x80 | c&0x3F)
		default:
			pct(c)
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}
