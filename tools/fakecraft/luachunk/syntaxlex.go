package luachunk

import (
	"fmt"
	"strings"

	"fakecraft/ccformat"
)

// The lexer half of the Lua 5.2 syntax checker (syntax.go): it reads tokens the way Lua's
// llex.c does, so that error messages name the same token, with the same text, on the
// same line.

// Token kinds past the single characters, which stand for themselves.
const (
	tokEOS = 256 + iota
	tokName
	tokNumber
	tokString
	tokConcat // ..
	tokDots   // ...
	tokEq     // ==
	tokGe     // >=
	tokLe     // <=
	tokNe     // ~=
	tokDbColon
	tokReserved // first reserved word; reservedWords[k-tokReserved]
)

var reservedWords = []string{
	"and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
	"in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
}

var reservedKind = func() map[string]int {
	m := make(map[string]int, len(reservedWords))
	for i, w := range reservedWords {
		m[w] = tokReserved + i
	}
	return m
}()

func reserved(word string) int { return reservedKind[word] }

// token is one token: its kind, its text as Lua's messages quote it, and the line the
// lexer was on after reading it (Lua's ls->linenumber).
type token struct {
	kind int
	text string
	line int
}

// lexError is a message Lua's lexer or parser raises: "message near token" at line.
type lexError struct {
	line    int
	msg     string
	tooDeep bool // past maxSyntaxLevels
}

// kindName is luaX_token2str: reserved words and symbols quoted, the token classes not.
func kindName(kind int) string {
	switch {
	case kind >= tokReserved:
		return "'" + reservedWords[kind-tokReserved] + "'"
	case kind < 256:
		if kind < ' ' || kind > '~' {
			return fmt.Sprintf("char(%d)", kind)
		}
		return "'" + string(rune(kind)) + "'"
	}
	switch kind {
	case tokConcat:
		return "'..'"
	case tokDots:
		return "'...'"
	case tokEq:
		return "'=='"
	case tokGe:
		return "'>='"
	case tokLe:
		return "'<='"
	case tokNe:
		return "'~='"
	case tokDbColon:
		return "'::'"
	case tokEOS:
		return "<eof>"
	case tokName:
		return "<name>"
	case tokNumber:
		return "<number>"
	}
	return "<string>"
}

// nearText is txtToken: a name, number or string is quoted as written, anything else by
// its kind.
func nearText(t token) string {
	switch t.kind {
	case tokName, tokNumber, tokString:
		return "'" + t.text + "'"
	}
	return kindName(t.kind)
}

type lexer struct {
	src  string
	pos  int
	line int
	buf  strings.Builder // the current token's text, as Lua's ls->buff
}

const eoz = -1

func (lx *lexer) current() int {
	if lx.pos >= len(lx.src) {
		return eoz
	}
	return int(lx.src[lx.pos])
}

func (lx *lexer) next() { lx.pos++ }

func (lx *lexer) saveAndNext() {
	lx.buf.WriteByte(lx.src[lx.pos])
	lx.pos++
}

func isNewline(c int) bool { return c == '\n' || c == '\r' }
func isDigit(c int) bool   { return c >= '0' && c <= '9' }
func isXDigit(c int) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
func isAlpha(c int) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isAlnum(c int) bool { return isAlpha(c) || isDigit(c) }

// newline skips "\n", "\r", "\n\r" or "\r\n" and counts one line.
func (lx *lexer) newline() {
	old := lx.current()
	lx.next()
	if c := lx.current(); isNewline(c) && c != old {
		lx.next()
	}
	lx.line++
}

// fail raises a lexer error near the token being read: its text so far, or <eof>.
func (lx *lexer) fail(msg string, kind int) {
	near := kindName(kind)
	if kind == tokString || kind == tokNumber || kind == tokName {
		near = "'" + lx.buf.String() + "'"
	}
	panic(lexError{line: lx.line, msg: msg + " near " + near})
}

