package ccformat

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFormatNumber(t *testing.T) {
	cases := []struct {
		name string
		in   float64
		want string
	}{
		{"zero", 0, "0"},
		{"negative zero", math.Copysign(0, -1), "0"},
		{"integer", 3, "3"},
		{"negative integer", -42, "-42"},
		{"epoch millis", 1729000000000, "1729000000000"},
		{"2^53", 9007199254740992, "9007199254740992"},
		{"2^62", 4611686018427387904, "4611686018427387904"},
		{"-2^63 fits", -9223372036854775808, "-9223372036854775808"},
		{"2^63 saturates, as Java's (long) v == v holds for it", 9223372036854775808, "9223372036854775807"},
		{"past 2^63 does not fit", 1e19, "1e+19"},
		{"1e15 whole", 1e15, "1000000000000000"},
		{"1e21", 1e21, "1e+21"},
		{"0.1+0.2", 0.1 + 0.2, "0.3"},
		{"1/3", 1.0 / 3, "0.33333333333333"},
		{"half", 0.5, "0.5"},
		{"1234567.5", 1234567.5, "1234567.5"},
		{"epoch seconds", 1729000000.123, "1729000000.123"},
		{"small exponent", 1e-5, "1e-05"},
		{"1e-4 stays fixed", 1e-4, "0.0001"},
		{"1.5e-7", 1.5e-7, "1.5e-07"},
		{"fraction above 1e14", 1e14 + 0.5, "1e+14"},
		{"pi", math.Pi, "3.1415926535898"},
		{"denormal", 5e-324, "4.9406564584125e-324"},
		{"max float", math.MaxFloat64, "1.7976931348623e+308"},
		{"nan", math.NaN(), "nan"},
		{"negative nan", math.Copysign(math.NaN(), -1), "nan"},
		{"inf", math.Inf(1), "inf"},
		{"-inf", math.Inf(-1), "-inf"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, FormatNumber(tc.in))
		})
	}
}

// TestFormatNumberMatchesC compares formatG14 with glibc's printf("%.14g") on 3000 values
// (random bit patterns, random magnitudes and plain fractions) recorded in testdata.
func TestFormatNumberMatchesC(t *testing.T) {
	f, err := os.Open("testdata/printf14g.txt")
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		bitsHex, want, ok := strings.Cut(line, " ")
		require.True(t, ok, "line %q", line)
		bits, err := strconv.ParseUint(bitsHex, 16, 64)
		require.NoError(t, err)
		v := math.Float64frombits(bits)
		if !assert.Equal(t, want, formatG14(v), "value bits %s", bitsHex) {
			return
		}
		n++
	}
	require.NoError(t, sc.Err())
	assert.Greater(t, n, 2900)
}

func TestNumberLiteral(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
		{3, "3"},
		{-42, "-42"},
		{9223372036854775808, "9223372036854775807"},
		{0.5, "0x1p-1"},
		{1.5, "0x1.8p+0"},
		{-0.1, "-0x1.999999999999ap-4"},
		{123.456, "0x1.edd2f1a9fbe77p+6"},
		{1e300, "0x1.7e43c8800759cp+996"},
		{math.NaN(), "(0/0)"},
		{math.Inf(1), "1e9999"},
		{math.Inf(-1), "-1e9999"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, NumberLiteral(c.in), "%v", c.in)
	}
}
