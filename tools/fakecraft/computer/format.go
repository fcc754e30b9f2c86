package computer

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
	"fakecraft/luakit"
)

// toStringMeta is Lua's tostring with CC's number formatting and the __tostring metamethod.
func toStringMeta(L *lua.LState, v lua.LValue) string {
	if n, ok := v.(lua.LNumber); ok {
		return ccformat.FormatNumber(float64(n))
	}
	return toStringBy(L, v, L.GetMetaField(v, "__tostring"))
}

// toStringBy is tostring of v, not a number, whose __tostring is handler (nil when none),
// the handler called at once. Any handler is called, as Cobalt's OperationHelper.toString
// calls it: a table with __call too, and a value that cannot be called fails as a call.
func toStringBy(L *lua.LState, v, handler lua.LValue) string {
	if handler != lua.LNil {
		L.Push(handler)
		L.Push(v)
		L.Call(1, 1)
		r := L.Get(-1)
		L.Pop(1)
		return checkToString(L, r)
	}
	return v.String()
}

// checkToString is what __tostring returned, r, as text: a string, or a number in CC's
// format; anything else is an error, as Cobalt's checkToString.
func checkToString(L *lua.LState, r lua.LValue) string {
	switch r := r.(type) {
	case lua.LString:
		return string(r)
	case lua.LNumber:
		return ccformat.FormatNumber(float64(r))
	}
	luakit.RaiseMessage(L, "'__tostring' must return a string")
	return ""
}

// toStringHandOff reports whether the __tostring handler of a %s argument, not a number,
// is called by a stand-in the running Go function hands the call off to
// (lua.LState.HandOff), so that it may yield as Cobalt resumes it; else the handler (if
// any) is called at once.
func toStringHandOff(L *lua.LState, handler lua.LValue) bool {
	return handler != lua.LNil && L.CanHandOff()
}

// quoteLiteral is %q of argument arg (at stack index at) as Cobalt writes it: Lua 5.3's
// form, a literal that reads back as the value (a string quoted, a number as
// ccformat.NumberLiteral, nil and the booleans as their names); other values have none.
// gopher-lua's quoted the text of a number and refused nil, which CC's textutils relies on
// ("Malformed number nil.").
func quoteLiteral(L *lua.LState, at, arg int) string {
	switch v := L.Get(at).(type) {
	case lua.LString:
		return ccformat.Quote(string(v))
	case lua.LNumber:
		return ccformat.NumberLiteral(float64(v))
	case *lua.LNilType, lua.LBool:
		return v.String() // a missing argument too: Cobalt does not count them

	}
	luakit.BadArgumentReason(L, arg, "value has no literal form")
	return ""
}

// luaToString replaces the global tostring. A __tostring's first result is tostring's,
// whatever it is (Cobalt's tostring does not check it, as string.format's %s does); any
// __tostring is called, a table with __call as well as a function (toStringBy). Called by
// Lua code, tostring hands the call off to standIn (cfuncs.lua's tostring_meta), so that
// the __tostring may yield, as in Cobalt; numbers and values without one cost what they
// did.
func luaToString(standIn *lua.LFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		L.CheckAny(1)
		v := L.Get(1)
		if n, ok := v.(lua.LNumber); ok {
			L.Push(lua.LString(ccformat.FormatNumber(float64(n))))
			return 1
		}
		handler := L.GetMetaField(v, "__tostring")
		if handler == lua.LNil {
			L.Push(lua.LString(v.String()))
			return 1
		}
		L.Push(handler)
		L.Push(v)
		if L.CanHandOff() {
			return L.HandOff(standIn, 2)
		}
		L.Call(1, 1)
		return 1
	}
}

// The flags of a % directive, as Cobalt's FormatDesc reads them.
const (
	formatLeftAdjust = 1 << iota // -
	formatPlus                   // +
	formatSpace                  // ' '
	formatAlternate              // #
	formatZeroPad                // 0
	formatPrecision              // a '.' was given
)

