package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"
)

// A command that fails prints one error line on stderr, its last, and exits with status 1
// (ExitError); tools/trap-sandbox/README.md says so for the user:
//
//	trap-sandbox: WHAT: WHY
//
// WHAT names the command that failed, so that a script's log (or an operator who ran several)
// can tell which: the command's words (accounts add, tokens revoke, serve), or, for a command
// that acts on a computer, the computer and the command with what it acted on
// (computer 7:kitchen ls /), or what a list was of (list computers). WHY is what went wrong,
// and then what to do about it where there is something to do. The other lines a command may
// print on stderr before it, notes and warnings, start "trap-sandbox: " alone
// ("trap-sandbox: warning: …"). A usage error (exit status 2: ReportUsageError) is told
// before any command runs, with the usage.
//
// A command that completed but left something out (a tree copy's LeftOut) is no failure: it
// exits with status 3 (ExitLeftOut) and no error line, its own last line having said it.
//
// runCommand names every command's error, so that none is left out: an error whose WHAT is
// more than the command's words (a computer's, a list's) is named where it is made, by named.

// commandError is an error that names its command: its text is WHAT: WHY.
type commandError struct {
	what string
	err  error
}

func (e *commandError) Error() string { return e.what + ": " + e.err.Error() }

func (e *commandError) Unwrap() error { return e.err }

// named is err as the failure of what (WHAT: WHY), or err itself when it names its command
// already: a failure passed up through another command's words is named once.
func named(what string, err error) error {
	if err == nil || errors.As(err, new(*commandError)) {
		return err
	}
	return &commandError{what: what, err: err}
}

// namedf is named with WHY formatted as fmt.Errorf formats it.
func namedf(what, format string, args ...any) error {
	return named(what, fmt.Errorf(format, args...))
}

// LeftOut is the end of a copy of a tree (put -r, get -r) that completed but left out N of the
// entries it was asked to copy, each said on stderr and counted in its total, its last line
// (tally.finish): ReportError gives it ExitLeftOut and no line of its own, as the total said it.
type LeftOut struct{ N int }

func (e *LeftOut) Error() string { return fmt.Sprintf("%d left out of the copy (said above)", e.N) }

// ReportError ends a command that returned err (not nil) as main does: it writes err's line on
// stderr, WHAT: WHY, and returns ExitError, or, for a copy that left something out (LeftOut),
// writes nothing and returns ExitLeftOut.
func ReportError(err error, stderr io.Writer) int {
	if _, ok := errors.AsType[*LeftOut](err); ok {
		return ExitLeftOut
	}
	fmt.Fprintln(stderr, ErrorPrefix(stderr)+"trap-sandbox:", err)
	return ExitError
}

// RunCommand runs the command kctx selected, as main does, and returns its error named by the
// command's words (commandWords) unless it names its command already.
func RunCommand(kctx *kong.Context) error {
	return named(commandWords(kctx), kctx.Run())
}

// commandWords is the command kctx selected as typed, without its arguments: "accounts add",
// "tokens revoke", "serve".
func commandWords(kctx *kong.Context) string {
	var words []string
	for _, w := range strings.Fields(kctx.Command()) {
		if !strings.HasPrefix(w, "<") {
			words = append(words, w)
		}
	}
	return strings.Join(words, " ")
}
