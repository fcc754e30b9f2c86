package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"fakecraft/computer"
	"fakecraft/computer/machine"
	"fakecraft/fakecrafttest"
	"fakecraft/httpapi"

	"tests/internal/harness"
	"tests/internal/repo"
)

// Test bounds and fixtures.
const (
	// testTimeout bounds each test's waits and its computers; it is only reached when something
	// is broken. Every wait is on an event (a transcript line, an exit), so it is a safety net
	// far above a starved machine's run (a restart test that takes 5 s alone took over 20 s
	// under -race on 2 shared cores).
	testTimeout = 3 * time.Minute
	// timeScale runs the computers' clocks 4x fast: the daemon's 5 s reconnect delay and the
	// command's 10 s request timeout take 1.25 s and 2.5 s of real time. A faster clock would
	// leave a loaded machine too little real time to answer a request.
	timeScale = 4
	// sandboxPassword is the gateway's --password in tests that turn auth on.
	sandboxPassword = "sandbox-pw-e2e-5c1d"
	// shortProbeTimeout keeps the stalled-opencode probe well under the command's timeout.
	shortProbeTimeout = "300ms"
)

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// startGateway starts the real gateway with auth on (sandboxPassword), probing opencodeURL.
func startGateway(t testing.TB, opencodeURL string, args ...string) *harness.Gateway {
	t.Helper()
	base := []string{"--password", sandboxPassword, "--opencode-url", opencodeURL}
	return harness.Start(t, gatewayBin, harness.Options{Args: append(base, args...)})
}

// computerOptions is a trapos computer with the packages' autostart daemons, pointed at g
// with password, running program with args.
func computerOptions(t testing.TB, g *harness.Gateway, password, program string, args ...string) machine.Options {
	t.Helper()
	return computerOptionsAt(t, "ws://"+g.Addr, password, program, args...)
}

// computerOptionsAt is computerOptions for a gateway at url (sandbox.url).
func computerOptionsAt(t testing.TB, url, password, program string, args ...string) machine.Options {
	t.Helper()
	root, err := repo.Root()
	require.NoError(t, err)
	auto, err := machine.Autostart(filepath.Join(root, "packages"), nil)
	require.NoError(t, err)
	require.Contains(t, auto, "/servers/sandbox.lua", "the trapos-sandbox package must autostart its daemon")
	return machine.Options{
		Root: filepath.Join(root, "trapos"),
		Settings: map[string]string{
			"sandbox.url":      url,
			"sandbox.password": password,
		},
		TimeScale: timeScale,
		HTTP:      httpapi.Options{AllowPrivate: true},
		Program:   program,
		Args:      args,
		Autostart: auto,
	}
}

// runCommand boots a computer running opts to completion and returns its outcome and transcript.
func runCommand(ctx context.Context, t *testing.T, opts machine.Options) (bool, string) {
	t.Helper()
	res, out := fakecrafttest.Run(ctx, t, opts)
	require.NoError(t, res.Err, "bios failure; transcript:\n%s", out)
	require.True(t, res.Reported, "the shell reported no outcome; transcript:\n%s", out)
	return res.OK, out
}

// lines are the transcript's non-empty lines, trailing spaces trimmed.
func lines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimRight(l, " \r")
		if l != "" {
			ls = append(ls, l)
		}
	}
	return ls
}

// hangingScreen is how sandbox status and health show the logical lines on the computer's
// 51-column terminal (libsandboxlayout.hangingRows): wrapped as screen wraps them, each row
// after a line's first indented by two columns, so that no row of a gateway's words starts
// where a line of the client's does.
func hangingScreen(logical ...string) []string { return wrapped("  ", logical) }

// screen is how print shows the logical lines on the computer's 51-column terminal.
func screen(logical ...string) []string { return wrapped("", logical) }

// wrapped word-wraps each logical line to the computer's 51 columns as CC's print does (a word
// that does not fit starts a new row; the space before it is dropped), each row after a line's
// first starting with indent. Words here are never longer than a row.
func wrapped(indent string, logical []string) []string {
	var rows []string
	for _, l := range logical {
		row := ""
		for _, w := range strings.Split(l, " ") {
			switch {
			case row == "" || row == indent:
				row += w
			case len(row)+1+len(w) > computer.TermWidth:
				rows = append(rows, row)
				row = indent + w
			default:
				row += " " + w
			}
		}
		rows = append(rows, row)
	}
	return rows
}
