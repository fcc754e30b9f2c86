package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// Fixtures of the busy-computer test.
const (
	// busyTraposID is the computer the host keeps busy: id 7, labelled north.
	busyTraposID = "7:north"
	// busyRelease is the event that ends the host's jobs, which wait for it.
	busyRelease = "e2e_release"
	// busyJob is the host's long lua.exec: it runs until the test queues busyRelease, up to
	// the longest a job and a host request may take (60 s).
	busyJob = `{"type":"lua.exec","payload":{"code":"os.pullEvent('` + busyRelease + `') return 'done'","timeoutMs":60000},"timeoutMs":60000}`
)

// execsSent is the gateway's count of lua.exec requests it sent to computers.
var execsSent = regexp.MustCompile(`(?m)^trapos_gateway_frames_out_total\{event="gateway_request",type="lua\.exec"\} (\d+)$`)

// TestAHostsLongJobsDoNotSilenceTheGateway: a host keeps a computer as busy as the gateway
// lets it, with lua.exec jobs that run longer than the daemon's livenessMs. The gateway's
// idle probe still reaches the computer and is answered, so the healthy computer stays
// connected and its jobs finish; the host's request past the limit is busy (429,
// Retry-After). Before, the probe was refused like the host's 33rd request: the gateway sent
// nothing, and the daemon, promised a frame every livenessMs, left it ("the gateway sent
// nothing for 5 s") and lost every job. The computer runs at real speed: livenessMs is wall
// time on the gateway's side.
func TestAHostsLongJobsDoNotSilenceTheGateway(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// Idle probe 2 s + request timeout 3 s: the hello answer announces livenessMs 5000.
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--idle-probe-after", "2s", "--request-timeout", "3s")
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 7, "north"
	opts.TimeScale = 1
	opts.Settings["sandbox.allow_exec"] = "true"
	opts.Files = map[string]string{"/e2e.lua": livenessProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerConnected)

	// The host starts jobs one by one until the gateway refuses one.
	var running []chan busyOutcome
	for {
		done := make(chan busyOutcome, 1)
		go func() { done <- postBusyRequest(ctx, g, busyTraposID, busyJob) }()
		sent := len(running) + 1
		if o, refused := jobSentOrRefused(ctx, t, g, sent, done); refused {
			require.Equal(t, http.StatusTooManyRequests, o.status, o.body)
			assert.Equal(t, "1", o.retryAfter)
			assert.Contains(t, o.body, `"code":"busy"`)
			break
		}
		running = append(running, done)
		require.Less(t, len(running), 64, "the gateway never refused the host's jobs")
	}

	// Three probes answered while the jobs run: longer than livenessMs.
	waitProbesOrLeft(ctx, t, g, c, 3)
	assert.NotContains(t, c.Output(), markerLeft, "the healthy computer left the gateway:\n%s", c.Output())

	c.QueueString(busyRelease)
	for _, done := range running {
		select {
		case o := <-done:
			assert.Equal(t, http.StatusOK, o.status, o.body)
			assert.Contains(t, o.body, `"done"`)
		case <-ctx.Done():
			t.Fatalf("a job did not finish; transcript:\n%s", c.Output())
		}
	}
	assert.Len(t, running, 31, "the host may have 31 requests in flight: the computer takes 32, one is the probe's")
}

// busyOutcome is what the host's request got: its HTTP status, Retry-After header and body.
type busyOutcome struct {
	status     int
	retryAfter string
	body       string
}

// jobSentOrRefused waits until the gateway has sent its sent-th lua.exec (false) or the
// request on done came back (true, with its outcome).
func jobSentOrRefused(ctx context.Context, t *testing.T, g *harness.Gateway, sent int, done chan busyOutcome) (busyOutcome, bool) {
	t.Helper()
	for {
		select {
		case o := <-done:
			return o, true
		default:
		}
		if metricCount(ctx, t, g, execsSent) >= sent {
			return busyOutcome{}, false
		}
		select {
		case o := <-done:
			return o, true
		case <-ctx.Done():
			t.Fatalf("lua.exec number %d was neither sent nor refused", sent)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitProbesOrLeft waits until the gateway counts n answered idle probes, and fails the test
// at once if the computer leaves the gateway meanwhile.
func waitProbesOrLeft(ctx context.Context, t *testing.T, g *harness.Gateway, c *fakecrafttest.Computer, n int) {
	t.Helper()
	for metricCount(ctx, t, g, answeredProbe) < n {
		if strings.Contains(c.Output(), markerLeft) {
			t.Fatalf("the computer left the gateway while the host's jobs ran:\n%s", c.Output())
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the gateway did not count %d answered probes; transcript:\n%s", n, c.Output())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// postBusyRequest POSTs body to traposID's requests endpoint. It runs in a goroutine of its
// own, so it reports a failure in the outcome's body rather than failing the test.
func postBusyRequest(ctx context.Context, g *harness.Gateway, traposID, body string) busyOutcome {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		g.URL("/trapos/computers/"+url.PathEscape(traposID)+"/requests"), strings.NewReader(body))
	if err != nil {
		return busyOutcome{body: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := harness.HTTPClient().Do(req)
	if err != nil {
		return busyOutcome{body: fmt.Sprintf("no answer: %v", err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		raw = fmt.Appendf(nil, "unreadable body: %v", err)
	}
	return busyOutcome{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(raw)}
}
