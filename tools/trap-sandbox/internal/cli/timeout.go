package cli

import (
	"fmt"
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
	var s string
	if err := ctx.Scan.PopValueInto("duration", &s); err != nil {
		return err
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration: give one such as 10s or 1500ms", s)
	}
	if d <= 0 || d > computer.MaxTimeout {
		return fmt.Errorf("%s is out of range: give more than 0 and at most %ds", s, int(computer.MaxTimeout.Seconds()))
	}
	*t = CallTimeout(d)
	return nil
}
