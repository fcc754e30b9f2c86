package luachunk

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Syntax errors read as Lua 5.2's (and CC's Cobalt's): the message, the token it stopped
// at, and the line.
func TestSyntaxErrorsReadAsLuas(t *testing.T) {
	tests := []struct{ src, want string }{
		{"1", "chunk:1: unexpected symbol near '1'"},
		{"x", "chunk:1: syntax error near <eof>"},
		{"x y", "chunk:1: syntax error near 'y'"},
		{"f() = 1", "chunk:1: syntax error near '='"},
		{"a, b", "chunk:1: '=' expected near <eof>"},
		{"local = 2", "chunk:1: <name> expected near '='"},
		{"if x print(1) end", "chunk:1: 'then' expected near 'print'"},
		{"while true print(1) end", "chunk:1: 'do' expected near 'print'"},
		{"for i do end", "chunk:1: '=' or 'in' expected near 'do'"},
		{"for i = 1 do end", "chunk:1: ',' expected near 'do'"},
		{"for a, b of t do end", "chunk:1: 'in' expected near 'of'"},
		{"function f(1) end", "chunk:1: <name> or '...' expected near '1'"},
		{"function f()\n  return 1\n", "chunk:3: 'end' expected (to close 'function' at line 1) near <eof>"},
		{"if x then", "chunk:1: 'end' expected near <eof>"},
		{"do\n\nuntil x", "chunk:3: 'end' expected (to close 'do' at line 1) near 'until'"},
		{"repeat\nx = 1\nend", "chunk:3: 'until' expected (to close 'repeat' at line 1) near 'end'"},
		{"print((1)", "chunk:1: ')' expected near <eof>"},
		{"print(\n1", "chunk:2: ')' expected (to close '(' at line 1) near <eof>"},
		{"t = { 1, 2", "chunk:1: '}' expected near <eof>"},
		{"t = { [1] 2 }", "chunk:1: '=' expected near '2'"},
		{"x = t:m", "chunk:1: function arguments expected near <eof>"},
		{"return 1 2", "chunk:1: <eof> expected near '2'"},
		{"return return", "chunk:1: unexpected symbol near 'return'"},
		{"x = = 1", "chunk:1: unexpected symbol near '='"},
		{"x = 1 +", "chunk:1: unexpected symbol near <eof>"},
		{"x = @", "chunk:1: unexpected symbol near '@'"},
		{"x = \x01", "chunk:1: unexpected symbol near char(1)"},
		{"function f() return ... end", "chunk:1: cannot use '...' outside a vararg function near '...'"},
		{"x = \"abc", "chunk:1: unfinished string near <eof>"},
		{"x = \"abc\ny = 1", "chunk:1: unfinished string near '\"abc'"},
		{"x = [[abc", "chunk:1: unfinished long string (started at line 1) near <eof>"},
		{"--[[ abc", "chunk:1: unfinished long comment (started at line 1) near <eof>"},
		{"x = [==[\n\nabc", "chunk:3: unfinished long string (started at line 1) near <eof>"},
		{"x = [=abc", "chunk:1: invalid long string delimiter near '[='"},
		{"x = 3..4", "chunk:1: malformed number near '3..4'"},
		{"x = 0x", "chunk:1: malformed number near '0x'"},
		{"\n\nbreak", "chunk:3: break outside loop at line 3"},
		{"do goto done end", "chunk:1: no visible label 'done' for <goto> at line 1"},
		{"::a:: ::a::", "chunk:1: label 'a' already defined on line 1"},
		{"x = 'a\\z\n\n  b' y", "chunk:3: syntax error near <eof>"},
	}
	for _, tt := range tests {
		_, err := Compile(tt.src, "chunk")
		require.Error(t, err, tt.src)
		var se *SyntaxError
		require.True(t, errors.As(err, &se), "%q: %v", tt.src, err)
		assert.Equal(t, tt.want, se.Error(), tt.src)
	}
}

// gopher-lua's lexer takes a bad escape or an exponent with no digits as valid, so such a
// chunk would compile: the escape pass refuses the escapes Cobalt refuses and leaves the
// wording to the checker, which words them as Cobalt 0.9.4's lexer does (run from its
// source: the string so far near, its quote included, the offending character last).
func TestBadEscapesAsCobalt(t *testing.T) {
	for src, want := range map[string]string{
		`return '\300'`:          `t:1: escape sequence too large near ''\300''`,
		`return '\256x'`:         `t:1: escape sequence too large near ''\256x'`,
		"return \"ab\\n\\2560\"": "t:1: escape sequence too large near '\"ab\n\\2560'",
		`return '\999'`:          `t:1: escape sequence too large near ''\999''`,
		`return '\300`:           `t:1: escape sequence too large near ''\300'`,
		"return '\\\n\\300'":     "t:2: escape sequence too large near ''\n\\300''",
		`return '\xZZ'`:          `t:1: hexadecimal digit expected near ''\xZ'`,
		`return '\x5'`:           `t:1: hexadecimal digit expected near ''\x5''`,
		`return '\x`:             `t:1: hexadecimal digit expected near ''\x'`,
		`return "a" .. '\xg'`:    `t:1: hexadecimal digit expected near ''\xg'`,
		`return '\u{110000}'`:    `t:1: UTF-8 value too large near ''\u{110000'`,
		`return '\u{7FFFFFFF}'`:  `t:1: UTF-8 value too large near ''\u{7FFFFF'`,
		`return '\u123'`:         `t:1: missing '{' near ''\u1'`,
		`return '\u'`:            `t:1: missing '{' near ''\u''`,
		`return '\u{12'`:         `t:1: missing '}' near ''\u{12''`,
		`return '\u{}'`:          `t:1: hexadecimal digit expected near ''\u{}'`,
		"x = 1e+":                "t:1: malformed number near '1e+'",
	} {
		_, err := Compile(src, "t")
		require.Error(t, err, src)
		assert.Equal(t, want, err.Error(), src)
	}
}

