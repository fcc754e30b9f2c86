package luachunk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every numeral means what it means in CC: the forms gopher-lua's lexer does not read, or
// reads as another value, are rewritten (numerals.go).
func TestNumeralsReadAsCobalt(t *testing.T) {
	tests := []struct{ src, want string }{
		{`return 0x1p4`, "16"},
		{`return 0x1P-1`, "0.5"},
		{`return 0x.8`, "0.5"},
		{`return 0xA.8p1`, "21"},
		{`return 0012`, "12"},
		{`return 00012.5`, "12.5"},
		{`return 1e400`, "+Inf"},
		{`return -1e400`, "-Inf"},
		{`return 0xffffffffffffffff`, "-1"},
		{`return -0xffffffffffffffff`, "1"},
		{`return 2 ^ 0x10000000000000000`, "1"},
		{`return 99999999999999999999`, "7766279631452241920"},
		{`return "x" .. 0xffffffffffffffff`, "x-1"},
		{`local t = { 0x1.8, [0x1p1] = 5 } return t[1], t[2]`, "1.5 5"},
		// What gopher-lua reads right is left alone, and text that only looks like a numeral
		// (in a name, a string or a comment) is not a numeral.
		{`return 1.5e3, .5, 5., 0xff, 10`, "1500 0.5 5 255 10"},
		{`local x1p4 = 2 return x1p4`, "2"},
		{`return "0x1p4" .. '0012' .. [[0x.8]] --[[ 0x1p4 ]]`, "0x1p40012" + "0x.8"},
		{"return 'a\\'0012' -- 0012", "a'0012"},
		{"return 'a\\z\n  0x1p4' .. 0x1p4", "a0x1p416"},
		{`return 1 .. 2`, "12"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got := run(t, tt.src)
			joined := ""
			for i, v := range got {
				if i > 0 {
					joined += " "
				}
				joined += v
			}
			assert.Equal(t, tt.want, joined)
		})
	}
}

// A numeral Cobalt cannot convert is a syntax error, worded and placed as CC's.
func TestMalformedNumerals(t *testing.T) {
	tests := []struct{ src, want string }{
		{"return 1e", "chunk:1: malformed number near '1e'"},
		{"return 1a", "chunk:1: malformed number near '1a'"},
		{"return 3..2", "chunk:1: malformed number near '3..2'"},
		{"return 0x", "chunk:1: malformed number near '0x'"},
		{"return 0x1p", "chunk:1: malformed number near '0x1p'"},
		{"x = 1\nreturn 1e+", "chunk:2: malformed number near '1e+'"},
		// gopher-lua would compile these (1e then the next character, as NaN).
		{"return {1e}", "chunk:1: malformed number near '1e'"},
		{"return 2e)", "chunk:1: malformed number near '2e'"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, err := Compile(tt.src, "chunk")
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}
