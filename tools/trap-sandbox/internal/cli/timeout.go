package cli

import (
	"fmt"
	"reflect"
	"time"

	"github.com/alecthomas/kong"

	"trap-sandbox/internal/computer"
)

// CallTimeout is a client command's --timeout: how long the whole call may take, more than 0
// and at most computer.MaxTimeout. A value out of that range is refused when the command line
// is read, with the range, rather than changed behind the user's back (90s would be 60 s, 0s
// the default).
type CallTimeout time.Duration

// Duration is the timeout as a time.Duration.
func (t CallTimeout) Duration() time.Duration { return time.Duration(t) }

// Decode implements kong.MapperValue: a Go duration (10s, 1m, 1500ms) in range.
func (t *CallTimeout) Decode(ctx *kong.DecodeContext) error {
	s, d, err := scanDuration(ctx)
	if err != nil {
		return err
	}
	if d <= 0 || d > computer.MaxTimeout {
		return fmt.Errorf("%s is out of range: give more than 0 and at most %ds", s, int(computer.MaxTimeout.Seconds()))
	}
	*t = CallTimeout(d)
	return nil
}

// durationFlag reads every time.Duration flag and variable (--ping-period, --expires,
// SANDBOX_HELLO_TIMEOUT, …) with parseDuration's answer in place of kong's, which quoted Go's
// parser (`expected duration but got "soon": time: invalid duration "soon"`) and gave no
// example of what it takes. Ranges are each command's to check.
var durationFlag = kong.MapperFunc(func(ctx *kong.DecodeContext, target reflect.Value) error {
	_, d, err := scanDuration(ctx)
	if err != nil {
		return err
	}
	target.SetInt(int64(d))
	return nil
})

// scanDuration takes a flag's value off ctx and reads it as a duration (parseDuration): the
// value as given, for messages, and the duration.
func scanDuration(ctx *kong.DecodeContext) (string, time.Duration, error) {
	var s string
	if err := ctx.Scan.PopValueInto("duration", &s); err != nil {
		return "", 0, err
	}
	d, err := parseDuration(s)
	return s, d, err
}

// parseDuration is a Go duration (10s, 1m, 1500ms, 720h), refused with examples.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: give one such as 10s, 1500ms, 5m or 720h", s)
	}
	return d, nil
}
