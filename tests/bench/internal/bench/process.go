package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"trap-sandbox/testkit/profiling"

	"tests/internal/child"
)

// Bounds of the child-process handling.
const (
	// StartTimeout bounds how long a started server may take to answer /healthz.
	StartTimeout = 20 * time.Second
	// StopTimeout bounds a graceful stop after SIGTERM before the process is killed.
	StopTimeout = 10 * time.Second
	// healthPoll is the pause between /healthz polls while a server starts.
	healthPoll = 20 * time.Millisecond
	// logTailBytes is how much of a child's output is kept for error messages.
	logTailBytes = 64 << 10
)

// server is one child process serving HTTP and WebSocket on 127.0.0.1.
type server struct {
	name string
	addr string
	proc *child.Process
	log  *tailBuffer
	prof profiler // takes its profiles when Config.ProfileDir is set
	// started is how the process was started, for fresh.
	started startedAs
}

// startedAs is a server's command line and environment.
type startedAs struct {
	bin       string
	args, env []string
}

// freeAddr returns a 127.0.0.1 address whose port was free a moment ago. The tiny race with
// other programs is acceptable for a benchmark.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", fmt.Errorf("release the free port: %w", err)
	}
	return addr, nil
}

// startServer runs bin with args and env (added to a cleaned environment) and waits until
// GET http://addr/healthz answers 200.
func startServer(ctx context.Context, name, addr, bin string, args, env []string) (*server, error) {
	return startServerWithin(ctx, StartTimeout, name, addr, bin, args, env)
}

// startServerWithin is startServer with its own bound on the wait for /healthz.
func startServerWithin(ctx context.Context, timeout time.Duration, name, addr, bin string, args, env []string) (*server, error) {
	s := &server{name: name, addr: addr, log: &tailBuffer{}, started: startedAs{bin: bin, args: args, env: env}}
	if err := s.launch(ctx, timeout); err != nil {
		return nil, err
	}
	return s, nil
}

// launch starts s's process as s.started says, its output going to s.log, and waits until
// GET http://addr/healthz answers 200.
func (s *server) launch(ctx context.Context, timeout time.Duration) error {
	cmd := exec.Command(s.started.bin, s.started.args...)
	cmd.Env = append(child.CleanEnv(configEnvPrefixes...), s.started.env...)
	cmd.Stdout = s.log
	cmd.Stderr = s.log
	proc, err := child.Start(s.name, cmd)
	if err != nil {
		return err
	}
	s.proc = proc
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	for {
		resp, err := client.Get("http://" + s.addr + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-proc.Exited():
			return fmt.Errorf("%s exited before serving (%v):\n%s", s.name, proc.ExitErr(), s.log)
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("%s did not answer /healthz within %s:\n%s", s.name, timeout, s.log), s.stop())
		case <-time.After(healthPoll):
		}
	}
}

// wsURL is the computers' endpoint.
func (s *server) wsURL() string { return "ws://" + s.addr + "/trapos/ws" }

// stop sends SIGTERM, waits up to StopTimeout and then kills. Only this process is signalled.
func (s *server) stop() error { return s.proc.Stop(StopTimeout) }

// fresh stops the process and starts it again as it was started, on the same address: a
// process that has done nothing yet, whose memory no earlier phase has touched. Its output
// goes on in the same log.
func (s *server) fresh(ctx context.Context) error {
	if err := s.stop(); err != nil {
		return fmt.Errorf("%s: stop it for a fresh start: %w", s.name, err)
	}
	return s.launch(ctx, StartTimeout)
}

// rss reads the process's resident set size (VmRSS) from /proc.
func (s *server) rss() (int64, error) {
	return readRSS(s.proc.Pid())
}

// userHZ is the kernel's clock-tick rate of /proc/<pid>/stat times (USER_HZ, 100 on Linux).
const userHZ = 100

// cpu is the CPU time (user + system) the process has used so far.
func (s *server) cpu() (time.Duration, error) {
	return processCPU(strconv.Itoa(s.proc.Pid()))
}

// benchCPU is the CPU time the bench's own process has used so far: its load clients, whose
// work per round trip is part of what the machine's two cores share with the server.
func benchCPU() (time.Duration, error) { return processCPU("self") }

// processCPU is the CPU time (user + system) of /proc/<pid> so far.
func processCPU(pid string) (time.Duration, error) {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, fmt.Errorf("read cpu time: %w", err)
	}
	// The command name (field 2) may hold spaces; the fields after its closing paren do not.
	i := bytes.LastIndexByte(data, ')')
	fields := strings.Fields(string(data[i+1:]))
	if i < 0 || len(fields) < 13 {
		return 0, fmt.Errorf("read cpu time: unexpected /proc stat %q", data)
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime (fields 14 and 15)
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read cpu time: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// readRSS returns VmRSS of pid in bytes.
func readRSS(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("read rss: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("read rss: unexpected line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read rss: %w", err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("read rss: no VmRSS line for pid %d", pid)
}

// configEnvPrefixes name the gateway's configuration variables, stripped from a child's
// environment so the developer's shell cannot change the figures.
var configEnvPrefixes = []string{"SANDBOX_", "OPENCODE_", BaselineListenEnv, BaselineUUIDIDsEnv, profiling.ListenEnv}

// tailBuffer keeps the last logTailBytes of a child's output (the gateway logs a line per
// connection; 10 000 connections must not grow the bench's memory without bound). It trims
// once it holds twice that, so a line costs the bench no more than its own copy: trimming at
// every line moved 64 KiB per line, CPU the bench took from the processes it measures.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

// Write implements io.Writer.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*logTailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-logTailBytes:]...)
	}
	return len(p), nil
}

// String returns the kept output: its last logTailBytes.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf[max(0, len(t.buf)-logTailBytes):])
}
