package textutils

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

func TestSerializeJSON(t *testing.T) {
	cases := []struct {
		name string
		code string // Lua expression passed to serializeJSON, with its options
		want string
	}{
		{"empty table is an object", `{}`, `{}`},
		{"empty_json_array", `textutils.empty_json_array`, `[]`},
		{"json_null", `textutils.json_null`, `null`},
		{"sentinels inside", `{textutils.empty_json_array, textutils.json_null, textutils.empty_json_array}`, `[[],null,[]]`},
		{"array", `{1, 2, 3}`, `[1,2,3]`},
		{"holes become null", `{[1] = 1, [3] = 3}`, `[1,null,3]`},
		{"largest key decides length", `{[4] = true}`, `[null,null,null,true]`},
		{"string key makes an object and drops the array", `{1, 2, a = 1}`, `{"a":1}`},
		{"non-positive, boolean and table keys dropped", `{[0] = 1, [-1] = 2, [true] = 3, [{}] = 4}`, `{}`},
		{"zero key dropped from array", `{[0] = 1, [2] = "x"}`, `[null,"x"]`},
		{"nested", `{a = {b = {}}}`, `{"a":{"b":{}}}`},
		{"string", `"x"`, `"x"`},
		{"number", `5`, `5`},
		{"boolean", `true`, `true`},
		{"0.1+0.2", `0.1 + 0.2`, `0.3`},
		{"1/3", `1 / 3`, `0.33333333333333`},
		{"1e21", `1e21`, `1e+21`},
		{"2^53", `2^53`, `9007199254740992`},
		{"epoch millis", `{1729000000000}`, `[1729000000000]`},
		{"negative fraction", `-2.5`, `-2.5`},
		{"nan raw", `{0/0}`, `[nan]`},
		{"inf raw", `{1/0}`, `[inf]`},
		{"-inf raw", `{-1/0}`, `[-inf]`},
		{"utf-8 bytes escaped one by one", `"é"`, `"\u00C3\u00A9"`},
		{"quote, backslash, slash", `"a\"b\\c/d"`, `"a\"b\\c/d"`},
		{"short escapes", `"\b\f\n\r\t"`, `"\b\f\n\r\t"`},
		{"other controls uppercase", `"\0\1\27\31"`, `"\u0000\u0001\u001B\u001F"`},
		{"DEL and high bytes", `"\127\128\255"`, `"\u007F\u0080\u00FF"`},
		{"string key escaped", `{["é\n"] = 1}`, `{"\u00C3\u00A9\n":1}`},
		{"unicode_strings two-byte", `"é", {unicode_strings = true}`, `"\u00E9"`},
		{"unicode_strings astral", `"\240\159\152\128", {unicode_strings = true}`, `"\uD83D\uDE00"`},
		{"unicode_strings DEL", `"\127é", {unicode_strings = true}`, `"\u007F\u00E9"`},
		{"unicode_strings ascii only", `"a\127\n", {unicode_strings = true}`, `"a\u007F\n"`},
		{"nbt_style option", `{a = "x"}, {nbt_style = true}`, `{a:"x"}`},
		{"nbt_style legacy boolean", `{a = 1}, true`, `{a:1}`},
		{"legacy false", `{a = 1}, false`, `{"a":1}`},
		{"allow_repetitions", `(function() local t = {1} return {t, t} end)(), {allow_repetitions = true}`, `[[1],[1]]`},
		{"__pairs honoured", `setmetatable({}, {__pairs = function() return next, {a = 1}, nil end})`, `{"a":1}`},
		{"array entries of an object serialised, then dropped", `{a = 1, [1] = {b = 2}, [3] = "x"}`, `{"a":1}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			L := newState(t)
			assert.Equal(t, tc.want, runString(t, L, "return textutils.serializeJSON("+tc.code+")"))
		})
	}
}

func TestSerializeJSONAliasesAndOrder(t *testing.T) {
	L := newState(t)
	assert.Equal(t, `{"a":1}`, runString(t, L, `return textutils.serialiseJSON({a = 1})`))
	// Several keys come out in pairs order; check the shape by decoding it again.
	out := run(t, L, `
		local s = textutils.serializeJSON({a = 1, b = "two", c = {true, false}})
		local t = textutils.unserializeJSON(s)
		return #s, t.a, t.b, t.c[1], t.c[2]`)
	assert.Equal(t, []lua.LValue{lua.LNumber(len(`{"a":1,"b":"two","c":[true,false]}`)), lua.LNumber(1), lua.LString("two"), lua.LTrue, lua.LFalse}, out)
}

func TestSerializeJSONErrors(t *testing.T) {
	cases := []struct {
		name string
		code string
		want string
	}{
		{"repeated", `local t = {} textutils.serializeJSON({t, t})`, "Cannot serialize table with repeated entries"},
		{"repeated across object", `local t = {} textutils.serializeJSON({a = t, b = {c = t}})`, "Cannot serialize table with repeated entries"},
		{"recursive", `local t = {} t[1] = t textutils.serializeJSON(t)`, "Cannot serialize table with recursive entries"},
		{"recursive despite allow_repetitions", `local t = {} t.a = {t} textutils.serializeJSON(t, {allow_repetitions = true})`, "Cannot serialize table with recursive entries"},
		{"function", `textutils.serializeJSON({print})`, "Cannot serialize type function"},
		{"function in object", `textutils.serializeJSON({a = print})`, "Cannot serialize type function"},
		{"function in the array of an object", `textutils.serializeJSON({a = 1, [1] = print})`, "Cannot serialize type function"},
		{"repeated in the array of an object", `local t = {} textutils.serializeJSON({a = t, [1] = t})`, "Cannot serialize table with repeated entries"},
		{"recursive in the array of an object", `local t = {a = 1} t[1] = t textutils.serializeJSON(t)`, "Cannot serialize table with recursive entries"},
		{"thread", `textutils.serializeJSON({a = coroutine.create(print)})`, "Cannot serialize type thread"},
		{"invalid utf-8 with unicode_strings", `textutils.serializeJSON("\255", {unicode_strings = true})`, "...rom/apis/textutils.lua:434: invalid UTF-8 code"},
		{"sparse array too long", `textutils.serializeJSON({[1e15] = 1})`, jsonArrayTooLong},
		{"nil argument (called directly)", `local _, e = pcall(textutils.serializeJSON) error(e, 0)`, "bad argument #1 (table, string, number or boolean expected, got nil)"},
		{"function argument, named call", `textutils.serializeJSON(print)`, "test:1: bad argument #1 to 'serializeJSON' (table, string, number or boolean expected, got function)"},
		{"bad option argument", `local _, e = pcall(textutils.serializeJSON, {}, "x") error(e, 0)`, "bad argument #2 (table or boolean expected, got string)"},
		{"bad option field", `textutils.serializeJSON({}, {nbt_style = 1})`, "test:1: bad field 'nbt_style' (boolean expected, got number)"},
		{"bad unicode_strings", `textutils.serializeJSON({}, {unicode_strings = "yes"})`, "test:1: bad field 'unicode_strings' (boolean expected, got string)"},
		{"bad allow_repetitions", `textutils.serializeJSON({}, {allow_repetitions = {}})`, "test:1: bad field 'allow_repetitions' (boolean expected, got table)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			L := newState(t)
			assert.Equal(t, tc.want, runError(t, L, tc.code))
		})
	}
}

func TestSentinels(t *testing.T) {
	L := newState(t)
	assert.Equal(t, []lua.LValue{lua.LString("[]"), lua.LString("null"), lua.LNumber(0), lua.LNil, lua.LString("table")},
		run(t, L, `return tostring(textutils.empty_json_array), tostring(textutils.json_null),
			#textutils.empty_json_array, next(textutils.json_null), type(textutils.json_null)`))
	assert.Equal(t, "test:1: attempt to mutate textutils.empty_json_array",
		runError(t, L, `textutils.empty_json_array[1] = 1`))
	assert.Equal(t, "test:1: attempt to mutate textutils.json_null",
		runError(t, L, `textutils.json_null.x = 1`))
	assert.Equal(t, "test:2: attempt to mutate textutils.empty_json_array",
		runError(t, L, "local t = textutils.unserializeJSON('[]')\nt[1] = 'x'"))
	// Shared: still empty after the failed writes.
	assert.Equal(t, `[]`, runString(t, L, `return textutils.serializeJSON(textutils.empty_json_array)`))
}

func TestUnserializeJSON(t *testing.T) {
	cases := []struct {
		name string
		code string // Lua returning values computed from the decoded result
		want []lua.LValue
	}{
		{"empty array is the shared sentinel",
			`local t = textutils.unserializeJSON("[]") return t == textutils.empty_json_array`,
			[]lua.LValue{lua.LTrue}},
		{"nested empty array is the sentinel",
			`local t = textutils.unserializeJSON('{"a":[ ]}') return t.a == textutils.empty_json_array`,
			[]lua.LValue{lua.LTrue}},
		{"parse_empty_array=false gives a fresh table",
			`local t = textutils.unserializeJSON("[]", {parse_empty_array = false}) t[1] = 5 return t ~= textutils.empty_json_array, t[1]`,
			[]lua.LValue{lua.LTrue, lua.LNumber(5)}},
		{"empty object is a fresh table",
			`local a, b = textutils.unserializeJSON("{}"), textutils.unserializeJSON("{}") a.x = 1 return a ~= b, next(b)`,
			[]lua.LValue{lua.LTrue, lua.LNil}},
		{"top-level null is a bare nil",
			`return textutils.unserializeJSON(" null ")`,
			[]lua.LValue{lua.LNil}},
		{"top-level null with parse_null",
			`return textutils.unserializeJSON("null", {parse_null = true}) == textutils.json_null`,
			[]lua.LValue{lua.LTrue}},
		{"null member is absent",
			`local t = textutils.unserializeJSON('{"a":null,"b":1}') return next(t), t.a, t.b`,
			[]lua.LValue{lua.LString("b"), lua.LNil, lua.LNumber(1)}},
		{"null in array is a hole",
			`local t = textutils.unserializeJSON('[1,null,3]') return t[1], t[2], t[3]`,
			[]lua.LValue{lua.LNumber(1), lua.LNil, lua.LNumber(3)}},
		{"parse_null",
			`local t = textutils.unserializeJSON('{"a":null,"b":[null]}', {parse_null = true}) return t.a == textutils.json_null, t.b[1] == textutils.json_null`,
			[]lua.LValue{lua.LTrue, lua.LTrue}},
		{"literals",
			`local t = textutils.unserializeJSON('[true,false,"s",-1.5e2]') return t[1], t[2], t[3], t[4]`,
			[]lua.LValue{lua.LTrue, lua.LFalse, lua.LString("s"), lua.LNumber(-150)}},
		{"loose numbers",
			`local t = textutils.unserializeJSON('[01,2.,-01,1E2,-0.5e-1,1e400]') return t[1], t[2], t[3], t[4], t[5], t[6] == math.huge or t[6] > 1e308`,
			[]lua.LValue{lua.LNumber(1), lua.LNumber(2), lua.LNumber(-1), lua.LNumber(100), lua.LNumber(-0.05), lua.LTrue}},
		{"escapes",
			`return textutils.unserializeJSON('"\\"\\\\\\/\\b\\f\\n\\r\\t"')`,
			[]lua.LValue{lua.LString("\"\\/\b\f\n\r\t")}},
		{"unicode escape to utf-8",
			`return textutils.unserializeJSON('"\\u00e9\\u0041\\u20AC"')`,
			[]lua.LValue{lua.LString("é" + "A" + "€")}},
		{"surrogates not combined",
			`return textutils.unserializeJSON('"\\ud83d\\ude00"')`,
			[]lua.LValue{lua.LString("\xED\xA0\xBD\xED\xB8\x80")}},
		{"raw bytes pass through",
			`return textutils.unserializeJSON('"é\127\255"')`,
			[]lua.LValue{lua.LString("é\x7f\xff")}},
		{"duplicate keys: last wins",
			`local t = textutils.unserializeJSON('{"a":1,"a":2}') return t.a`,
			[]lua.LValue{lua.LNumber(2)}},
		{"duplicate key then null removes",
			`local t = textutils.unserializeJSON('{"a":1,"a":null}') return next(t)`,
			[]lua.LValue{lua.LNil}},
		{"json whitespace",
			`local t = textutils.unserializeJSON(' \n\r\t[ 1 , 2 ]\t\n') return #t`,
			[]lua.LValue{lua.LNumber(2)}},
		{"alias",
			`return textutils.unserialiseJSON('"x"')`,
			[]lua.LValue{lua.LString("x")}},
		{"nbt_style",
			`local t = textutils.unserializeJSON([[{a:1b,"b":'x"y',c:[I;1,2L],d:-2.5f}]], {nbt_style = true}) return t.a, t.b, t.c[2], t.d`,
			[]lua.LValue{lua.LNumber(1), lua.LString(`x"y`), lua.LNumber(2), lua.LNumber(-2.5)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			L := newState(t)
			assert.Equal(t, tc.want, run(t, L, tc.code))
		})
	}
}

// TestUnserializeJSONMalformed pins CC's messages and positions word for word, quirks
// included (each checked against CC's own textutils.lua run on fakecraft).
func TestUnserializeJSONMalformed(t *testing.T) {
	cases := []struct {
		name, in, want string
		nbt            bool
	}{
		{"empty", ``, `Malformed JSON at position 1: Unexpected end of input.`, false},
		{"only whitespace", "  \n", `Malformed JSON at position 4: Unexpected end of input.`, false},
		{"unterminated array", `[1,2`, `Malformed JSON at position 5: Unexpected end of input, expected ',' or ']'.`, false},
		{"unterminated empty array", `[`, `Malformed JSON at position 2: Unexpected end of input, expected ']'.`, false},
		{"unterminated object", `{`, `Malformed JSON at position 2: Unexpected end of input, expected '}'.`, false},
		{"unterminated object after a value", `{"a":1`, `Malformed JSON at position 7: Unexpected end of input, expected ',' or '}'.`, false},
		{"object key at the end", `{"a":1,`, `Malformed JSON at position 8: Unexpected end of input, expected object key.`, false},
		{"unterminated string", `"abc`, `Malformed JSON at position 5: Unexpected end of input, expected '"'.`, false},
		{"unterminated single-quoted string names the double quote", `'ab`, `Malformed JSON at position 4: Unexpected end of input, expected '"'.`, true},
		{"escape at the end", `"\`, `Malformed JSON at position 2: Unexpected end of input, expected escape sequence.`, false},
		{"bad start", `x`, `Malformed JSON at position 1: Unexpected character "x".`, false},
		{"partial literal", `[tru]`, `Malformed JSON at position 2: Unexpected character "t".`, false},
		{"literal then more", `truex`, `Malformed JSON at position 5: Unexpected trailing character "x".`, false},
		{"form feed is not whitespace", "\f1", "Malformed JSON at position 1: Unexpected character \"\f\".", false},
		{"number key", `{1:2}`, `Malformed JSON at position 2: Unexpected "1", expected object key.`, false},
		{"trailing comma in object", `{"a":1,}`, `Malformed JSON at position 8: Unexpected "}", expected object key.`, false},
		{"trailing comma in array", `[1,]`, `Malformed JSON at position 4: Unexpected character "]".`, false},
		{"missing colon", `{"a" 1}`, `Malformed JSON at position 6: Unexpected "1", expected ':'.`, false},
		{"missing comma in object", `{"a":1 "b":2}`, `Malformed JSON at position 8: Unexpected "\"", expected ',' or '}'.`, false},
		{"missing comma", `[1 2]`, `Malformed JSON at position 4: Unexpected "2", expected ',' or ']'.`, false},
		{"trailing", `[1] x`, `Malformed JSON at position 5: Unexpected trailing character "x".`, false},
		{"two values", `1 2`, `Malformed JSON at position 3: Unexpected trailing character "2".`, false},
		{"unknown escape", `"\q"`, `Malformed JSON at position 3: Unknown escape character "q".`, false},
		{"single-quote escape, even with nbt", `'\''`, `Malformed JSON at position 3: Unknown escape character "'".`, true},
		{"malformed unicode is blamed on the backslash", `"\uzzzz"`, `Malformed JSON at position 2: Malformed unicode escape "zzzz".`, false},
		{"short unicode shows what follows", `"ab\u12"`, `Malformed JSON at position 4: Malformed unicode escape "12\"".`, false},
		{"raw newline, one past it", "\"a\nb\"", "Malformed JSON at position 4: Unescaped whitespace \"\\\n\".", false},
		{"raw tab", "\"\t\"", "Malformed JSON at position 3: Unescaped whitespace \"\t\".", false},
		{"raw control is whitespace too", "\"\x01\"", "Malformed JSON at position 3: Unescaped whitespace \"\x01\".", false},
		{"raw NUL", "\"\x00\"", `Malformed JSON at position 3: Unescaped whitespace "\000".`, false},
		{"lone minus formats the nil CC got", `-`, `Malformed JSON at position 1: Malformed number nil.`, false},
		{"minus then point", `-.5`, `Malformed JSON at position 1: Malformed number nil.`, false},
		{"bare exponent", `[1e]`, `Malformed JSON at position 2: Malformed number "1e".`, false},
		{"a sign is part of the number", `[1+2]`, `Malformed JSON at position 2: Malformed number "1+2".`, false},
		{"second point", `1.2.3`, `Malformed JSON at position 4: Unexpected trailing character ".".`, false},
		{"single quotes without nbt", `'a'`, `Malformed JSON at position 1: Unexpected character "'".`, false},
		{"bare key without nbt", `{a:1}`, `Malformed JSON at position 2: Unexpected "a", expected object key.`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			L := newState(t)
			L.SetGlobal("input", lua.LString(tc.in))
			L.SetGlobal("nbt", lua.LBool(tc.nbt))
			out := run(t, L, `return textutils.unserializeJSON(input, {nbt_style = nbt})`)
			assert.Equal(t, []lua.LValue{lua.LNil, lua.LString(tc.want)}, out)
		})
	}
}

func TestUnserializeJSONArgumentErrors(t *testing.T) {
	cases := []struct {
		name, code, want string
	}{
		{"nil", `textutils.unserializeJSON()`, "test:1: bad argument #1 to 'unserializeJSON' (string expected, got nil)"},
		{"number", `local _, e = pcall(textutils.unserializeJSON, 1) error(e, 0)`, "bad argument #1 (string expected, got number)"},
		{"options", `textutils.unserializeJSON("1", true)`, "test:1: bad argument #2 to 'unserializeJSON' (table expected, got boolean)"},
		{"parse_null", `textutils.unserializeJSON("1", {parse_null = 1})`, "test:1: bad field 'parse_null' (boolean expected, got number)"},
		{"parse_empty_array", `textutils.unserializeJSON("1", {parse_empty_array = "no"})`, "test:1: bad field 'parse_empty_array' (boolean expected, got string)"},
		{"nbt_style", `textutils.unserializeJSON("1", {nbt_style = {}})`, "test:1: bad field 'nbt_style' (boolean expected, got table)"},
		{"too deep", `textutils.unserializeJSON(string.rep("[", 5000))`, "...rom/apis/textutils.lua:548: stack overflow"},
		// CC's reader stops with a Lua error on an NBT key that is no identifier.
		{"nbt key", `textutils.unserializeJSON("{1:2}", {nbt_style = true})`, errNBTKey},
		{"nbt single-quoted key", `textutils.unserializeJSON("{'a':1}", {nbt_style = true})`, errNBTKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			L := newState(t)
			assert.Equal(t, tc.want, runError(t, L, tc.code))
		})
	}
}

// FuzzUnserializeJSON checks that decoding never panics or raises (except the nesting
// guard), that failures have CC's message shape, and that what decodes encodes again.
func FuzzUnserializeJSON(f *testing.F) {
	for _, seed := range []string{
		``, `[]`, `{}`, `null`, `[1,null,3]`, `{"a":{"b":[true,false]}}`, `"\u00e9\ud83d"`, `01`,
		`-`, `1e`, `{a:1b,'x':[I;1]}`, `"\q"`, `[1,]`, "\"\n\"", `[[[[`, `{"a"`, `1e400`, `"\uzz`,
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, in string, nbt bool) {
		L := lua.NewState()
		defer L.Close()
		Install(L)
		L.SetGlobal("input", lua.LString(in))
		L.SetGlobal("nbt", lua.LBool(nbt))
		err := L.DoString(`
			local v, err = textutils.unserializeJSON(input, {nbt_style = nbt, parse_null = nbt})
			if err ~= nil then
				assert(v == nil and type(err) == "string", "bad failure shape")
				assert(err:match("^Malformed JSON at position %d+: .+%.$"), err)
			elseif v ~= nil then
				textutils.serializeJSON(v)
				textutils.serialize(v, {allow_repetitions = true})
			end`)
		if err != nil {
			var apiErr *lua.ApiError
			require.ErrorAs(t, err, &apiErr)
			require.Contains(t, []string{"...rom/apis/textutils.lua:548: stack overflow", errNBTKey}, apiErr.Object.String(), "input %q", in)
		}
	})
}

func TestUnicodeStringsDecoding(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"real U+FFFD", "\xEF\xBF\xBD", `"\uFFFD"`},
		{"encoded surrogate as utf8.char writes it", "\xED\xA0\xBD", `"\uD83D"`},
		{"three-byte", "€", `"\u20AC"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			L := newState(t)
			L.SetGlobal("input", lua.LString(tc.in))
			assert.Equal(t, tc.want, runString(t, L, `return textutils.serializeJSON(input, {unicode_strings = true})`))
		})
	}
	L := newState(t)
	for _, bad := range []string{"\xC3", "\xC0\x80", "\xF4\x90\x80\x80", "a\x80"} {
		L.SetGlobal("input", lua.LString(bad))
		assert.Equal(t, "...rom/apis/textutils.lua:434: invalid UTF-8 code",
			runError(t, L, `textutils.serializeJSON(input, {unicode_strings = true})`), "input %q", bad)
	}
}

// TestJSONNestsAsDeepAsTheStack: CC's JSON reader and writer are Lua, a call per level of
// nesting, so they overflow where the coroutine's stack does (Cobalt's 32768 frames, as a
// fakecraft computer's), not at a fixed depth: 20000 levels read and write back, 40000 are a
// stack overflow (it stopped at 1024).
func TestJSONNestsAsDeepAsTheStack(t *testing.T) {
	L := lua.NewState(lua.Options{CallStackSize: 32768})
	t.Cleanup(L.Close)
	Install(L)
	out := run(t, L, `
local deep = string.rep("[", 20000) .. string.rep("]", 20000)
local t = textutils.unserializeJSON(deep)
local depth = 0
while type(t) == "table" and t[1] ~= nil do t, depth = t[1], depth + 1 end
return depth, #textutils.serializeJSON(textutils.unserializeJSON(deep, { parse_empty_array = false }))`)
	assert.Equal(t, []lua.LValue{lua.LNumber(19999), lua.LNumber(40000)}, out)
	assert.Equal(t, "...rom/apis/textutils.lua:548: stack overflow",
		runError(t, L, `textutils.unserializeJSON(string.rep("[", 40000) .. string.rep("]", 40000))`))
	assert.Equal(t, "...rom/apis/textutils.lua:456: stack overflow",
		runError(t, L, `local t = {} for _ = 1, 40000 do t = { t } end textutils.serializeJSON(t)`))
}

// TestJSONErrorsAtCCsLines: CC's textutils is the ROM's textutils.lua, so an error the VM
// or utf8.codes raises in it is placed at its line, and a program that dies of one shows
// that line. Each case was run on CC 1.113.1's textutils.lua under Cobalt 0.9.3: a stack
// overflow is placed at the deepest call of the level where the stack runs out (the reader's
// skip, the writer's type(t), or a string key's gsub, or s:find with unicode_strings), and
// bad UTF-8 under unicode_strings at the utf8.codes loop.
func TestJSONErrorsAtCCsLines(t *testing.T) {
	L := lua.NewState(lua.Options{CallStackSize: 1000}) // a short stack: the lines are the same at any depth
	t.Cleanup(L.Close)
	Install(L)
	cases := []struct{ name, code, want string }{
		{"reader, arrays", `textutils.unserializeJSON(string.rep("[", 2000))`, "548"},
		{"reader, objects", `textutils.unserializeJSON(string.rep('{"a":', 2000))`, "548"},
		{"reader, objects in arrays", `textutils.unserializeJSON(string.rep('[{"":', 2000))`, "548"},
		{"reader, NBT", `textutils.unserializeJSON(string.rep("{a:", 2000), {nbt_style = true})`, "548"},
		{"writer, arrays", `local t = {} for _ = 1, 2000 do t = {t} end textutils.serializeJSON(t)`, "456"},
		{"writer, objects", `local t = {} for _ = 1, 2000 do t = {x = t} end textutils.serializeJSON(t)`, "450"},
		{"writer, objects with unicode_strings", `local t = {} for _ = 1, 2000 do t = {x = t} end textutils.serializeJSON(t, {unicode_strings = true})`, "432"},
		{"writer, NBT objects", `local t = {} for _ = 1, 2000 do t = {x = t} end textutils.serializeJSON(t, {nbt_style = true})`, "456"},
		{"writer, NBT objects, the old boolean", `local t = {} for _ = 1, 2000 do t = {x = t} end textutils.serializeJSON(t, true)`, "456"},
		{"writer, arrays with a key", `local t = {} for _ = 1, 2000 do t = {t, x = 1} end textutils.serializeJSON(t)`, "450"},
		{"writer, objects with an array entry", `local t = {} for _ = 1, 2000 do t = {1, x = t} end textutils.serializeJSON(t)`, "450"},
	}
	for _, tc := range cases {
		assert.Equal(t, "...rom/apis/textutils.lua:"+tc.want+": stack overflow", runError(t, L, tc.code), tc.name)
	}
	assert.Equal(t, "...rom/apis/textutils.lua:434: invalid UTF-8 code",
		runError(t, L, `textutils.serializeJSON({["\200"] = 1}, {unicode_strings = true})`))
}
