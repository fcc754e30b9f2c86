package cli

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"time"

	"github.com/alecthomas/kong"

	"trap-sandbox/internal/account"
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
	var tooLong durationTooLong
	if err != nil && !errors.As(err, &tooLong) {
		return err
	}
	if err != nil || d <= 0 || d > computer.MaxTimeout {
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
	s, err := popSigned(ctx.Scan, "duration", func(s string) bool {
		_, err := time.ParseDuration(s)
		return err == nil
	})
	if err != nil {
		return "", 0, err
	}
	d, err := parseDuration(s)
	return s, d, err
}

// Lifetime is an --expires: how long a token or an enrollment key lasts, 0 for ever, at most
// account.MaxTokenTTL (the API's cap on both). A value past the cap, negative, or too long for
// a Go duration at all (3000000h) is refused when the command line is read, with the range:
// "is not a duration" said of 3000000h sent the user looking for a typo.
type Lifetime time.Duration

// Duration is the lifetime as a time.Duration (0: never expires).
func (l Lifetime) Duration() time.Duration { return time.Duration(l) }

// Decode implements kong.MapperValue: a Go duration from 0 to account.MaxTokenTTL.
func (l *Lifetime) Decode(ctx *kong.DecodeContext) error {
	s, d, err := scanDuration(ctx)
	var tooLong durationTooLong
	if errors.As(err, &tooLong) || err == nil && (d < 0 || d > account.MaxTokenTTL) {
		return fmt.Errorf("%s is out of range: give a lifetime from 1s to %s, or 0 for one that never expires", s, maxTokenTTL())
	}
	if err != nil {
		return err
	}
	*l = Lifetime(d)
	return nil
}

// durationSyntax is the form time.ParseDuration reads (a sign, then numbers each with a unit),
// to tell a value too long for a time.Duration, which Go's parser refuses in the same words
// as "soon", from one that is no duration.
var durationSyntax = regexp.MustCompile(`^[-+]?((\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$`)

// durationTooLong is parseDuration's error for a duration past time.Duration's range: the
// value as given.
type durationTooLong string

func (s durationTooLong) Error() string {
	return fmt.Sprintf("%q is longer than a duration can be: give at most %s (about 292 years)", string(s), hours(maxDuration))
}

// parseDuration is a Go duration (10s, 1m, 1500ms, 720h), refused with examples, or, when it
// is one past time.Duration's range (about 292 years), with that range.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil && durationSyntax.MatchString(s) {
		return 0, durationTooLong(s)
	}
	if err != nil {
		if blanks := untrimmedValue(s); blanks != nil {
			return 0, blanks
		}
		if meant := durationMeant(s); meant != "" {
			return 0, fmt.Errorf("%q is not a duration: %s", s, meant)
		}
		return 0, fmt.Errorf("%q is not a duration: give one such as 10s, 1500ms, 5m or 720h", s)
	}
	return d, nil
}

// daysAndMore are the units people write that a Go duration has not (30d for a token's
// month), in hours, and daysOrMore reads a value of one of them.
var (
	daysAndMore = map[string]int64{"d": 24, "w": 7 * 24, "y": 365 * 24}
	daysOrMore  = regexp.MustCompile(`^(\d{1,6})(d|w|y)$`)
	bareNumber  = regexp.MustCompile(`^\d{1,9}$`)
)

// durationMeant is the duration a value that is none most likely meant, as the fix to give, or
// "": a number of days, weeks or years in hours (30d: "give 720h"), a number without its unit
// with the units it may mean.
func durationMeant(s string) string {
	if m := daysOrMore.FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return fmt.Sprintf("a duration's largest unit is h (hours): give %dh", n*daysAndMore[m[2]])
	}
	if bareNumber.MatchString(s) {
		return fmt.Sprintf("give it with its unit: %ss (seconds), %sm (minutes) or %sh (hours)", s, s, s)
	}
	return ""
}

// maxDuration is the longest time.Duration, in whole hours as a flag takes it (2562047h).
const maxDuration = time.Duration(1<<63-1) / time.Hour * time.Hour