// formatFlagChars maps a flag character to its flag.
var formatFlagChars = map[byte]int{'-': formatLeftAdjust, '+': formatPlus, ' ': formatSpace, '#': formatAlternate, '0': formatZeroPad}

// formatConversionFlags are the flags each conversion allows, as Cobalt's StringFormat
// checks them ("invalid conversion specification: '%#d'"); %q allows no modifier at all.
var formatConversionFlags = map[byte]int{
	'c': formatLeftAdjust,
	'd': formatLeftAdjust | formatPlus | formatSpace | formatZeroPad | formatPrecision,
	'i': formatLeftAdjust | formatPlus | formatSpace | formatZeroPad | formatPrecision,
	'u': formatLeftAdjust | formatZeroPad | formatPrecision,
	'o': formatLeftAdjust | formatAlternate | formatZeroPad | formatPrecision,
	'x': formatLeftAdjust | formatAlternate | formatZeroPad | formatPrecision,
	'X': formatLeftAdjust | formatAlternate | formatZeroPad | formatPrecision,
	'e': formatLeftAdjust | formatPlus | formatSpace | formatAlternate | formatZeroPad | formatPrecision,
	'E': formatLeftAdjust | formatPlus | formatSpace | formatAlternate | formatZeroPad | formatPrecision,
	'f': formatLeftAdjust | formatPlus | formatSpace | formatAlternate | formatZeroPad | formatPrecision,
	'g': formatLeftAdjust | formatPlus | formatSpace | formatAlternate | formatZeroPad | formatPrecision,
	'G': formatLeftAdjust | formatPlus | formatSpace | formatAlternate | formatZeroPad | formatPrecision,
	'a': formatLeftAdjust | formatPlus | formatSpace | formatAlternate | formatZeroPad | formatPrecision,
	'A': formatLeftAdjust | formatPlus | formatSpace | formatAlternate | formatZeroPad | formatPrecision,
	's': formatLeftAdjust | formatPrecision,
}

// readFormatDirective reads the % directive of format that starts at start (just after the
// %) as Cobalt's FormatDesc does: at most five flag characters ("invalid format (repeated
// flags)"), a width and a precision of at most two digits each ("invalid format (width or
// precision too long)"), then the conversion character (0 at the end of the format). It
// returns the flags, the conversion, and the index just past the directive; spec is the
// directive's text before the conversion, for Go's fmt.
func readFormatDirective(L *lua.LState, format string, start int) (flags int, spec string, conversion byte, end int) {
	at := func(i int) byte {
		if i < len(format) {
			return format[i]
		}
		return 0
	}
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	i := start
	for formatFlagChars[at(i)] != 0 {
		flags |= formatFlagChars[at(i)]
		i++
	}
	if i-start > 5 {
		L.RaiseError("invalid format (repeated flags)")
	}
	for n := 0; n < 2 && isDigit(at(i)); n++ {
		i++
	}
	if at(i) == '.' {
		flags |= formatPrecision
		i++
		for n := 0; n < 2 && isDigit(at(i)); n++ {
			i++
		}
	}
	if isDigit(at(i)) {
		L.RaiseError("invalid format (width or precision too long)")
	}
	spec, conversion = format[start:i], at(i)
	if i < len(format) {
		i++
	}
	allowed, known := formatConversionFlags[conversion]
	switch {
	case conversion == 'q':
		if spec != "" {
			L.RaiseError("%s", "specifier '%q' cannot have modifiers")
		}
	case !known:
		L.RaiseError("invalid conversion '%%%s' to 'format'", format[start:i])
	case flags&^allowed != 0:
		L.RaiseError("invalid conversion specification: '%%%s'", format[start:i])
	}
	return flags, spec, conversion, i
}

