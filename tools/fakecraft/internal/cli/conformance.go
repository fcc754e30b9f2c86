package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"fakecraft/conformance"
)

// ConformanceCmd is `fakecraft conformance`.
type ConformanceCmd struct {
	TestROM     string        `arg:"" name:"test-rom" help:"CC: Tweaked's test-rom directory (projects/core/src/test/resources/test-rom of its source)." type:"existingdir"`
	Specs       []string      `arg:"" optional:"" name:"spec" help:"Spec files or directories relative to test-rom/spec (e.g. apis/fs_spec.lua, modules/cc); default all."`
	Verbose     bool          `short:"v" help:"Print every test's result, and the message of each failure."`
	Transcript  bool          `help:"Copy the computers' terminal output to stderr."`
	TestTimeout time.Duration `help:"Time limit of one test." default:"10s"`
	TimeLimit   time.Duration `help:"Time limit of the whole run (0: none)." default:"10m"`
}

// Run runs the test-rom and prints the score.
func (c *ConformanceCmd) Run(e *env) error {
	ctx, cancel, err := limited(c.TimeLimit)
	if err != nil {
		return err
	}
	defer cancel()
	opts := conformance.Options{TestROM: c.TestROM, Specs: c.Specs, TestTimeout: c.TestTimeout}
	if c.Transcript {
		opts.Transcript = e.stderr
	}
	if c.Verbose {
		opts.OnResult = func(r conformance.Result) { printResult(e.stdout, r) }
	}
	rep, err := conformance.Run(ctx, opts)
	printReport(e.stdout, rep, c.Verbose)
	if err != nil && ctx.Err() != nil {
		return stopped(ctx, c.TimeLimit) // not "context canceled": the time limit or a signal
	}
	if err != nil {
		return &exitError{code: ExitFailed, msg: err.Error()}
	}
	if _, failed, _ := rep.Count(); failed > 0 {
		return &exitError{code: ExitFailed}
	}
	return nil
}

// printResult prints one test's status and name, then a failure's message indented.
func printResult(w io.Writer, r conformance.Result) {
	fmt.Fprintf(w, "%-7s %s › %s\n", r.Status, r.File, r.Name)
	if r.Message != "" && r.Status != conformance.StatusOK {
		fmt.Fprintf(w, "        %s\n", strings.ReplaceAll(strings.TrimSpace(r.Message), "\n", "\n        "))
	}
}

// printReport prints the failures (already printed as they came when verbose), the score
// per spec file, then the total as `N passed, N failed, N skipped`.
func printReport(w io.Writer, rep conformance.Report, verbose bool) {
	for _, r := range rep.Results {
		if !verbose && r.Status != conformance.StatusOK && r.Status != conformance.StatusPending {
			printResult(w, r)
		}
	}
	files, by := rep.ByFile()
	for _, f := range files {
		p, fl, s := by[f].Count()
		fmt.Fprintf(w, "%s: %d passed, %d failed, %d skipped\n", f, p, fl, s)
	}
	p, fl, s := rep.Count()
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", p, fl, s)
}
