package server

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
)

// TestAGatewayOutOfFilesSaysSo: a gateway at its open-files limit accepted no connection
// (computers, the host's tools, /healthz alike) and its log at info said nothing, as net/http
// retries an accept that fails (EMFILE) and tells only its ErrorLog, kept at debug. It says so
// at WARN, once a minute, with the fix. The limit is the whole process's, so the gateway runs
// in a child of its own (this test binary again) with room for two connections; this test
// opens more.
func TestAGatewayOutOfFilesSaysSo(t *testing.T) {
	if os.Getenv(outOfFilesEnv) != "" {
		outOfFiles(t)
		return
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestAGatewayOutOfFilesSaysSo$")
	child.Env = testkit.ChildEnv(outOfFilesEnv + "=1")
	stdin, err := child.StdinPipe()
	require.NoError(t, err)
	stdout, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	lines := bufio.NewScanner(stdout)

	var addr string
	for addr == "" && lines.Scan() {
		if _, rest, ok := strings.Cut(lines.Text(), "msg=listening addr="); ok {
			addr, _, _ = strings.Cut(rest, " ")
		}
	}
	require.NotEmpty(t, addr, "the child gateway's listening line")
	var conns []net.Conn
	for range 4 { // the kernel completes each connection whether or not the gateway accepts it
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		conns = append(conns, c)
	}
	var warning string
	for warning == "" && lines.Scan() { // until the line, or the context's end kills the child
		if strings.Contains(lines.Text(), "level=WARN") {
			warning = lines.Text()
		}
	}
	assert.Contains(t, warning, `msg="`+filesMsg+`" addr=`+addr+" err=")
	assert.Contains(t, warning, "too many open files")

	// Closed before the child stops: net/http's Shutdown waits, up to the child's
	// ShutdownTimeout (1 s), for a connection that has not sent its request yet.
	for _, c := range conns {
		require.NoError(t, c.Close())
	}
	require.NoError(t, stdin.Close()) // the child stops serving
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	require.NoError(t, child.Wait())
}

// outOfFilesEnv makes TestAGatewayOutOfFilesSaysSo the child that serves under a tight
// open-files limit, logging to stdout, until its stdin closes.
const outOfFilesEnv = "TRAP_SANDBOX_TEST_OUT_OF_FILES"

func outOfFiles(t *testing.T) {
	s := New(slog.New(slog.NewTextHandler(os.Stdout, nil)), Config{ShutdownTimeout: time.Second})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); cancel() }()

	fds, err := os.ReadDir("/proc/self/fd") // its own descriptor among them, closed once read
	require.NoError(t, err)
	var limit syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit))
	limit.Cur = uint64(len(fds)) + 1 // two free
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &limit))
	require.NoError(t, s.Serve(ctx, l))
}