// luaStringFormat replaces string.format so that %s and %d render numbers as CC does and %q
// quotes as C Lua does (gopher-lua hands everything to Go's fmt), and refuses the
// directives Cobalt's StringFormat refuses (readFormatDirective). At the first %s of a value
// with a __tostring it hands the rest off to standIn (cfuncs.lua's format_rest),
// which calls each such __tostring so that it may yield, as Cobalt resumes its format, and
// goes on with formatStep.
func luaStringFormat(standIn *lua.LFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		format := L.CheckString(1)
		var out strings.Builder
		return formatFrom(L, standIn, 0, format, &out, 0, 1)
	}
}

// formatStep goes on with a format that format_rest took over: its arguments are the text so
// far, the __tostring result for the pending %s and that directive's spec, where the format
// goes on (its index and the last argument used), then string.format's own arguments. It
// returns the formatted string, or, at the next %s of a value with a __tostring,
// the text so far, the spec, the index, the argument, the handler and the value.
func formatStep(L *lua.LState) int {
	const base = 5 // string.format's arguments start after formatStep's five
	var out strings.Builder
	out.WriteString(L.CheckString(1))
	out.WriteString(formatString(checkToString(L, L.Get(2)), L.CheckString(3)))
	return formatFrom(L, nil, base, L.CheckString(base+1), &out, L.CheckInt(4), L.CheckInt(5))
}

// formatFrom formats format from index i on, after argument arg, into out; argument n of
// string.format is at stack index base + n. With standIn it hands off at the first %s of a
// value with a __tostring; without, it returns the state there (formatStep).
func formatFrom(L *lua.LState, standIn *lua.LFunction, base int, format string, out *strings.Builder, i, arg int) int {
	for ; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			out.WriteByte(c)
			continue
		}
		i++
		if i >= len(format) {
			L.RaiseError("%s", "invalid conversion '%' to 'format'")
		}
		if format[i] == '%' {
			out.WriteByte('%')
			continue
		}
		_, spec, verb, end := readFormatDirective(L, format, i)
		i = end - 1
		arg++
		at := base + arg
		switch verb {
		case 'd', 'i', 'u':
			out.WriteString(fmt.Sprintf("%"+spec+"d", formatInteger(L, at, arg)))
		case 'c':
			out.WriteString(padBytes(string([]byte{byte(L.CheckInt(at))}), spec))
		case 'x', 'X', 'o':
			out.WriteString(fmt.Sprintf("%"+spec+string(verb), uint64(formatInteger(L, at, arg))))
		case 'e', 'E', 'f', 'g', 'G':
			n := float64(L.CheckNumber(at))
			if math.IsNaN(n) || math.IsInf(n, 0) {
				out.WriteString(specialFloat(n, readFloatDirective(spec), verb == 'E' || verb == 'G'))
			} else {
				if (verb == 'g' || verb == 'G') && !strings.Contains(spec, ".") {
					// C's (and Cobalt's) %g has six significant digits unless told; Go's
					// would write as many as the number needs (1234567 as 1.234567e+06).
					spec += ".6"
				}
				out.WriteString(fmt.Sprintf("%"+spec+string(verb), n))
			}
		case 'a', 'A':
			out.WriteString(hexFloat(float64(L.CheckNumber(at)), spec, verb == 'A'))
		case 'q':
			out.WriteString(quoteLiteral(L, at, arg))
		case 's':
			// A missing argument is nil, as Cobalt reads arguments past the last one.
			v := L.Get(at)
			if n, ok := v.(lua.LNumber); ok {
				out.WriteString(formatString(ccformat.FormatNumber(float64(n)), spec))
				continue
			}
			handler := L.GetMetaField(v, "__tostring")
			if base > 0 {
				if handler != lua.LNil {
					pushFormatState(L, out.String(), spec, end, arg)
					L.Push(handler)
					L.Push(v)
					return 6
				}
			} else if toStringHandOff(L, handler) {
				// format_rest(handler, value, text, spec, index, arg, string.format's arguments)
				top := L.GetTop()
				L.Push(handler)
				L.Push(v)
				pushFormatState(L, out.String(), spec, end, arg)
				for n := 1; n <= top; n++ {
					L.Push(L.Get(n))
				}
				return L.HandOff(standIn, 6+top)
			}
			out.WriteString(formatString(toStringBy(L, v, handler), spec))
		}
	}
	L.Push(lua.LString(out.String()))
	return 1
}

