package textutils

import (
	"errors"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
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

// errNestedTooDeep aborts a parse past maxDepth; it is raised, not returned as nil+msg,
// as CC's own stack overflow would be, at CC's line.
var errNestedTooDeep = errors.New(atCCLine(lineUnserializeOverflow, errTooDeep))

// jsonDecoder parses one JSON text into Lua values.
type jsonDecoder struct {
	L          *lua.LState
	a          *api
	s          string
	i          int // 0-based index of the next byte
	depth      int
	maxDepth   int // jsonDepth
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
		maxDepth:   jsonDepth(L),
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
		// CC's own errors (the NBT key one, a stack overflow) are raised as they are.
		luakit.RaiseBare(L, err.Error())
	}
	L.Push(v)
	return 1
}

// The reader follows CC's textutils.unserialiseJSON step by step, so that what it accepts,
// the position it blames and the message it gives are CC's, quirks included: a control
// character in a string is "Unescaped whitespace" one past it, a bad \u escape is blamed on
// its backslash, a number is whatever `-?%d+%.?%d*[eE]?[+-]?%d*` matches ("1+" is a
// malformed number, and a "-" with no digit after it is "Malformed number nil."), and an
// unquoted NBT key that is no identifier stops CC's reader with a Lua error.

// errNBTKey is the error CC's reader raises for an NBT object key that is neither quoted nor
// an identifier ({1:2}, {'a':1}, a trailing comma): its parse_ident does arithmetic on the
// nil its pattern match gave, and unserialiseJSON re-raises that error as it is.
const errNBTKey = "/rom/apis/textutils.lua:622: attempt to perform arithmetic on local 'last' (a nil value)"

// errNBTKeyRaised carries errNBTKey out of the reader to be raised.
var errNBTKeyRaised = errors.New(errNBTKey)

// decode parses the whole input: one value surrounded by optional whitespace.
func (d *jsonDecoder) decode() (lua.LValue, error) {
	d.skipSpace()
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.i < len(d.s) {
		return nil, d.fail(d.i, "Unexpected trailing character "+quoteChar(d.s[d.i])+".")
	}
	return v, nil
}

// fail is an error at the 0-based index i.
func (d *jsonDecoder) fail(i int, msg string) error {
	return &parseError{pos: i + 1, msg: msg}
}

