package luachunk

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/ccformat"
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

// lexAll is every token of src by the syntax checker's Lua 5.2 lexer, or false when it
// stops at an error.
func lexAll(src string) (toks []token, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, isLex := r.(lexError); !isLex {
				panic(r)
			}
			ok = false
		}
	}()
	lx := &lexer{src: src, line: 1}
	for {
		t := lx.scan()
		if t.kind == tokEOS {
			return toks, true
		}
		toks = append(toks, t)
	}
}

// The pass changes numerals and nothing else: random sources lex, before and after, to the
// same tokens (numbers compared by the value Cobalt gives them) on the same lines.
func TestNumeralsPassChangesOnlyNumerals(t *testing.T) {
	pieces := []string{"x", " ", "\n", "0x1p4", "0012", "1e400", "0xffffffffffffffff", "1.5", ".5", "12",
		"'0x1p4'", `"a\"0012"`, "'\\z\n 0x.8'", "--0x1p4\n", "--[[0012]]", "[[0x1p4]]", "[=[1e400]=]",
		"..", "...", "=", "(", ")", "a1", "_0x1p4", "{", "}", ",", "+", "-", "return"}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for j := r.Intn(12); j >= 0; j-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		src := b.String()
		out, malformed := rewriteNumerals(src)
		before, ok1 := lexAll(src)
		after, ok2 := lexAll(out)
		if malformed || !ok1 {
			continue
		}
		require.True(t, ok2, "%q became %q", src, out)
		k := 0
		for _, tb := range before {
			require.Less(t, k, len(after), "%q became %q", src, out)
			ta := after[k]
			if tb.kind == tokNumber {
				want, _ := ccformat.ParseNumber(tb.text, 10)
				got, n := valueAt(after, k)
				require.Equal(t, want, got, "%q became %q", src, out)
				k += n
				continue
			}
			require.Equal(t, tb, ta, "%q became %q", src, out)
			k++
		}
		require.Equal(t, len(after), k, "%q became %q", src, out)
	}
}

// valueAt is the value of the numeral, or rewritten numeral expression, at toks[k], and how
// many tokens it takes.
func valueAt(toks []token, k int) (float64, int) {
	if toks[k].kind == tokNumber {
		v, _ := ccformat.ParseNumber(toks[k].text, 10)
		return v, 1
	}
	if toks[k+1].kind == '-' {
		v, _ := ccformat.ParseNumber(toks[k+2].text, 10)
		return -v, 4
	}
	return math.Inf(1), 5
}
