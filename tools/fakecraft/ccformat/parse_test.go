package ccformat

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestParseNumber pins Cobalt's NumberParser, read from its source (v0.9.4, which CC 1.113
// runs); each case says why it is worth a line.
func TestParseNumber(t *testing.T) {
	const none = "none"
	cases := []struct {
		name string
		in   string
		base int
		want any // float64, or none
	}{
		{"decimal", "12", 10, 12.0},
		{"spaces around", " \t\r\v\f12\n", 10, 12.0},
		{"a NUL is no space", "5\x00", 10, none},
		{"space inside", "1 2", 10, none},
		{"plus", "+5", 10, 5.0},
		{"minus", "-5", 10, -5.0},
		{"sign alone", "-", 10, none},
		{"empty", "", 10, none},
		{"leading zeros are decimal", "0010", 10, 10.0},
		{"fraction", "1.5", 10, 1.5},
		{"trailing point", "1.", 10, 1.0},
		{"leading point", ".5", 10, 0.5},
		{"point alone", ".", 10, none},
		{"exponent", "1e5", 10, 1e5},
		{"upper exponent with sign", "1E+2", 10, 100.0},
		{"negative exponent", "25e-2", 10, 0.25},
		{"exponent without digits", "1e", 10, none},
		{"exponent sign without digits", "1e-", 10, none},
		{"fractional exponent", "1e5.5", 10, none},
		{"overflow to inf", "1e400", 10, math.Inf(1)},
		{"underflow to zero", "1e-400", 10, 0.0},
		{"second sign is Java's", "--1", 10, 1.0},
		{"plus then minus", "+-1", 10, -1.0},
		{"space after the sign", "- 1", 10, none},
		{"words are no numbers", "inf", 10, none},
		{"nan is no number", "nan", 10, none},
		{"underscores", "1_0", 10, none},
		{"binary prefix", "0b1", 10, none},
		{"hex", "0x1F", 10, 31.0},
		{"hex upper X", "0X1f", 10, 31.0},
		{"negative hex", "  -0x10  ", 10, -16.0},
		{"hex prefix alone", "0x", 10, none},
		{"sign after the prefix", "0x-1", 10, none},
		{"hex fraction", "0x.8", 10, 0.5},
		{"hex with point", "0x1.8", 10, 1.5},
		{"hex exponent", "0x1p4", 10, 16.0},
		{"hex negative exponent", "0x1P-1", 10, 0.5},
		{"hex exponent without digits", "0x1p", 10, none},
		{"hex point alone", "0x.", 10, none},
		{"hex two points", "0x1.2.3", 10, none},
		{"hex wraps to -1", "0xffffffffffffffff", 10, -1.0},
		{"hex wraps to 0", "0x10000000000000000", 10, 0.0},
		{"2^63 wraps negative", "0x8000000000000000", 10, -9223372036854775808.0},
		{"decimal wraps", "99999999999999999999", 10, 7766279631452241919.0},
		{"decimal wraps negative", "12345678901234567890", 10, -6101065172474983726.0},
		{"2^53+1 is a long first", "9007199254740993", 10, 9007199254740992.0},
		{"base 16 without prefix", "ff", 16, 255.0},
		{"base 16 with prefix", "0xff", 16, 255.0},
		{"base 16 fraction", "1.8", 16, 1.5},
		{"base 16 reads e as a digit", "1e1", 16, 481.0},
		{"base 2", "101", 2, 5.0},
		{"digit past the base", "12", 2, none},
		{"base 2 has no prefix", "0x1", 2, none},
		{"base 36", "zz", 36, 1295.0},
		{"base 36 upper", "ZZ", 36, 1295.0},
		{"base 8 fraction", "1.5", 8, none},
		{"base 1", "1", 1, none},
		{"base 37", "1", 37, none},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := ParseNumber(c.in, c.base)
			if c.want == none {
				assert.False(t, ok, "got %v", got)
				return
			}
			if assert.True(t, ok) {
				assert.Equal(t, c.want, got)
			}
		})
	}
}
