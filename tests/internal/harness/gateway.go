// Package harness runs the real trap-sandbox gateway binary as a child process and talks to it
// the way a trapos computer does: raw WebSocket frames, no Lua. Integration and end-to-end
// tests share it.
package harness

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"tests/internal/child"
	"tests/internal/repo"
)

// Timeouts of the process harness. They bound waits that only run long when something is broken.
const (
	// BuildTimeout bounds `go build` of the gateway (a cold build on a loaded 2-core box).
	BuildTimeout = 3 * time.Minute
	// StartTimeout bounds how long a started gateway may take to log its listening line.
	StartTimeout = 20 * time.Second
	// StopTimeout bounds a graceful stop after SIGTERM before the harness kills the process.
	// The gateway's own shutdown bound is 5 s by default.
	StopTimeout = 10 * time.Second
)

// GatewayPackage is the gateway's main package, relative to the repository root.
const GatewayPackage = "./tools/trap-sandbox"

// configEnvPrefixes name the environment variables that configure the gateway. They are
// stripped from the child's environment so a developer's shell cannot change a test's outcome.
var configEnvPrefixes = []string{"SANDBOX_", "OPENCODE_"}

// listeningLine matches the slog text line the gateway logs once it serves; addr is host:port.
var listeningLine = regexp.MustCompile(`(?:^|\s)msg=listening(?:\s|$)`)
var addrAttr = regexp.MustCompile(`(?:^|\s)addr=("?)([^\s"]+)"?`)

// BuildGateway compiles the gateway into dir and returns the binary's path. With race, the
// gateway is built with the race detector: a race then fails the process's exit status (66),
// which Stop reports.
func BuildGateway(ctx context.Context, dir string, race bool) (string, error) {
	return BuildGatewayTags(ctx, dir, race, "")
}

// BuildGatewayTags is BuildGateway with build tags (a comma-separated list, "" for none), e.g.
// benchprofile for the profiles tests/bench takes.
func BuildGatewayTags(ctx context.Context, dir string, race bool, tags string) (string, error) {
	root, err := repo.Root()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, BuildTimeout)
	defer cancel()
	bin := filepath.Join(dir, "trap-sandbox")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, GatewayPackage)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", GatewayPackage, err, out)
	}
	return bin, nil
}

// Options configure one gateway process.
type Options struct {
	// Listen is the --listen address; empty means 127.0.0.1:0 (a free port).
	Listen string
	// Args are extra command-line flags, e.g. "--password", "s3cret".
	Args []string
	// Env are extra KEY=VALUE environment entries (config variables of the caller's own
	// environment are removed first).
	Env []string
}

// Gateway is one running gateway process. Stop it with Stop; Start registers a cleanup that
// does so and fails the test if the process did not exit cleanly.
type Gateway struct {
	// Addr is the host:port the gateway logged as its listening address.
	Addr string

	proc *child.Process
	log  *logWatcher
}

// Start runs the binary with opts and waits until it logs that it is listening.
func Start(t testing.TB, bin string, opts Options) *Gateway {
	t.Helper()
	// Each gateway keeps its accounts in its own directory unless the test names one, so no
	// test reads another's (or the developer's own ~/.local/share/trap-sandbox).
	opts.Env = append([]string{"SANDBOX_DATA_DIR=" + t.TempDir()}, opts.Env...)
	g, err := start(bin, opts)
	if g != nil {
		t.Cleanup(func() {
			if err := g.Stop(); err != nil {
				t.Errorf("gateway did not stop cleanly: %v", err)
			}
			if t.Failed() {
				t.Logf("gateway log (%s):\n%s", g.Addr, g.Log())
			}
		})
	}
	if err != nil {
		t.Fatalf("start gateway: %v", err)
	}
	return g
}

func start(bin string, opts Options) (*Gateway, error) {
	listen := opts.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	g := &Gateway{log: newLogWatcher()}
	cmd := exec.Command(bin, append([]string{"--listen", listen}, opts.Args...)...)
	// A race-built gateway otherwise sleeps 1 s at exit, once per test.
	cmd.Env = append(append(CleanEnv(), "GORACE=atexit_sleep_ms=0"), opts.Env...)
	cmd.Stderr = g.log
	cmd.Stdout = g.log
	proc, err := child.Start("gateway", cmd)
	if err != nil {
		return nil, err
	}
	g.proc = proc

	timer := time.NewTimer(StartTimeout)
	defer timer.Stop()
	select {
	case addr := <-g.log.listening:
		g.Addr = addr
		return g, nil
	case <-proc.Exited():
		return g, fmt.Errorf("gateway exited before listening (%v):\n%s", proc.ExitErr(), g.Log())
	case <-timer.C:
		return g, fmt.Errorf("no listening line within %s:\n%s", StartTimeout, g.Log())
	}
}