// expected is CC's "Unexpected X, expected what." at the 0-based index i (X is "end of
// input" past the end).
func (d *jsonDecoder) expected(i int, what string) error {
	actual := "end of input"
	if i < len(d.s) {
		actual = quoteChar(d.s[i])
	}
	return d.fail(i, "Unexpected "+actual+", expected "+what+".")
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

// value reads the value starting at d.i, which the caller has put past any whitespace.
func (d *jsonDecoder) value() (lua.LValue, error) {
	if d.i >= len(d.s) {
		return nil, d.fail(d.i, "Unexpected end of input.")
	}
	rest := d.s[d.i:]
	switch c := rest[0]; {
	case c == '"' || (c == '\'' && d.nbt):
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		return lua.LString(s), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case strings.HasPrefix(rest, "true"):
		d.i += len("true")
		return lua.LTrue, nil
	case strings.HasPrefix(rest, "false"):
		d.i += len("false")
		return lua.LFalse, nil
	case strings.HasPrefix(rest, "null"):
		d.i += len("null")
		return d.null(), nil
	default:
		return nil, d.fail(d.i, "Unexpected character "+quoteChar(c)+".")
	}
}

// enter counts one level of nesting.
func (d *jsonDecoder) enter() error {
	d.depth++
	if d.depth > d.maxDepth {
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
	d.skipSpace()
	t := d.L.NewTable()
	if d.i >= len(d.s) {
		return nil, d.fail(d.i, "Unexpected end of input, expected '}'.")
	}
	if d.s[d.i] == '}' {
		d.i++
		return t, nil
	}
	for {
		var key string
		switch {
		case d.i < len(d.s) && d.s[d.i] == '"':
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			key = k
		case d.nbt:
			k, ok := d.ident()
			if !ok {
				return nil, errNBTKeyRaised
			}
			key = k
		default:
			return nil, d.expected(d.i, "object key")
		}
		d.skipSpace()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return nil, d.expected(d.i, "':'")
		}
		d.i++
		d.skipSpace()
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		// Duplicate keys: the last wins, and a later null removes an earlier value.
		t.RawSetString(key, v)
		d.skipSpace()
		switch {
		case d.i < len(d.s) && d.s[d.i] == '}':
			d.i++
			return t, nil
		case d.i < len(d.s) && d.s[d.i] == ',':
			d.i++
			d.skipSpace()
		default:
			return nil, d.expected(d.i, "',' or '}'")
		}
	}
}

// ident reads an unquoted NBT key: a letter, then letters, digits and underscores.
func (d *jsonDecoder) ident() (string, bool) {
	start := d.i
	if d.i >= len(d.s) || !isASCIILetter(d.s[d.i]) {
		return "", false
	}
	for d.i++; d.i < len(d.s) && (isASCIILetter(d.s[d.i]) || isASCIIDigit(d.s[d.i]) || d.s[d.i] == '_'); d.i++ {
	}
	return d.s[start:d.i], true
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
	if d.i >= len(d.s) {
		return nil, d.expected(d.i, "']'")
	}
	if d.s[d.i] == ']' {
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
		switch {
		case d.i < len(d.s) && d.s[d.i] == ']':
			d.i++
			return t, nil
		case d.i < len(d.s) && d.s[d.i] == ',':
			d.i++
			d.skipSpace()
		default:
			return nil, d.expected(d.i, "',' or ']'")
		}
	}
}

// number reads what CC's pattern -?%d+%.?%d*[eE]?[+-]?%d* matches and converts it as
// tonumber does (ccformat.ParseNumber), so 01, 2. and -01 are numbers and 1e, 1+ are not.
// nbt_style takes one type suffix letter after it.
func (d *jsonDecoder) number() (lua.LValue, error) {
	start := d.i
	j := d.i
	if d.s[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(d.s) && isASCIIDigit(d.s[j]) {
			j++
		}
		return j - k
	}
	if digits() == 0 {
		// The pattern matched nothing, and CC formats the nil it got with %q.
		return nil, d.fail(start, "Malformed number nil.")
	}
	if j < len(d.s) && d.s[j] == '.' {
		j++
	}
	digits()
	if j < len(d.s) && (d.s[j] == 'e' || d.s[j] == 'E') {
		j++
	}
	if j < len(d.s) && (d.s[j] == '+' || d.s[j] == '-') {
		j++
	}
	digits()
	text := d.s[start:j]
	f, ok := ccformat.ParseNumber(text, 10)
	if !ok {
		return nil, d.fail(start, "Malformed number "+ccformat.Quote(text)+".")
	}
	d.i = j
	if d.nbt && d.i < len(d.s) && strings.IndexByte("bBsSlLfFdD", d.s[d.i]) >= 0 {
		d.i++
	}
	return lua.LNumber(f), nil
}

// str reads a string from its opening quote (" or, with nbt_style, ').
func (d *jsonDecoder) str() (string, error) {
	quote := d.s[d.i]
	d.i++
	var b strings.Builder
	for {
		if d.i >= len(d.s) {
			// CC names the double quote whichever quote opened the string.
			return "", d.fail(d.i, `Unexpected end of input, expected '"'.`)
		}
		c := d.s[d.i]
		switch {
		case c == quote:
			d.i++
			return b.String(), nil
		case c == '\\':
			if err := d.escape(&b); err != nil {
				return "", err
			}
		case c >= ' ':
			start := d.i
			for d.i < len(d.s) && d.s[d.i] >= ' ' && d.s[d.i] != quote && d.s[d.i] != '\\' {
				d.i++ // raw bytes, UTF-8 or not, pass through unchanged
			}
			b.WriteString(d.s[start:d.i])
		default:
			return "", d.fail(d.i+1, "Unescaped whitespace "+quoteChar(c)+".")
		}
	}
}

// jsonEscapes are the escapes CC's reader knows besides \u (in NBT strings too: \' is not
// one of them).
var jsonEscapes = map[byte]byte{
	'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', '"': '"', '/': '/', '\\': '\\',
}

// escape decodes the escape whose backslash is at d.i.
func (d *jsonDecoder) escape(b *strings.Builder) error {
	at := d.i
	if at+1 >= len(d.s) {
		return d.fail(at, "Unexpected end of input, expected escape sequence.")
	}
	c := d.s[at+1]
	if c == 'u' {
		hex := d.s[at+2 : min(at+6, len(d.s))]
		if len(hex) < 4 || !allHex(hex) {
			return d.fail(at, "Malformed unicode escape "+ccformat.Quote(hex)+".")
		}
		code, _ := strconv.ParseUint(hex, 16, 32)
		// Each escape on its own: surrogate pairs are not combined.
		appendLuaUTF8(b, rune(code))
		d.i = at + 6
		return nil
	}
	unescaped, ok := jsonEscapes[c]
	if !ok {
		return d.fail(at+1, "Unknown escape character "+quoteChar(c)+".")
	}
	b.WriteByte(unescaped)
	d.i = at + 2
	return nil
}

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isASCIIDigit(c) && (c|0x20 < 'a' || c|0x20 > 'f') {
			return false
		}
	}
	return true
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

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }

// quoteChar is %q of one byte, as CC's messages show the character they stopped at.
func quoteChar(c byte) string { return ccformat.Quote(string([]byte{c})) }
