// Package conformance runs CC: Tweaked's own test suite (the test-rom's mcfly specs) on a
// fakecraft computer, driving mcfly the way CC: Tweaked's ComputerTestDelegate does: a
// startup program loads mcfly with a cct_test API present; mcfly registers every test with
// cct_test.start, then runs one test per cct_test_run event and reports it with
// cct_test.submit. The test-rom is not part of this repository: callers pass its directory.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccstr"
	"fakecraft/computer"
	"fakecraft/computer/machine"
	"fakecraft/fsapi"
	"fakecraft/host"
)

// Statuses of a test, as mcfly submits them.
const (
	StatusOK      = "pass"
	StatusFail    = "fail"
	StatusError   = "error"
	StatusPending = "pending"
)

// DefaultTestTimeout is how long one test may run, CC's harness's TIMEOUT.
const DefaultTestTimeout = 10 * time.Second

// startupSource is the harness's startup.lua, word for word in effect.
const startupSource = "loadfile('test-rom/mcfly.lua', nil, _ENV)('test-rom/spec') cct_test.finish()"

// startupPath is where the startup program lives on the computer.
const startupPath = "/startup.lua"

// mountPoint is where the test-rom is mounted, as the harness mounts it.
const mountPoint = "/test-rom"

// driveCapacity is the size of the test computer's drive: CC's harness mounts its root as
// a writable mount of 10,000,000 bytes (not the server default that fakecraft uses), and
// fs_spec checks fs.getCapacity("") against it.
const driveCapacity = 10_000_000

// specPrefix is what definitions start with, before the spec file's path.
const specPrefix = "/test-rom/spec/"

// Options configures a conformance run.
type Options struct {
	// TestROM is the host directory of the test-rom (holding mcfly.lua and spec/).
	TestROM string
	// Specs limit the run to these spec files or directories, relative to spec/ (e.g.
	// "apis/fs_spec.lua", "modules/cc"). Empty runs everything.
	Specs []string
	// TestTimeout bounds one test; zero means DefaultTestTimeout.
	TestTimeout time.Duration
	// Transcript receives the computers' terminal output. May be nil.
	Transcript io.Writer
	// OnResult, when set, is told each result as soon as it is known.
	OnResult func(Result)
}

// Result is one test's outcome, as text (UTF-8: the computer's bytes as ccstr.Shown shows
// them).
type Result struct {
	// Name is mcfly's name: the describe/it path joined by " › ".
	Name string
	// File is the spec file, relative to spec/.
	File string
	// Status is one of the Status constants.
	Status string
	// Message is the failure message (and trace), if any.
	Message string
}

// Report is the outcome of a whole run, in the order tests ran.
type Report struct {
	Results []Result
	// Boots counts the computers the run needed (a test that hangs or stops the computer
	// costs one more).
	Boots int
}

// Count returns passed, failed (fail or error) and skipped (pending) counts.
func (r Report) Count() (passed, failed, skipped int) {
	for _, res := range r.Results {
		switch res.Status {
		case StatusOK:
			passed++
		case StatusPending:
			skipped++
		default:
			failed++
		}
	}
	return
}

// ByFile groups the results by spec file, files sorted.
func (r Report) ByFile() (files []string, by map[string]Report) {
	by = map[string]Report{}
	for _, res := range r.Results {
		rep, ok := by[res.File]
		if !ok {
			files = append(files, res.File)
		}
		rep.Results = append(rep.Results, res)
		by[res.File] = rep
	}
	sort.Strings(files)
	return files, by
}

// test is one registered test.
type test struct {
	key  string // mcfly's name, parts joined by NUL
	idx  int
	file string
}

// Run runs the selected tests, booting a fresh computer whenever one hangs or stops.
func Run(ctx context.Context, opts Options) (Report, error) {
	if _, err := os.Stat(filepath.Join(opts.TestROM, "mcfly.lua")); err != nil {
		return Report{}, fmt.Errorf("%s is not a test-rom (no mcfly.lua): %w", opts.TestROM, err)
	}
	if opts.TestTimeout == 0 {
		opts.TestTimeout = DefaultTestTimeout
	}
	r := &runner{opts: opts, done: map[string]bool{}}
	for {
		if err := ctx.Err(); err != nil {
			return r.report, err
		}
		progressed, finished, err := r.boot(ctx)
		r.report.Boots++
		if err != nil {
			return r.report, err
		}
		if finished || r.tests == nil {
			if r.tests == nil {
				return r.report, errors.New("mcfly registered no tests (see the transcript)")
			}
			return r.report, nil
		}
		if !progressed {
			return r.report, errors.New("the computer stopped before running a test")
		}
	}
}