// pushFormatState pushes where a format stopped at a %s of a value with __tostring: the text
// so far, the directive's spec, the index past it and its argument (formatStep).
func pushFormatState(L *lua.LState, text, spec string, next, arg int) {
	L.Push(lua.LString(text))
	L.Push(lua.LString(spec))
	L.Push(lua.LNumber(next))
	L.Push(lua.LNumber(arg))
}

// formatString is s under a %s directive's spec as Cobalt's FormatDesc writes it: a string
// of 100 bytes or more with no precision as it is, else cut at its first zero byte, then
// padded and cut by padBytes ("%s" of "a\0b" is "a").
func formatString(s, spec string) string {
	if len(s) >= 100 && !strings.Contains(spec, ".") {
		return s
	}
	if zero := strings.IndexByte(s, 0); zero >= 0 {
		s = s[:zero]
	}
	return padBytes(s, spec)
}

// padBytes is s under a %s or %c directive's spec (only '-', a width and a precision, as
// readFormatDirective allows them): cut to the precision and padded to the width in bytes,
// as Cobalt counts them. Go's fmt counts runes, so a UTF-8 string got fewer spaces.
func padBytes(s, spec string) string {
	left := strings.HasPrefix(spec, "-")
	spec = strings.TrimLeft(spec, "-")
	widthText, precisionText, hasPrecision := strings.Cut(spec, ".")
	if hasPrecision {
		precision, _ := strconv.Atoi(precisionText) // "" (a bare '.') is 0
		if len(s) > precision {
			s = s[:precision]
		}
	}
	width, _ := strconv.Atoi(widthText)
	if pad := width - len(s); pad > 0 {
		if left {
			return s + strings.Repeat(" ", pad)
		}
		return strings.Repeat(" ", pad) + s
	}
	return s
}

// floatDirective is a float conversion's spec as Cobalt's FormatDesc reads it: its flags,
// width (0 when none) and precision (-1 when none; a bare '.' is 0).
type floatDirective struct {
	left, plus, space, alternate, zero bool
	width, precision                   int
}

func readFloatDirective(spec string) floatDirective {
	flagText := spec[:len(spec)-len(strings.TrimLeft(spec, "-+ #0"))]
	widthText, precisionText, hasPrecision := strings.Cut(spec[len(flagText):], ".")
	d := floatDirective{
		left:      strings.Contains(flagText, "-"),
		plus:      strings.Contains(flagText, "+"),
		alternate: strings.Contains(flagText, "#"),
		zero:      strings.Contains(flagText, "0"),
		precision: -1,
	}
	d.space = !d.plus && strings.Contains(flagText, " ") // '+' wins, as in C
	d.width, _ = strconv.Atoi(widthText)
	if hasPrecision {
		d.precision, _ = strconv.Atoi(precisionText)
	}
	return d
}

// sign is what goes before a number: '-' for a negative one, else '+' or ' ' as the flags ask.
func (d floatDirective) sign(negative bool) string {
	switch {
	case negative:
		return "-"
	case d.plus:
		return "+"
	case d.space:
		return " "
	}
	return ""
}

