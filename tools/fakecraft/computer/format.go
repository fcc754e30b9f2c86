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
	if mt, ok := L.GetMetaField(v, "__tostring").(*lua.LFunction); ok {
		L.Push(mt)
		L.Push(v)
		L.Call(1, 1)
		r := L.Get(-1)
		L.Pop(1)
		s, isStr := r.(lua.LString)
		if !isStr {
			if n, isNum := r.(lua.LNumber); isNum {
				return ccformat.FormatNumber(float64(n))
			}
			L.RaiseError("'__tostring' must return a string")
		}
		return string(s)
	}
	return v.String()
}

// quoteLiteral is %q of argument arg as Cobalt writes it: Lua 5.3's form, a literal that
// reads back as the value (a string quoted, a number as ccformat.NumberLiteral, nil and the
// booleans as their names); other values have none. gopher-lua's quoted the text of a number
// and refused nil, which CC's textutils relies on ("Malformed number nil.").
func quoteLiteral(L *lua.LState, arg int) string {
	switch v := L.Get(arg).(type) {
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

// luaToString replaces the global tostring.
func luaToString(L *lua.LState) int {
	L.CheckAny(1)
	L.Push(lua.LString(toStringMeta(L, L.Get(1))))
	return 1
}

// formatSpecChars are the flag, width and precision characters allowed inside a % directive.
const formatSpecChars = "-+ #0123456789."

// luaStringFormat replaces string.format so that %s and %d render numbers as CC does and %q
// quotes as C Lua does (gopher-lua hands everything to Go's fmt).
func luaStringFormat(L *lua.LState) int {
	format := L.CheckString(1)
	var out strings.Builder
	arg := 1
	for i := 0; i < len(format); i++ {
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
		start := i
		for i < len(format) && strings.IndexByte(formatSpecChars, format[i]) >= 0 {
			i++
		}
		if i >= len(format) {
			L.RaiseError("invalid conversion '%%%s' to 'format'", format[start:])
		}
		spec := format[start:i]
		verb := format[i]
		arg++
		switch verb {
		case 'd', 'i', 'u':
			out.WriteString(fmt.Sprintf("%"+spec+"d", formatInteger(L, arg)))
		case 'c':
			out.WriteByte(byte(L.CheckInt(arg)))
		case 'x', 'X', 'o':
			out.WriteString(fmt.Sprintf("%"+spec+string(verb), uint64(formatInteger(L, arg))))
		case 'e', 'E', 'f', 'F', 'g', 'G':
			n := float64(L.CheckNumber(arg))
			if math.IsNaN(n) || math.IsInf(n, 0) {
				out.WriteString(fmt.Sprintf("%"+strings.TrimRight(spec, ".0123456789")+"s", ccformat.FormatNumber(n)))
			} else {
				out.WriteString(fmt.Sprintf("%"+spec+string(verb), n))
			}
		case 'a', 'A':
			n := float64(L.CheckNumber(arg))
			out.WriteString(strconv.FormatFloat(n, 'x', -1, 64))
		case 'q':
			out.WriteString(quoteLiteral(L, arg))
		case 's':
			// A missing argument is nil, as Cobalt reads arguments past the last one.
			out.WriteString(fmt.Sprintf("%"+spec+"s", toStringMeta(L, L.Get(arg))))
		default:
			L.RaiseError("invalid conversion '%%%s%c' to 'format'", spec, verb)
		}
	}
	L.Push(lua.LString(out.String()))
	return 1
}

// formatInteger is argument arg of an integer conversion (%d, %i, %u, %x, %X, %o) as Cobalt
// takes it: truncated toward zero when that moves it by less than one (CC's own os spec
// formats os.epoch()/1000 with %d), else refused (nan, the infinities, past 64 bits).
func formatInteger(L *lua.LState, arg int) int64 {
	n := float64(L.CheckNumber(arg))
	truncated := math.Trunc(n)
	if math.IsNaN(n) || math.IsInf(n, 0) || truncated < -(1<<63) || truncated >= 1<<63 {
		luakit.BadArgumentReason(L, arg, "not a number in proper range") // Cobalt's argError, as %q's
	}
	return int64(truncated)
}
