package textutils

import (
	"errors"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

// malformedPrefix starts every message unserializeJSON returns for bad input.
const malformedPrefix = "Malformed JSON at position "

// parseError is a position (1-based byte offset) and a CC message for malformed JSON.
type parseError struct {
	pos int
	msg string
}

func (e *parseError) Error() string { return malformedPrefix + strconv.Itoa(e.pos) + ": " + e.msg }

// errNestedTooDeep aborts a parse past maxNesting; it is raised, not returned as nil+msg,
// as CC's own stack overflow would be.
var errNestedTooDeep = errors.New(errTooDeep)

// jsonDecoder parses one JSON text into Lua values.
type jsonDecoder struct {
	L          *lua.LState
	a          *api
	s          string
	i          int // 0-based index of the next byte
	depth      int
	nbt        bool
	parseNull  bool
	emptyArray bool // [] gives the shared sentinel rather than a fresh table
}

// unserializeJSON is textutils.unserializeJSON(s [, {nbt_style, parse_null,
// parse_empty_array}]). Malformed input returns nil and a message; a top-level null
// returns a bare nil.
func (a *api) unserializeJSON(L *lua.LState) int {
	s := string(luakit.Expect(L, 1, "string").(lua.LString))
	var opts *lua.LTable
	if o, ok := luakit.Expect(L, 2, "table", "nil").(*lua.LTable); ok {
		opts = o
	}
	d := &jsonDecoder{
		L:          L,
		a:          a,
		s:          s,
		nbt:        optBool(L, opts, "nbt_style", false),
		parseNull:  optBool(L, opts, "parse_null", false),
		emptyArray: optBool(L, opts, "parse_empty_array", true),
	}
	v, err := d.decode()
	if err != nil {
		var pe *parseError
		if errors.As(err, &pe) {
			L.Push(lua.LNil)
			L.Push(lua.LString(pe.Error()))
			return 2
		}
		luakit.RaiseBare(L, err.Error())
	}
	L.Push(v)
	return 1
}

// decode parses the whole input: one value surrounded by optional whitespace.
func (d *jsonDecoder) decode() (lua.LValue, error) {
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.i < len(d.s) {
		return nil, d.fail(d.i, "Unexpected trailing character "+showChar(d.s[d.i])+".")
	}
	return v, nil
}

func (d *jsonDecoder) fail(i int, msg string) error {
	return &parseError{pos: i + 1, msg: msg}
}

func (d *jsonDecoder) eof() error {
	return d.fail(len(d.s), "Unexpected end of input.")
}

// skipSpace skips JSON whitespace: only space, \n, \r and \t.
func (d *jsonDecoder) skipSpace() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\n', '\r', '\t':
			d.i++
		default:
			return
		}
	}
}

// null is what a JSON null becomes: nil, or json_null with parse_null.
func (d *jsonDecoder) null() lua.LValue {
	if d.parseNull {
		return d.a.jsonNull
	}
	return lua.LNil
}

func (d *jsonDecoder) value() (lua.LValue, error) {
	d.skipSpace()
	if d.i >= len(d.s) {
		return nil, d.eof()
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"' || (c == '\'' && d.nbt):
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		return lua.LString(s), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case strings.HasPrefix(d.s[d.i:], "true"):
		d.i += len("true")
		return lua.LTrue, nil
	case strings.HasPrefix(d.s[d.i:], "false"):
		d.i += len("false")
		return lua.LFalse, nil
	case strings.HasPrefix(d.s[d.i:], "null"):
		d.i += len("null")
		return d.null(), nil
	default:
		return nil, d.fail(d.i, "Unexpected character "+showChar(c)+".")
	}
}

// enter counts one level of nesting.
func (d *jsonDecoder) enter() error {
	d.depth++
	if d.depth > maxNesting {
		return errNestedTooDeep
	}
	return nil
}

func (d *jsonDecoder) object() (lua.LValue, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer func() { d.depth-- }()
	d.i++ // {
	t := d.L.NewTable()
	d.skipSpace()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return t, nil
	}
	for {
		d.skipSpace()
		if d.i >= len(d.s) {
			return nil, d.eof()
		}
		var key string
		switch c := d.s[d.i]; {
		case c == '"' || (c == '\'' && d.nbt):
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			key = k
		case d.nbt && isBareKeyChar(c):
			start := d.i
			for d.i < len(d.s) && isBareKeyChar(d.s[d.i]) {
				d.i++
			}
			key = d.s[start:d.i]
		default:
			return nil, d.fail(d.i, "Unexpected "+showChar(c)+", expected object key.")
		}
		if err := d.expectByte(':'); err != nil {
			return nil, err
		}
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		// Duplicate keys: the last wins, and a later null removes an earlier value.
		t.RawSetString(key, v)
		d.skipSpace()
		if d.i >= len(d.s) {
			return nil, d.eof()
		}
		switch c := d.s[d.i]; c {
		case ',':
			d.i++
		case '}':
			d.i++
			return t, nil
		default:
			return nil, d.fail(d.i, "Unexpected character "+showChar(c)+".")
		}
	}
}

func (d *jsonDecoder) expectByte(want byte) error {
	d.skipSpace()
	if d.i >= len(d.s) {
		return d.eof()
	}
	if c := d.s[d.i]; c != want {
		return d.fail(d.i, "Unexpected character "+showChar(c)+".")
	}
	d.i++
	return nil
}