// scan reads the next token.
func (lx *lexer) scan() token {
	lx.buf.Reset()
	for {
		c := lx.current()
		switch {
		case c == eoz:
			return token{kind: tokEOS, line: lx.line}
		case isNewline(c):
			lx.newline()
		case c == ' ' || c == '\f' || c == '\t' || c == '\v':
			lx.next()
		case c == '-':
			lx.next()
			if lx.current() != '-' {
				return lx.tok('-')
			}
			lx.next()
			if lx.current() == '[' {
				if sep := lx.skipSep(); sep >= 0 {
					lx.longString(sep, false)
					lx.buf.Reset()
					continue
				}
			}
			lx.buf.Reset()
			for c := lx.current(); c != eoz && !isNewline(c); c = lx.current() {
				lx.next()
			}
		case c == '[':
			sep := lx.skipSep()
			if sep >= 0 {
				lx.longString(sep, true)
				return lx.text(tokString)
			}
			if sep == -1 {
				return lx.tok('[')
			}
			lx.fail("invalid long string delimiter", tokString)
		case c == '=':
			return lx.twoChar('=', '=', tokEq)
		case c == '<':
			return lx.twoChar('<', '=', tokLe)
		case c == '>':
			return lx.twoChar('>', '=', tokGe)
		case c == '~':
			return lx.twoChar('~', '=', tokNe)
		case c == ':':
			return lx.twoChar(':', ':', tokDbColon)
		case c == '"' || c == '\'':
			lx.readString(c)
			return lx.text(tokString)
		case c == '.':
			lx.saveAndNext()
			if lx.current() == '.' {
				lx.saveAndNext()
				if lx.current() == '.' {
					lx.saveAndNext()
					return lx.tok(tokDots)
				}
				return lx.tok(tokConcat)
			}
			if !isDigit(lx.current()) {
				return lx.tok('.')
			}
			lx.readNumeral()
			return lx.text(tokNumber)
		case isDigit(c):
			lx.readNumeral()
			return lx.text(tokNumber)
		case isAlpha(c):
			for isAlnum(lx.current()) {
				lx.saveAndNext()
			}
			if k := reserved(lx.buf.String()); k != 0 {
				return lx.tok(k)
			}
			return lx.text(tokName)
		default:
			lx.next()
			return lx.tok(c)
		}
	}
}

func (lx *lexer) tok(kind int) token { return token{kind: kind, line: lx.line} }

func (lx *lexer) text(kind int) token {
	return token{kind: kind, text: lx.buf.String(), line: lx.line}
}

func (lx *lexer) twoChar(first, second, kind int) token {
	lx.next()
	if lx.current() != second {
		return lx.tok(first)
	}
	lx.next()
	return lx.tok(kind)
}

// skipSep reads "[" or "]" and the "=" after it: the count of "=" when the same bracket
// follows, else -count-1.
func (lx *lexer) skipSep() int {
	s := lx.current()
	lx.saveAndNext()
	count := 0
	for lx.current() == '=' {
		lx.saveAndNext()
		count++
	}
	if lx.current() == s {
		return count
	}
	return -count - 1
}

func (lx *lexer) longString(sep int, isString bool) {
	line := lx.line  // Cobalt names the line it started at
	lx.saveAndNext() // the second [
	if isNewline(lx.current()) {
		lx.newline()
	}
	for {
		switch c := lx.current(); {
		case c == eoz:
			kind := "comment"
			if isString {
				kind = "string"
			}
			lx.fail(fmt.Sprintf("unfinished long %s (started at line %d)", kind, line), tokEOS)
		case c == ']':
			if lx.skipSep() == sep {
				lx.saveAndNext()
				return
			}
		case isNewline(c):
			lx.buf.WriteByte('\n')
			lx.newline()
		default:
			lx.saveAndNext()
		}
	}
}

// readNumeral reads as liberally as Lua does and then checks the text as luaO_str2d would.
func (lx *lexer) readNumeral() {
	expo := "Ee"
	first := lx.current()
	lx.saveAndNext()
	if first == '0' && (lx.current() == 'x' || lx.current() == 'X') {
		lx.saveAndNext()
		expo = "Pp"
	}
	for {
		if c := lx.current(); c != eoz && strings.IndexByte(expo, byte(c)) >= 0 {
			lx.saveAndNext()
			if c := lx.current(); c == '+' || c == '-' {
				lx.saveAndNext()
			}
		}
		if c := lx.current(); isXDigit(c) || c == '.' {
			lx.saveAndNext()
		} else {
			break
		}
	}
	if !validNumber(lx.buf.String()) {
		lx.fail("malformed number", tokNumber)
	}
}