// runner is the state of one run across its computers.
type runner struct {
	opts   Options
	tests  []test // selected tests, in mcfly's registration order; nil before the first start
	done   map[string]bool
	report Report
}

// selected says whether a spec file is in the run.
func (r *runner) selected(file string) bool {
	if len(r.opts.Specs) == 0 {
		return true
	}
	for _, s := range r.opts.Specs {
		s = strings.Trim(filepath.ToSlash(s), "/")
		if file == s || strings.HasPrefix(file, s+"/") {
			return true
		}
	}
	return false
}

// fileOf is the spec file of a test: from its definition ("/test-rom/spec/x_spec.lua:12"),
// or its name when mcfly could not load the file (the name is then the file). mcfly writes
// the definition from debug's short_src, which Cobalt (and fakecraft) cut to "..." and the
// last 22 bytes of a longer path (".../apis/http_spec.lua:12"): such a one is the file of
// files (the test-rom's, relative to it) whose path ends so.
func fileOf(name string, def lua.LValue, files []string) string {
	s, ok := def.(lua.LString)
	if !ok {
		return name
	}
	d := string(s)
	if i := strings.LastIndexByte(d, ':'); i >= 0 {
		d = d[:i]
	}
	if tail, cut := strings.CutPrefix(d, "..."); cut {
		for _, f := range files {
			if strings.HasSuffix("/test-rom/"+f, tail) {
				d = "/test-rom/" + f
				break
			}
		}
	}
	d = strings.TrimPrefix(d, "/")
	return strings.TrimPrefix(d, strings.TrimPrefix(specPrefix, "/"))
}

