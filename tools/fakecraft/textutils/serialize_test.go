package textutils

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

func TestSerialize(t *testing.T) {
	cases := []struct {
		name, code, want string
	}{
		{"empty", `{}`, `{}`},
		{"array", `{1, 2, 3}`, "{\n  1,\n  2,\n  3,\n}"},
		{"identifier key", `{a = 1}`, "{\n  a = 1,\n}"},
		{"nested indent", `{a = {b = true}}`, "{\n  a = {\n    b = true,\n  },\n}"},
		{"nested empty", `{a = {}}`, "{\n  a = {},\n}"},
		{"keyword key", `{["end"] = 1}`, "{\n  [ \"end\" ] = 1,\n}"},
		{"goto is a keyword", `{["goto"] = 1}`, "{\n  [ \"goto\" ] = 1,\n}"},
		{"non-identifier key", `{["b c"] = 1}`, "{\n  [ \"b c\" ] = 1,\n}"},
		{"digit-leading key", `{["1a"] = 1}`, "{\n  [ \"1a\" ] = 1,\n}"},
		{"underscore key", `{_x1 = 1}`, "{\n  _x1 = 1,\n}"},
		{"numeric key outside the array", `{[5] = "x"}`, "{\n  [ 5 ] = \"x\",\n}"},
		{"array stops at the first hole", `{1, nil, 3}`, "{\n  1,\n  [ 3 ] = 3,\n}"},
		{"boolean key", `{[true] = false}`, "{\n  [ true ] = false,\n}"},
		{"table key", `{[{1}] = 2}`, "{\n  [ {\n    1,\n  } ] = 2,\n}"},
		{"compact", `{1, 2, a = 1, ["b c"] = {true}}, {compact = true}`, `{1,2,a=1,["b c"]={true,},}`},
		{"compact empty", `{}, {compact = true}`, `{}`},
		{"string", `"hi"`, `"hi"`},
		{"string %q", `"a\"b\\c\nd\re\0f\1é"`, "\"a\\\"b\\\\c\\\nd\\re\\000f\x01é\""},
		{"number", `0.1 + 0.2`, `0.3`},
		{"third", `1 / 3`, `0.33333333333333`},
		{"big", `2^53`, `9007199254740992`},
		{"nan", `0/0`, `0/0`},
		{"inf", `1/0`, `1/0`},
		{"-inf", `-1/0`, `-1/0`},
		{"nil", `nil`, `nil`},
		{"boolean", `true`, `true`},
		{"alias", `{1}, {compact = true}`, `{1,}`},
		{"metatables ignored", `setmetatable({}, {__index = {a = 1}, __pairs = function() return next, {b = 1} end})`, `{}`},
		{"repetitions allowed", `(function() local t = {} return {t, t} end)(), {allow_repetitions = true, compact = true}`, `{{},{},}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			L := newState(t)
			fn := "serialize"
			if tc.name == "alias" {
				fn = "serialise"
			}
			assert.Equal(t, tc.want, runString(t, L, "return textutils."+fn+"("+tc.code+")"))
		})
	}
}

func TestSerializeErrors(t *testing.T) {
	cases := []struct {
		name, code, want string
	}{
		{"function", `textutils.serialize({f = print})`, "Cannot serialize type function"},
		{"top-level function", `textutils.serialize(print)`, "Cannot serialize type function"},
		{"repeated", `local t = {} textutils.serialize({t, t})`, "Cannot serialize table with repeated entries"},
		{"recursive", `local t = {} t.self = t textutils.serialize(t)`, "Cannot serialize table with recursive entries"},
		{"recursive despite allow_repetitions", `local t = {} t[1] = {t} textutils.serialize(t, {allow_repetitions = true})`, "Cannot serialize table with recursive entries"},
		{"bad options", `textutils.serialize({}, 1)`, "test:1: bad argument #2 to 'serialize' (table expected, got number)"},
		{"bad compact", `textutils.serialize({}, {compact = 1})`, "test:1: bad field 'compact' (boolean expected, got number)"},
		// cc.expect names a table by its metatable's __name.
		{"named table as compact", `textutils.serialize({}, {compact = setmetatable({}, {__name = "thing"})})`, "test:1: bad field 'compact' (boolean expected, got thing)"},
		{"named table as url", `textutils.urlEncode(setmetatable({}, {__name = "thing"}))`, "test:1: bad argument #1 to 'urlEncode' (string expected, got thing)"},
		{"too deep", `local t = {} for i = 1, 2000 do t = {t} end textutils.serialize(t)`, "stack overflow"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			L := newState(t)
			assert.Equal(t, tc.want, runError(t, L, tc.code))
		})
	}
}

func TestUnserialize(t *testing.T) {
	L := newState(t)
	out := run(t, L, `
		local src = {1, "two", {x = true}, ["a b"] = "c\nd\r\0", [10] = -2.5, [true] = false}
		local t = textutils.unserialize(textutils.serialize(src))
		local c = textutils.unserialise(textutils.serialise(src, {compact = true}))
		return t[1], t[2], t[3].x, t["a b"], t[10], t[true], c["a b"], c[3].x`)
	assert.Equal(t, []lua.LValue{lua.LNumber(1), lua.LString("two"), lua.LTrue, lua.LString("c\nd\r\x00"),
		lua.LNumber(-2.5), lua.LFalse, lua.LString("c\nd\r\x00"), lua.LTrue}, out)

	out = run(t, L, `return textutils.unserialize("0/0"), textutils.unserialize("-1/0")`)
	require.Len(t, out, 2)
	assert.True(t, math.IsNaN(float64(out[0].(lua.LNumber))))
	assert.True(t, math.IsInf(float64(out[1].(lua.LNumber)), -1))

	for _, bad := range []string{"1 +", "print", "error('x')", "{", "os.exit()", ")"} {
		L.SetGlobal("input", lua.LString(bad))
		assert.Equal(t, []lua.LValue{lua.LNil}, run(t, L, `return textutils.unserialize(input)`), "input %q", bad)
	}
	// The environment is empty and fresh: globals are invisible and writes go nowhere.
	assert.Equal(t, []lua.LValue{lua.LNil, lua.LNil},
		run(t, L, `return textutils.unserialize("textutils"), textutils.unserialize("(function() x = 1 end)()") or x`))
	assert.Equal(t, "test:1: bad argument #1 to 'unserialize' (string expected, got nil)",
		runError(t, L, `textutils.unserialize()`))
}

func TestURLEncode(t *testing.T) {
	L := newState(t)
	assert.Equal(t, "a+b%26c%3Dd-_.%7E%0D%0A%C3%83%C2%A9",
		runString(t, L, `return textutils.urlEncode("a b&c=d-_.~\né")`))
}

func TestFormatTime(t *testing.T) {
	cases := []struct {
		code, want string
	}{
		{`0`, "12:00 AM"},
		{`0.5`, "12:30 AM"},
		{`6.25`, "6:15 AM"},
		{`12`, "12:00 PM"},
		{`13.75`, "1:45 PM"},
		{`23.99`, "11:59 PM"},
		{`0, true`, "0:00"},
		{`13.5, true`, "13:30"},
		{`9.1, false`, "9:05 AM"}, // (9.1-9)*60 is 5.999…, floored as CC floors it
	}
	for _, tc := range cases {
		t.Run(tc.code, func(t *testing.T) {
			L := newState(t)
			assert.Equal(t, tc.want, runString(t, L, "return textutils.formatTime("+tc.code+")"))
		})
	}
	L := newState(t)
	assert.Equal(t, "test:1: bad argument #1 to 'formatTime' (number expected, got string)",
		runError(t, L, `textutils.formatTime("x")`))
}
