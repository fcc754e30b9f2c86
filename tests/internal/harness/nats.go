package harness

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"tests/internal/child"
	"tests/internal/repo"
)

// NATSServerPackage is the nats-server main package, a tool of the tests module (tests/go.mod):
// the tests build it from the module cache like any dependency, nothing is downloaded to run.
const NATSServerPackage = "github.com/nats-io/nats-server/v2"

// natsListening matches the line nats-server logs once it accepts clients.
var natsListening = regexp.MustCompile(`Listening for client connections on (\S+)`)

// BuildNATSServer compiles nats-server into dir and returns the binary's path.
func BuildNATSServer(ctx context.Context, dir string) (string, error) {
	root, err := repo.Root()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, BuildTimeout)
	defer cancel()
	bin := filepath.Join(dir, "nats-server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, NATSServerPackage)
	cmd.Dir = filepath.Join(root, "tests")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", NATSServerPackage, err, out)
	}
	return bin, nil
}

// NATS is one running nats-server process with JetStream, on a free loopback port, storing in
// a temporary directory of its test.
type NATS struct {
	// URL is nats://HOST:PORT.
	URL string

	proc *child.Process
	log  *natsLog
	// bin and opts started it (RestartWithStore starts it again so).
	bin  string
	opts NATSOptions
}

// NATSOptions configure one nats-server process.
type NATSOptions struct {
	// Config is a configuration file (-c), which must enable JetStream; the address, port and
	// store directory are the harness's all the same. Empty: JetStream (-js), no credentials.
	Config string
	// Env are extra KEY=VALUE environment entries (the configuration's $VARIABLES).
	Env []string
}

// StartNATS runs bin (from BuildNATSServer) with JetStream and no credentials, and waits until
// it accepts clients; the test's cleanup stops it.
func StartNATS(t testing.TB, bin string) *NATS {
	t.Helper()
	return StartNATSWith(t, bin, NATSOptions{})
}

// StartNATSWith is StartNATS with opts.
func StartNATSWith(t testing.TB, bin string, opts NATSOptions) *NATS {
	t.Helper()
	n, err := StartNATSProcess(bin, t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Stop(); err != nil {
			t.Errorf("nats-server did not stop cleanly: %v", err)
		}
		if t.Failed() {
			t.Logf("nats-server log:\n%s", n.log.String())
		}
	})
	return n
}

// StartNATSProcess is StartNATSWith for a program without a testing.TB (tests/bench): the
// server stores in storeDir, and the caller stops it. On error nothing is left running.
func StartNATSProcess(bin, storeDir string, opts NATSOptions) (*NATS, error) {
	return startNATS(bin, storeDir, "-1", opts)
}

// RestartWithStore stops the server and starts it again on the same address, storing in
// storeDir: given a new empty directory, NATS restarted without its store (another -sd, a
// container without its volume), whose buckets are gone. Not safe during n's other calls.
func (n *NATS) RestartWithStore(storeDir string) error {
	if err := n.Stop(); err != nil {
		return err
	}
	_, port, err := net.SplitHostPort(strings.TrimPrefix(n.URL, "nats://"))
	if err != nil {
		return err
	}
	again, err := startNATS(n.bin, storeDir, port, n.opts)
	if err != nil {
		return err
	}
	*n = *again
	return nil
}

// startNATS is StartNATSProcess on port ("-1": a free one).
func startNATS(bin, storeDir, port string, opts NATSOptions) (*NATS, error) {
	n := &NATS{log: &natsLog{listening: make(chan string, 1)}, bin: bin, opts: opts}
	args := []string{"-a", "127.0.0.1", "-p", port, "-sd", storeDir}
	if opts.Config != "" {
		args = append([]string{"-c", opts.Config}, args...)
	} else {
		args = append(args, "-js")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(CleanEnv(), opts.Env...)
	cmd.Stdout, cmd.Stderr = n.log, n.log
	proc, err := child.Start("nats-server", cmd)
	if err != nil {
		return nil, fmt.Errorf("start nats-server: %w", err)
	}
	n.proc = proc
	timer := time.NewTimer(StartTimeout)
	defer timer.Stop()
	select {
	case addr := <-n.log.listening:
		n.URL = "nats://" + addr
		return n, nil
	case <-proc.Exited():
		return nil, fmt.Errorf("nats-server exited before listening (%v):\n%s", proc.ExitErr(), n.log.String())
	case <-timer.C:
		_ = n.Stop()
		return nil, fmt.Errorf("nats-server did not listen within %s:\n%s", StartTimeout, n.log.String())
	}
}

// Pid is the server's process id (for its memory, /proc/<pid>/status).
func (n *NATS) Pid() int { return n.proc.Pid() }

// Log is what the server has written so far.
func (n *NATS) Log() string { return n.log.String() }

// Stop stops the server (SIGTERM, then SIGKILL after StopTimeout). Later calls return the first result.
func (n *NATS) Stop() error { return n.proc.Stop(StopTimeout) }

// natsLog collects nats-server's output and reports its client address.
type natsLog struct {
	mu        sync.Mutex // guards buf and found
	buf       bytes.Buffer
	found     bool
	listening chan string
}

func (l *natsLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if !l.found {
		if m := natsListening.FindSubmatch(l.buf.Bytes()); m != nil {
			l.found = true
			l.listening <- string(m[1])
		}
	}
	return len(p), nil
}

func (l *natsLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