// validNumber is whether Cobalt converts a numeral's text (ccformat.ParseNumber): decimal
// with an optional fraction and exponent, or hexadecimal with an optional fraction and
// binary exponent.
func validNumber(text string) bool {
	_, ok := ccformat.ParseNumber(text, 10)
	return ok
}

// escapeFail fails on a bad escape as Cobalt's lexer does: near the string so far, its
// opening quote included, then the backslash and what the escape read, the offending
// character last (none at the end of the chunk). For the chunk return 'ab\300' the near
// text is 'ab\300' with its closing quote, the character the escape stopped at.
func (lx *lexer) escapeFail(msg string, read string) {
	lx.buf.WriteString("\\" + read)
	lx.fail(msg, tokString)
}

func (lx *lexer) readString(del int) {
	lx.saveAndNext()
	for lx.current() != del {
		switch c := lx.current(); {
		case c == eoz:
			lx.fail("unfinished string", tokEOS)
		case isNewline(c):
			lx.fail("unfinished string", tokString)
		case c == '\\':
			lx.next()
			lx.readEscape()
		default:
			lx.saveAndNext()
		}
	}
	lx.saveAndNext()
}

var simpleEscapes = map[int]byte{
	'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v',
	'\\': '\\', '"': '"', '\'': '\'',
}

func (lx *lexer) readEscape() {
	c := lx.current()
	if b, ok := simpleEscapes[c]; ok {
		lx.next()
		lx.buf.WriteByte(b)
		return
	}
	switch {
	case c == eoz:
		return // "unfinished string" comes next
	case isNewline(c):
		lx.newline()
		lx.buf.WriteByte('\n')
	case c == 'x':
		read := "x"
		v := 0
		for i := 0; i < 2; i++ {
			lx.next()
			d := lx.current()
			read += printable(d)
			if !isXDigit(d) {
				lx.escapeFail("hexadecimal digit expected", read)
			}
			v = v*16 + hexValue(d)
		}
		lx.next()
		lx.buf.WriteByte(byte(v))
	case c == 'z':
		lx.next()
		for c := lx.current(); c == ' ' || c == '\f' || c == '\t' || c == '\v' || isNewline(c); c = lx.current() {
			if isNewline(c) {
				lx.newline()
			} else {
				lx.next()
			}
		}
	case c == 'u':
		lx.readUTF8Escape()
	case isDigit(c):
		read, v := "", 0
		for i := 0; i < 3 && isDigit(lx.current()); i++ {
			read += string(rune(lx.current()))
			v = v*10 + lx.current() - '0'
			lx.next()
		}
		if v > 255 {
			lx.escapeFail("escape sequence too large", read+printable(lx.current()))
		}
		lx.buf.WriteByte(byte(v))
	default:
		// Cobalt takes any other escaped character as itself ("\q" is "q"), where Lua 5.2
		// says "invalid escape sequence".
		lx.next()
		lx.buf.WriteByte(byte(c))
	}
}

// maxUnicode is the largest code point a \u{XXX} escape may name in Cobalt
// (Utf8Lib.MAX_UNICODE), where Lua 5.3 takes up to 2^31 - 1.
const maxUnicode = 0x10FFFF

// readUTF8Escape reads Lua 5.3's \u{XXX}, which CC's Cobalt also reads.
func (lx *lexer) readUTF8Escape() {
	read := "u"
	lx.next()
	if lx.current() != '{' {
		lx.escapeFail("missing '{'", read+printable(lx.current()))
	}
	read += "{"
	lx.next()
	v, n := 0, 0
	for isXDigit(lx.current()) {
		read += string(rune(lx.current()))
		v = v*16 + hexValue(lx.current())
		n++
		if v > maxUnicode {
			lx.escapeFail("UTF-8 value too large", read)
		}
		lx.next()
	}
	if n == 0 {
		lx.escapeFail("hexadecimal digit expected", read+printable(lx.current()))
	}
	if lx.current() != '}' {
		lx.escapeFail("missing '}'", read+printable(lx.current()))
	}
	lx.next()
	lx.buf.WriteString("?") // the value's bytes do not matter to the checker
}

// printable is the character c as an error's near text shows it: its byte, none at the end.
func printable(c int) string {
	if c == eoz {
		return ""
	}
	return string([]byte{byte(c)})
}

func hexValue(c int) int {
	switch {
	case isDigit(c):
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
