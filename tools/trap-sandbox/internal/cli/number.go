package cli

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/alecthomas/kong"
)

// numberFlag reads a whole-number (int) or number (float64) flag's value, refused with an
// example, the flag's default when it has one; kong's own words were Go's parser's
// (`expected a valid 64 bit int but got "lots"`), unlike every other flag's.
var numberFlag = kong.MapperFunc(func(ctx *kong.DecodeContext, target reflect.Value) error {
	var s string
	if err := ctx.Scan.PopValueInto("number", &s); err != nil {
		return err
	}
	var err error
	kind := "a whole number"
	switch target.Kind() {
	case reflect.Float32, reflect.Float64:
		kind = "a number"
		var f float64
		if f, err = strconv.ParseFloat(s, target.Type().Bits()); err == nil {
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
	why := fmt.Sprintf("%q is not %s", s, kind)
	if errors.Is(err, strconv.ErrRange) {
		why = fmt.Sprintf("%q is out of range", s)
	}
	if ctx.Value.HasDefault && ctx.Value.Default != "" {
		return fmt.Errorf("%s: give one such as %s (its default)", why, ctx.Value.Default)
	}
	return errors.New(why)
})