// luaFiles are the .lua files under dir, relative to it, slash-separated and sorted.
func luaFiles(dir string) []string {
	var files []string
	_ = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(path, ".lua") {
			if rel, err := filepath.Rel(dir, path); err == nil {
				files = append(files, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	sort.Strings(files)
	return files
}

// attributeHelperTests gives each test defined by a helper (its definition is not a spec
// file: test_helpers.lua's describe_golden calls `it` for each case of a golden file) the spec
// file that called the helper. mcfly registers tests in the order the files run them, so
// that is the spec file of the test before it (or, for a file's first tests, after it).
func attributeHelperTests(tests []test) {
	isSpec := func(t test) bool { return strings.HasSuffix(t.file, "_spec.lua") }
	for i := range tests {
		if isSpec(tests[i]) {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			if isSpec(tests[j]) {
				tests[i].file = tests[j].file
				break
			}
		}
		if isSpec(tests[i]) {
			continue
		}
		for j := i + 1; j < len(tests); j++ {
			if isSpec(tests[j]) {
				tests[i].file = tests[j].file
				break
			}
		}
	}
}

// boot runs one computer until mcfly finishes, a test hangs or the computer stops.
func (r *runner) boot(parent context.Context) (progressed, finished bool, err error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var (
		current  *test
		timedOut bool
		timer    *time.Timer
		pending  []test
	)
	stopTimer := func() {
		if timer != nil {
			timer.Stop()
		}
	}
	defer stopTimer()
	next := func(h host.Host) {
		stopTimer()
		current = nil
		for len(pending) > 0 {
			t := pending[0]
			pending = pending[1:]
			if r.done[t.key] {
				continue
			}
			current = &t
			h.QueueEvent("cct_test_run", lua.LString(t.key))
			name := t.key
			timer = time.AfterFunc(r.opts.TestTimeout, func() {
				h.Do(func(*lua.LState) {
					if current != nil && current.key == name {
						timedOut = true
						cancel()
					}
				})
			})
			return
		}
		h.QueueEvent("cct_test_run")
	}
	romFiles := luaFiles(r.opts.TestROM)
	install := func(L *lua.LState, h *computer.Env) error {
		api := L.NewTable()
		api.RawSetString("start", L.NewFunction(func(L *lua.LState) int {
			tbl := L.CheckTable(1)
			if r.tests == nil {
				var all []test
				tbl.ForEach(func(k, v lua.LValue) {
					name, ok := k.(lua.LString)
					info, ok2 := v.(*lua.LTable)
					if !ok || !ok2 {
						return
					}
					idx, _ := info.RawGetString("idx").(lua.LNumber)
					all = append(all, test{key: string(name), idx: int(idx), file: fileOf(string(name), info.RawGetString("definition"), romFiles)})
				})
				sort.Slice(all, func(i, j int) bool { return all[i].idx < all[j].idx })
				attributeHelperTests(all)
				r.tests = nil
				for _, t := range all {
					if r.selected(t.file) {
						r.tests = append(r.tests, t)
					}
				}
			}
			pending = append([]test(nil), r.tests...)
			next(h)
			return 0
		}))
		api.RawSetString("submit", L.NewFunction(func(L *lua.LState) int {
			tbl := L.CheckTable(1)
			name := lua.LVAsString(tbl.RawGetString("name"))
			if current == nil || current.key != name {
				return 0 // as the harness, ignore a result for a test not asked for
			}
			msg := lua.LVAsString(tbl.RawGetString("message"))
			if trace := lua.LVAsString(tbl.RawGetString("trace")); trace != "" {
				if msg != "" {
					msg += "\n"
				}
				msg += trace
			}
			r.record(*current, lua.LVAsString(tbl.RawGetString("status")), msg)
			progressed = true
			next(h)
			return 0
		}))
		api.RawSetString("finish", L.NewFunction(func(L *lua.LState) int {
			if current == nil {
				finished = true
			}
			return 0
		}))
		L.SetGlobal("cct_test", api)
		return nil
	}
	m, err := machine.New(machine.Options{
		Mounts:     []fsapi.Mount{{At: mountPoint, Dir: r.opts.TestROM, ReadOnly: true}},
		Files:      map[string]string{startupPath: startupSource},
		SpaceLimit: driveCapacity,
		Stdout:     r.opts.Transcript,
		Program:    startupPath,
		ExtraAPIs:  []computer.Installer{install},
		// As CC's harness does, a modem on top and a peripheral hub at the bottom.
		Peripherals: harnessPeripherals(),
		// CC's harness runs the specs on an advanced computer, under multishell.
		Multishell: true,
	})
	if err != nil {
		return false, false, err
	}
	_, runErr := m.Run(ctx)
	switch {
	case current != nil && timedOut:
		r.record(*current, StatusError, fmt.Sprintf("Timed out waiting for test (%s)", r.opts.TestTimeout))
		progressed = true
	case current != nil:
		msg := "Computer turned off mid-execution"
		if runErr != nil {
			msg += ": " + runErr.Error()
		}
		r.record(*current, StatusError, msg)
		progressed = true
	case runErr != nil && !errors.Is(runErr, computer.ErrTimeLimit):
		return progressed, finished, runErr
	}
	if err := parent.Err(); err != nil && !finished {
		return progressed, finished, err // the caller's context ended: stop here
	}
	if !finished && allDone(r) {
		finished = true
	}
	return progressed, finished, nil
}

func allDone(r *runner) bool {
	if r.tests == nil {
		return false
	}
	for _, t := range r.tests {
		if !r.done[t.key] {
			return false
		}
	}
	return true
}

// shownName is a test's key as its name: its parts (describe blocks, then the test's own
// name), which the key joins with NUL, each shown as the computer's text (ccstr.Shown draws a
// NUL as CC's font does, a blank), joined with " › ".
func shownName(key string) string {
	parts := strings.Split(key, "\x00")
	for i, p := range parts {
		parts[i] = ccstr.Shown(p)
	}
	return strings.Join(parts, " › ")
}

func (r *runner) record(t test, status, msg string) {
	r.done[t.key] = true
	// Names and messages are the computer's (CC bytes): they leave as its text does.
	res := Result{
		Name:    shownName(t.key),
		File:    ccstr.Shown(t.file),
		Status:  status,
		Message: ccstr.Shown(msg),
	}
	r.report.Results = append(r.report.Results, res)
	if r.opts.OnResult != nil {
		r.opts.OnResult(res)
	}
}
