package cli

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/alecthomas/kong"
)

// numberFlag reads a whole-number (int) or number (float64) flag's value, refused with an
// example, the flag's default when it has one; kong's own words were Go's parser's
// (`expected a valid 64 bit int but got "lots"`), unlike every other flag's.
var numberFlag = kong.MapperFunc(func(ctx *kong.DecodeContext, target reflect.Value) error {
	s, err := popSigned(ctx.Scan, "number", readsAsNumber)
	if err != nil {
		return err
	}
	kind := "a whole number"
	switch target.Kind() {
	case reflect.Float32, reflect.Float64:
		kind = "a number"
		var f float64
		f, err = strconv.ParseFloat(s, target.Type().Bits())
		if err == nil && math.IsNaN(f) {
			// Go reads "NaN" as a number, which every limit compares false with: a rate of
			// NaN was taken, and no check of its range could refuse it.
			err = strconv.ErrSyntax
		}
		if err == nil {
			target.SetFloat(f)
		}
	default:
		var n int64
		if n, err = strconv.ParseInt(s, 10, target.Type().Bits()); err == nil {
			target.SetInt(n)
		}
	}
	if err == nil {
		return nil
	}
	if err := untrimmedValue(s); err != nil {
		return err
	}
	why := fmt.Sprintf("%q is not %s", s, kind)
	if errors.Is(err, strconv.ErrRange) {
		why = fmt.Sprintf("%q is out of range", s)
	}
	if ctx.Value.HasDefault && ctx.Value.Default != "" {
		return fmt.Errorf("%s: give one such as %s (its default)", why, ctx.Value.Default)
	}
	return errors.New(why)
})

// popSigned takes a number or duration flag's value off scan, a negative one after a space
// too (`--upgrade-rate -1`, which the README says turns the limit off; `--expires -1h`, told
// its range): kong reads "-1" there as a short flag, and answered `expected number value but
// got "-1" (short flag)`, a usage error, where `--upgrade-rate=-1` worked. No flag of
// trap-sandbox's is a digit, so a word that reads as a value (reads) is one; any other word
// starting with - is still a flag, and kong's words say the value is missing.
func popSigned(scan *kong.Scanner, kind string, reads func(string) bool) (string, error) {
	if next := scan.Peek(); next.InferredType() == kong.ShortFlagToken && reads(next.String()) {
		scan.Pop()
		return next.String(), nil
	}
	var s string
	err := scan.PopValueInto(kind, &s)
	return s, err
}

// readsAsNumber is whether s is a number, for popSigned.
func readsAsNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