func (d *jsonDecoder) array() (lua.LValue, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer func() { d.depth-- }()
	d.i++ // [
	d.skipSpace()
	// NBT typed arrays: [B;…], [I;…], [L;…].
	if d.nbt && d.i+1 < len(d.s) && strings.IndexByte("BIL", d.s[d.i]) >= 0 && d.s[d.i+1] == ';' {
		d.i += 2
		d.skipSpace()
	}
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		if d.emptyArray {
			return d.a.emptyArray, nil
		}
		return d.L.NewTable(), nil
	}
	t := d.L.NewTable()
	for n := 1; ; n++ {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		if v != lua.LNil {
			t.RawSetInt(n, v) // a null leaves a hole
		}
		d.skipSpace()
		if d.i >= len(d.s) {
			return nil, d.eof()
		}
		switch c := d.s[d.i]; c {
		case ',':
			d.i++
		case ']':
			d.i++
			return t, nil
		default:
			return nil, d.fail(d.i, "Unexpected character "+showChar(c)+".")
		}
	}
}

// number matches a number loosely (-?digits[.digits][e[+-]digits], any part possibly
// empty) and converts it as tonumber does, so 01, 2. and -01 are accepted as CC accepts
// them. nbt_style allows one type suffix letter.
func (d *jsonDecoder) number() (lua.LValue, error) {
	start := d.i
	if d.s[d.i] == '-' {
		d.i++
		if d.i >= len(d.s) || d.s[d.i] < '0' || d.s[d.i] > '9' {
			// CC's reader wants a digit after the sign: -.123 is malformed.
			return nil, d.fail(start, "Malformed number "+showString(d.s[start:d.i])+".")
		}
	}
	d.digits()
	if d.i < len(d.s) && d.s[d.i] == '.' {
		d.i++
		d.digits()
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		d.digits()
	}
	text := d.s[start:d.i]
	if d.nbt && d.i < len(d.s) && strings.IndexByte("bBsSlLfFdD", d.s[d.i]) >= 0 {
		d.i++
	}
	f, ok := luaToNumber(text)
	if !ok {
		return nil, d.fail(start, "Malformed number "+showString(text)+".")
	}
	return lua.LNumber(f), nil
}

func (d *jsonDecoder) digits() {
	for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
		d.i++
	}
}

// luaToNumber is tonumber for the decimal texts number() matches.
func luaToNumber(text string) (float64, bool) {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		var ne *strconv.NumError
		// Out of range still converts, to ±inf or 0, as C's strtod does.
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return f, true
		}
		return 0, false
	}
	return f, true
}

// str parses a string starting at its opening quote (" or, with nbt_style, ').
func (d *jsonDecoder) str() (string, error) {
	quote := d.s[d.i]
	d.i++
	var b strings.Builder
	for {
		if d.i >= len(d.s) {
			return "", d.eof()
		}
		c := d.s[d.i]
		switch {
		case c == quote:
			d.i++
			return b.String(), nil
		case c == '\\':
			d.i++
			if err := d.escape(&b); err != nil {
				return "", err
			}
		case c == '\n' || c == '\r' || c == '\t':
			return "", d.fail(d.i, "Unescaped whitespace "+showChar(c)+".")
		case c < 0x20:
			return "", d.fail(d.i, "Unescaped control character "+showChar(c)+".")
		default:
			b.WriteByte(c) // raw bytes, UTF-8 or not, pass through unchanged
			d.i++
		}
	}
}

// escape decodes the escape whose letter is at d.i.
func (d *jsonDecoder) escape(b *strings.Builder) error {
	if d.i >= len(d.s) {
		return d.eof()
	}
	c := d.s[d.i]
	d.i++
	switch c {
	case '"', '\\', '/':
		b.WriteByte(c)
	case '\'':
		if !d.nbt {
			return d.fail(d.i-1, "Unknown escape character "+showChar(c)+".")
		}
		b.WriteByte(c)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		end := min(d.i+4, len(d.s))
		hex := d.s[d.i:end]
		code, err := strconv.ParseUint(hex, 16, 32)
		if len(hex) < 4 || err != nil {
			return d.fail(d.i, "Malformed unicode escape "+showString(hex)+".")
		}
		d.i = end
		// Each escape on its own: surrogate pairs are not combined.
		appendLuaUTF8(b, rune(code))
	default:
		return d.fail(d.i-1, "Unknown escape character "+showChar(c)+".")
	}
	return nil
}

// appendLuaUTF8 writes utf8.char(r) for r ≤ 0xFFFF: unlike Go's encoder it writes
// surrogate code points as plain 3-byte sequences.
func appendLuaUTF8(b *strings.Builder, r rune) {
	switch {
	case r < 0x80:
		b.WriteByte(byte(r))
	case r < 0x800:
		b.WriteByte(byte(0xC0 | r>>6))
		b.WriteByte(byte(0x80 | r&0x3F))
	default:
		b.WriteByte(byte(0xE0 | r>>12))
		b.WriteByte(byte(0x80 | (r>>6)&0x3F))
		b.WriteByte(byte(0x80 | r&0x3F))
	}
}

// isBareKeyChar is a character of an unquoted NBT key.
func isBareKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == '+'
}

// showChar quotes one byte for an error message: printable bytes as they are, the
// whitespace controls as \n \r \t, other control bytes as \ddd.
func showChar(c byte) string {
	return `"` + escapeForMessage(string([]byte{c})) + `"`
}

func showString(s string) string {
	return `"` + escapeForMessage(s) + `"`
}

func escapeForMessage(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7F:
			b.WriteByte('\\')
			b.WriteString(strconv.Itoa(int(c)))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
