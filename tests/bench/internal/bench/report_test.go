package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// figures is a run whose gateway meets every target of issue 25 by the smallest margin.
func figures() Result {
	base := Figures{Probe: Rate{PerSecond: 1000}, HTTP: Rate{PerSecond: 500, P99: 3 * time.Millisecond},
		BytesPerConn: 22 << 10, ConnectTime: time.Second}
	gw := base
	gw.BytesPerConn = TargetBytesPerConn
	return Result{Gateway: gw, Baseline: base}
}

func TestReportPassesARunAtTheTargets(t *testing.T) {
	var out strings.Builder
	assert.Empty(t, Report(&out, Config{IdleComputers: 10000}, figures()), out.String())
}

func TestReportMissesEachFigureBelowIssue25sTargets(t *testing.T) {
	for name, tc := range map[string]struct {
		worse  func(*Figures)
		missed string
	}{
		"probe below the baseline":   {func(f *Figures) { f.Probe.PerSecond = 990 }, "(a) probe_gateway round trips/s"},
		"HTTP ping below":            {func(f *Figures) { f.HTTP.PerSecond = 495 }, "(b) HTTP ping round trips/s"},
		"HTTP p99 above":             {func(f *Figures) { f.HTTP.P99 = 3*time.Millisecond + time.Microsecond }, "(b) HTTP ping p99 latency"},
		"a byte over 16 KiB":         {func(f *Figures) { f.BytesPerConn = 16<<10 + 1 }, "(c) RSS per idle connection"},
		"connecting in 10 s or more": {func(f *Figures) { f.ConnectTime = 10 * time.Second }, "(d) connect + hello"},
	} {
		t.Run(name, func(t *testing.T) {
			r := figures()
			tc.worse(&r.Gateway)
			var out strings.Builder
			assert.Equal(t, []string{tc.missed}, Report(&out, Config{IdleComputers: 10000}, r), out.String())
		})
	}
}

func TestSourceAddressesSpreadComputersOverLoopback(t *testing.T) {
	assert.Nil(t, sourceAddr(0), "the first block dials as before")
	assert.Nil(t, sourceAddr(ComputersPerSourceAddress-1))
	assert.Equal(t, "127.0.1.1", sourceAddr(ComputersPerSourceAddress).IP.String())
	assert.Equal(t, "127.0.9.1", sourceAddr(99999).IP.String())
	assert.Equal(t, "127.1.0.1", sourceAddr(256*ComputersPerSourceAddress).IP.String())
}

func TestTheGatewaysConnectionCapIsRaisedOnlyPastItsDefault(t *testing.T) {
	assert.NotContains(t, strings.Join(gatewayEnv("http://x", 10050), " "), "SANDBOX_MAX_CONNECTIONS")
	assert.Contains(t, gatewayEnv("http://x", 100050), "SANDBOX_MAX_CONNECTIONS=101050")
}

func TestReportShowsEachRoundsP99(t *testing.T) {
	r := figures()
	r.Gateway.HTTPP99Rounds = []time.Duration{4 * time.Millisecond, 3 * time.Millisecond}
	r.Baseline.HTTPP99Rounds = []time.Duration{2 * time.Millisecond, 4 * time.Millisecond}
	var out strings.Builder
	Report(&out, Config{IdleComputers: 10000}, r)
	assert.Contains(t, out.String(), "| (b) p99 gateway/baseline by round | | | 2.00× 0.75× | | |")
}