// specialFloat is inf, -inf or nan under a float conversion (upper: %E, %G, %A), as Cobalt's
// DoubleToStringConverter.handleSpecialValues writes them: a sign as for any number (a NaN
// has none), padded with spaces only, the '0' flag and the precision ignored ("%05f" of
// nan is "  nan", "%+g" of inf "+inf").
func specialFloat(n float64, d floatDirective, upper bool) string {
	symbol := "inf"
	if math.IsNaN(n) {
		symbol = "nan"
	}
	if upper {
		symbol = strings.ToUpper(symbol)
	}
	text := d.sign(n < 0) + symbol
	if pad := d.width - len(text); pad > 0 {
		if d.left {
			return text + strings.Repeat(" ", pad)
		}
		return strings.Repeat(" ", pad) + text
	}
	return text
}

// hexFloat is n as %a (upper: %A) writes it in Cobalt 0.9.4 (DoubleToStringConverter.toHex,
// read from its source and run): the significand's hex digits without trailing zeros, cut to
// the precision with the bits past it rounded to even, the exponent without leading zeros.
// Cobalt writes a subnormal as 0x0. and the digits of its 52 fraction bits without their
// leading zeros, and p-1022: 5e-324 (2^-1074) is 0x0.1p-1022, where C writes
// 0x0.0000000000001p-1022; a precision that rounds up carries into the first digit (%.0a
// of 1.9 is 0x2p+0). A zero is never negative (0x0p+0 for -0).
func hexFloat(n float64, spec string, upper bool) string {
	d := readFloatDirective(spec)
	if math.IsNaN(n) || math.IsInf(n, 0) {
		return specialFloat(n, d, upper)
	}
	bits := math.Float64bits(n)
	const fractionBits = 52
	biased := int(bits >> fractionBits & 0x7ff)
	significand := bits & (1<<fractionBits - 1)
	subnormal := biased == 0
	exponent := 0
	switch {
	case n == 0:
	case subnormal:
		exponent = -1022
	default:
		significand |= 1 << fractionBits
		exponent = biased - 1023
	}

	// Cut the 53-bit significand to the first digit and precision digits after it.
	if d.precision >= 0 && d.precision < 13 {
		shift := uint(fractionBits - 4*d.precision)
		rest := significand & (1<<shift - 1)
		significand >>= shift
		half := uint64(1) << (shift - 1)
		if rest&half != 0 && (significand&1 == 1 || rest&^half != 0) {
			significand++
		}
	}
	digits := strconv.FormatUint(significand, 16)
	if subnormal {
		digits = "0" + digits
	}
	digits = digits[:1] + strings.TrimRight(digits[1:], "0")
	for len(digits)-1 < d.precision {
		digits += "0"
	}
	if len(digits) > 1 || d.alternate {
		digits = digits[:1] + "." + digits[1:]
	}
	exponentText := "+" + strconv.Itoa(exponent)
	if exponent < 0 {
		exponentText = strconv.Itoa(exponent)
	}

	sign := d.sign(n < 0)
	body := digits + "p" + exponentText
	pad := d.width - len(sign) - len("0x") - len(body)
	switch {
	case pad > 0 && d.left:
		body += strings.Repeat(" ", pad)
	case pad > 0 && d.zero:
		body = strings.Repeat("0", pad) + body
	case pad > 0:
		sign = strings.Repeat(" ", pad) + sign
	}
	text := sign + "0x" + body
	if upper {
		text = strings.ToUpper(text)
	}
	return text
}

// formatInteger is argument arg (at stack index at) of an integer conversion (%d, %i, %u,
// %x, %X, %o) as Cobalt takes it: truncated toward zero when that moves it by less than one
// (CC's own os spec formats os.epoch()/1000 with %d), else refused (nan, the infinities,
// past 64 bits).
func formatInteger(L *lua.LState, at, arg int) int64 {
	n := float64(L.CheckNumber(at))
	truncated := math.Trunc(n)
	if math.IsNaN(n) || math.IsInf(n, 0) || truncated < -(1<<63) || truncated >= 1<<63 {
		luakit.BadArgumentReason(L, arg, "not a number in proper range") // Cobalt's argError, as %q's
	}
	return int64(truncated)
}