// Stop sends SIGTERM and waits for the process; it kills the process if it outlives
// StopTimeout. It returns an error unless the process exited with status 0 in time. Later
// calls return the first result.
func (g *Gateway) Stop() error { return g.proc.Stop(StopTimeout) }

// Hangup sends SIGHUP (the terminal or SSH session that started the gateway closed) and
// waits for the process as Stop does, with the same result.
func (g *Gateway) Hangup() error { return g.proc.StopWith(syscall.SIGHUP, StopTimeout) }

// Freeze stops the process with SIGSTOP: its sockets stay open and it answers nothing, as a
// frozen machine or a cut network looks to its peers. The test's cleanup thaws it.
func (g *Gateway) Freeze(t testing.TB) {
	t.Helper()
	if err := g.proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("freeze the gateway: %v", err)
	}
	t.Cleanup(g.Thaw)
}

// Thaw lets a frozen process run again (SIGCONT); it does nothing to a running one.
func (g *Gateway) Thaw() { _ = g.proc.Signal(syscall.SIGCONT) }

// Kill ends the process with SIGKILL (a crash: no shutdown, no close frames) and waits for it;
// the test's cleanup then does not report it.
func (g *Gateway) Kill() error { return g.proc.Kill() }

// Exited is closed when the process has exited.
func (g *Gateway) Exited() <-chan struct{} { return g.proc.Exited() }

// Log returns everything the process wrote to stderr and stdout so far.
func (g *Gateway) Log() string { return g.log.String() }

// WaitLog waits until the process has written s (a line logged after the event a test saw,
// or read from its pipe later than that event arrived), or ctx ends.
func (g *Gateway) WaitLog(ctx context.Context, s string) error {
	for {
		log, grew := g.log.snapshot()
		if strings.Contains(log, s) {
			return nil
		}
		select {
		case <-grew:
		case <-ctx.Done():
			return fmt.Errorf("the gateway's log has no %q: %w", s, ctx.Err())
		}
	}
}

// WebSocketURL is the computers' endpoint, ws://ADDR/trapos/ws.
func (g *Gateway) WebSocketURL() string { return "ws://" + g.Addr + "/trapos/ws" }

// URL returns http://ADDR followed by path.
func (g *Gateway) URL(path string) string { return "http://" + g.Addr + path }

// computersListening matches the line a gateway started with --computers-listen logs for that
// listener, before its "listening" line.
var computersListening = regexp.MustCompile(`(?:^|\s)msg="listening for computers only" addr=(\S+)`)

// ComputersAddr is the host:port of the gateway's computers-only listener (--computers-listen)
// as it logged it, or "" when it has none.
func (g *Gateway) ComputersAddr() string {
	if m := computersListening.FindStringSubmatch(g.Log()); m != nil {
		return m[1]
	}
	return ""
}

// Port returns the port of Addr.
func (g *Gateway) Port() string {
	_, port, _ := net.SplitHostPort(g.Addr)
	return port
}

// HTTPClient returns a client that keeps no idle connections, so no transport goroutine
// outlives a test (goleak).
func HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: StartTimeout}
}

// CleanEnv returns this process's environment without the gateway's configuration variables.
func CleanEnv() []string { return child.CleanEnv(configEnvPrefixes...) }

// logWatcher collects the child's output and reports the address of the first listening line.
type logWatcher struct {
	mu        sync.Mutex // guards buf and partial
	buf       bytes.Buffer
	partial   []byte
	listening chan string // buffered(1); receives the first listening address
	found     bool
	grew      chan struct{} // closed (and replaced) by each write
}

func newLogWatcher() *logWatcher {
	return &logWatcher{listening: make(chan string, 1), grew: make(chan struct{})}
}

// Write implements io.Writer; exec calls it from one goroutine, tests read String from others.
func (w *logWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	close(w.grew)
	w.grew = make(chan struct{})
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		if w.found || !listeningLine.MatchString(line) {
			continue
		}
		if m := addrAttr.FindStringSubmatch(line); m != nil {
			w.found = true
			w.listening <- m[2]
		}
	}
	return len(p), nil
}

func (w *logWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// snapshot returns the output so far and a channel closed when more arrives.
func (w *logWatcher) snapshot() (string, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String(), w.grew
}
