package child

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// shell starts sh running script.
func shell(t *testing.T, script string) *Process {
	t.Helper()
	p, err := Start("sh", exec.Command("sh", "-c", script))
	require.NoError(t, err)
	return p
}

// waitReady waits for the file a script creates once its trap is set, so that SIGTERM cannot
// arrive before the trap.
func waitReady(t *testing.T, p *Process, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(marker); err == nil {
			return
		}
		select {
		case <-p.Exited():
			t.Fatalf("exited early: %v", p.ExitErr())
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Fatal("script never got ready")
}

func TestStopGraceful(t *testing.T) {
	marker := t.TempDir() + "/ready"
	p := shell(t, `trap 'exit 0' TERM; touch `+marker+`; while :; do sleep 0.01; done`)
	waitReady(t, p, marker)
	require.NoError(t, p.Stop(10*time.Second))
	assert.NoError(t, p.Stop(10*time.Second), "later calls return the first result")
}

func TestStopReportsABadExit(t *testing.T) {
	marker := t.TempDir() + "/ready"
	p := shell(t, `trap 'exit 3' TERM; touch `+marker+`; while :; do sleep 0.01; done`)
	waitReady(t, p, marker)
	err := p.Stop(10 * time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sh: exit after sigterm: exit status 3")
}

func TestStopKillsAProcessThatIgnoresSIGTERM(t *testing.T) {
	marker := t.TempDir() + "/ready"
	p := shell(t, `trap '' TERM; touch `+marker+`; while :; do sleep 0.01; done`)
	waitReady(t, p, marker)
	err := p.Stop(100 * time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sh still running 100ms after sigterm; killed")
	<-p.Exited()
}

func TestStopAfterExit(t *testing.T) {
	p := shell(t, `exit 0`)
	<-p.Exited()
	assert.NoError(t, p.ExitErr())
	err := p.Stop(time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sh had already exited")
}

func TestStartFails(t *testing.T) {
	_, err := Start("nothing", exec.Command("/nonexistent/program"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "start nothing:")
}

func TestCleanEnv(t *testing.T) {
	t.Setenv("SANDBOX_PASSWORD", "leak")
	t.Setenv("OPENCODE_URL", "http://elsewhere")
	t.Setenv("CHILD_KEEP", "1")
	env := CleanEnv("SANDBOX_", "OPENCODE_")
	assert.Contains(t, env, "CHILD_KEEP=1")
	for _, kv := range env {
		assert.NotRegexp(t, `^(SANDBOX_|OPENCODE_)`, kv)
	}
}