// The checker accepts what Lua accepts, so it never invents an error for a chunk that
// gopher-lua rejects for its own reasons.
func TestSyntaxCheckerAcceptsLua(t *testing.T) {
	valid := []string{
		"", ";;", "local function f(a, b, ...) return ... end",
		"for i = 1, 10, 2 do if i then break end end",
		"for k, v in pairs(t) do goto continue ::continue:: end",
		"repeat local x = 1 until x",
		"t = { 1, 2; x = 3, [4] = 5, }",
		"a.b.c:d 'x' {1} (2)",
		"local s = [==[ ]] ]==] .. \"\\x41\\z  \\u{48}\\065\"",
		"x = -2^-3 .. #t .. not a == b",
		"do ::top:: goto top end",
		"return",
		"f()\n(g)()",
		"x = 0x1p4 + 1e10 + .5 + 3.",
	}
	for _, src := range valid {
		assert.Nil(t, checkSyntax(src, "chunk"), src)
	}
}

// Cobalt 0.9.4 refuses a chunk whose statements and expressions nest past 200 levels
// (its Parser's enterLevel, in each statement and each operand), which gopher-lua compiles;
// the cases and their words are Cobalt's, run from its source.
func TestChunksNestedPastCobaltsLimit(t *testing.T) {
	nested := func(open, inner, close string, n int) string {
		return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
	}
	const tooDeep = "main function has more than 200 syntax levels"
	for src, want := range map[string]string{
		"x = 1 + " + nested("(", "1", ")", 300):                             "t:1: " + tooDeep,
		"x = 1 + " + nested("(", "1", ")", 198):                             "t:1: " + tooDeep,
		"x = 1 + " + nested("(", "1", ")", 197):                             "",
		"x = " + nested("{", "", "}", 300):                                  "t:1: " + tooDeep,
		"return " + nested("{", "", "}", 200):                               "t:1: " + tooDeep,
		"return " + nested("{", "", "}", 199):                               "",
		nested("do ", "", "end ", 300):                                      "t:1: " + tooDeep,
		nested("if x then ", "", "end ", 200):                               "t:1: " + tooDeep,
		nested("if x then ", "", "end ", 199):                               "",
		"x = " + strings.Repeat("- ", 199) + "1":                            "t:1: " + tooDeep,
		"x = " + strings.Repeat("- ", 198) + "1":                            "",
		"x = " + nested("f(", "", ")", 300):                                 "t:1: " + tooDeep,
		"x = 1" + strings.Repeat(" + 1", 300):                               "",
		"x = 1" + strings.Repeat(" .. 1", 199):                              "t:1: " + tooDeep,
		"x = 1" + strings.Repeat(" .. 1", 198):                              "",
		"x = 1" + strings.Repeat(" ^ 1", 300):                               "t:1: " + tooDeep,
		"x = 1" + strings.Repeat(" or 1 and 1 < 1 .. 1 + 1 * 1 ^ 1", 40):    "",
		"x = 1" + strings.Repeat(" ^ 1 * 1 + 1 .. 1 < 1 and 1 or 1", 40):    "",
		nested("local function f() ", "", "end ", 300):                      "t:1: function at line 1 has more than 200 syntax levels",
		"\n\nlocal function f()\nx = " + strings.Repeat("#", 300) + "t end": "t:4: function at line 3 has more than 200 syntax levels",
		"return " + nested("function() return ", "1", " end", 100):          "t:1: function at line 1 has more than 200 syntax levels",
		"return " + nested("function() return ", "1", " end", 99):           "",
		"x = 1 + " + nested("(\n", "1", ")", 300):                           "t:199: " + tooDeep,
	} {
		_, err := Compile(src, "t")
		if want == "" {
			assert.NoError(t, err, src)
			continue
		}
		require.Error(t, err, src)
		assert.Equal(t, want, err.Error(), src)
	}
}

// A chunk that compiles reaches the checker only for its nesting.
func TestCompiledChunksSkipTheChecker(t *testing.T) {
	_, err := Compile("return 1", "chunk")
	require.NoError(t, err)
	_, err = Compile("return (", "chunk")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "chunk:1: unexpected symbol near <eof>"), err.Error())
}
