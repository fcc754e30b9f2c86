package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"tests/bench/internal/bench"
	"tests/internal/harness"
)

// smokeTimeout bounds the whole small run (a cached gateway build plus four short phases).
const smokeTimeout = 2 * time.Minute

// TestMain doubles as the baseline server and as a scale worker: Run and RunScale re-execute
// this test binary with bench.BaselineListenEnv or bench.ScaleWorkerEnv set, as they
// re-execute the bench command.
func TestMain(m *testing.M) {
	if addr := os.Getenv(bench.BaselineListenEnv); addr != "" {
		os.Exit(serveBaseline(addr))
	}
	if spec := os.Getenv(bench.ScaleWorkerEnv); spec != "" {
		os.Exit(serveScaleWorker(spec))
	}
	goleak.VerifyTestMain(m)
}

// TestRunSmall runs the whole machinery, both servers and all four phases, at a tiny size;
// the gateway keeps its data in the run's work directory, never in the user's data directory
// (on Linux $XDG_DATA_HOME/trap-sandbox, moved here; HOME stays, which Go's own caches follow:
// the build of the gateway would otherwise download and compile everything again).
func TestRunSmall(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	ctx, cancel := context.WithTimeout(context.Background(), smokeTimeout)
	defer cancel()
	cfg := bench.Config{Computers: 5, Duration: 100 * time.Millisecond, HTTPClients: 2,
		IdleComputers: 40, DialConcurrency: 8, Rounds: 2, Settle: 50 * time.Millisecond, WorkDir: t.TempDir(),
		ProfileDir: t.TempDir()}
	res, err := bench.Run(ctx, cfg)
	require.NoError(t, err)
	for name, f := range map[string]bench.Figures{"gateway": res.Gateway, "baseline": res.Baseline} {
		assert.Positive(t, f.Probe.Count, name)
		assert.Len(t, f.ProbeRounds, cfg.Rounds, name)
		assert.Len(t, f.HTTPRounds, cfg.Rounds, name)
		assert.Positive(t, f.Probe.PerSecond, name)
		assert.Positive(t, f.Probe.P50, name)
		assert.GreaterOrEqual(t, f.Probe.P99, f.Probe.P50, name)
		assert.Positive(t, f.HTTP.Count, name)
		assert.Positive(t, f.HTTP.P50, name)
		assert.Positive(t, f.RSSBusy, name)
		// (c) and (d) measured a process that did nothing before them.
		assert.NotEqual(t, f.BusyPID, f.FreshPID, "%s: (c) measured the process of (a) and (b)", name)
		assert.Positive(t, f.FreshPID, name)
		assert.Positive(t, f.RSSBefore, name)
		assert.Positive(t, f.RSSAfter, name)
		assert.Positive(t, f.ConnectTime, name)
	}
	// The gateway's probes reached the fake opencode (the answer said opencodeOk:true), at most
	// once per probe.
	assert.Positive(t, res.OpencodeRequests)
	assert.LessOrEqual(t, res.OpencodeRequests, int64(res.Gateway.ProbesSent))
	assert.GreaterOrEqual(t, res.Gateway.ProbesSent, res.Gateway.Probe.Count)

	// Each server left a CPU, heap and goroutine profile of each phase.
	for _, server := range []string{"gateway", "baseline"} {
		for _, phase := range []string{"a-round1", "a-round2", "b-round1", "b-round2", "c", "d"} {
			for _, kind := range []string{"cpu", "heap", "goroutine"} {
				name := filepath.Join(cfg.ProfileDir, server+"-"+phase+"."+kind+".pprof")
				fi, err := os.Stat(name)
				if assert.NoError(t, err) {
					assert.Positive(t, fi.Size(), name)
				}
			}
		}
	}

	var out strings.Builder
	missed := bench.Report(&out, cfg, res)
	// A tiny run on a shared machine may miss targets; what matters is that each MISS row is
	// returned (so `bench` can exit non-zero) and no PASS row is.
	assert.Equal(t, strings.Count(out.String(), "| MISS |"), len(missed), out.String())
	assert.Contains(t, out.String(), "(a) probe_gateway round trips/s")
	assert.Regexp(t, `\| \(a\) gateway/baseline by round \| \| \| [0-9.]+× [0-9.]+× \|`, out.String())
	assert.Regexp(t, `\| \(b\) server CPU per round trip, gateway/baseline by round \| \| \| [0-9.]+× [0-9.]+× \|`, out.String())
	assert.Contains(t, out.String(), "(d) connect + hello, 40 computers")
	assert.NoDirExists(t, filepath.Join(home, "data", "trap-sandbox"), "the gateway wrote into the user's data directory")
	assert.FileExists(t, filepath.Join(cfg.WorkDir, "gateway-data", "accounts.db"))
}

// TestRunOnlyHTTPAgainstAnotherGatewayBuild runs phase (b) alone (-only-http) with a gateway
// binary in the baseline's place (-baseline-gateway): its rounds, none of (a), (c) or (d), and
// a report that judges (b) only and says what the baseline column is.
func TestRunOnlyHTTPAgainstAnotherGatewayBuild(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", filepath.Join(t.TempDir(), "data"))
	ctx, cancel := context.WithTimeout(context.Background(), smokeTimeout)
	defer cancel()
	other, err := harness.BuildGateway(ctx, t.TempDir(), false)
	require.NoError(t, err)
	cfg := bench.Config{Computers: 5, Duration: 100 * time.Millisecond, HTTPClients: 2,
		IdleComputers: 40, DialConcurrency: 8, Rounds: 2, Settle: 50 * time.Millisecond, WorkDir: t.TempDir(),
		OnlyHTTP: true, BaselineGateway: other}
	res, err := bench.Run(ctx, cfg)
	require.NoError(t, err)
	for name, f := range map[string]bench.Figures{"gateway": res.Gateway, "baseline": res.Baseline} {
		assert.Len(t, f.HTTPRounds, cfg.Rounds, name)
		assert.Positive(t, f.HTTP.Count, name)
		assert.Zero(t, f.Probe.Count, name)
		assert.Empty(t, f.ProbeRounds, name)
		assert.Zero(t, f.RSSAfter, name)
		assert.Zero(t, f.ConnectTime, name)
	}
	var out strings.Builder
	missed := bench.Report(&out, cfg, res)
	assert.Contains(t, out.String(), "(b) HTTP ping round trips/s")
	assert.NotContains(t, out.String(), "| (a)")
	assert.NotContains(t, out.String(), "| (c)")
	assert.NotContains(t, out.String(), "| (d)")
	assert.Contains(t, out.String(), "the \"baseline\" column is the gateway built as "+other)
	for _, m := range missed {
		assert.True(t, strings.HasPrefix(m, "(b) "), "only (b) is judged: %s", m)
	}
}

// TestScaleOutSmall runs the whole scale machinery at a size CI affords: a real nats-server,
// two gateway replicas with 200 computers each from 8 source addresses, held by 3 worker
// processes; the hop sample, the restart and the graceful stop; each replica's profiles of
// the connects.
func TestScaleOutSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*smokeTimeout)
	defer cancel()
	cfg := bench.ScaleConfig{Computers: 400, Replicas: 2, PerAddress: 50, PerWorker: 150, DialConcurrency: 30,
		HopSamples: 10, Settle: 50 * time.Millisecond, StepTimeout: time.Minute, WorkDir: t.TempDir(), ProfileDir: t.TempDir()}
	res, err := bench.RunScale(ctx, cfg)
	require.NoError(t, err)
	assert.Equal(t, 3, res.Workers)
	assert.Equal(t, 8, res.Addresses)
	require.Len(t, res.Replicas, 2)
	for _, r := range res.Replicas {
		assert.Equal(t, 200, r.Computers, r.Name)
		assert.Positive(t, r.RSSBefore, r.Name)
		assert.Greater(t, r.RSSAfter, r.RSSBefore, r.Name)
		assert.Positive(t, r.RSSRestarted, r.Name)
	}
	assert.Positive(t, res.BytesPerComputer())
	assert.Positive(t, res.NATSRSSBefore)
	assert.Positive(t, res.NATSRSSAfter)
	assert.Positive(t, res.ConnectTime)
	assert.GreaterOrEqual(t, res.ListedTime, res.ConnectTime)
	assert.Positive(t, res.StartTime)
	assert.Positive(t, res.ReconnectTime)
	assert.GreaterOrEqual(t, res.RelistedTime, res.ReconnectTime)
	assert.Equal(t, 10, res.Direct.Count)
	assert.Equal(t, 10, res.Routed.Count)
	assert.Positive(t, res.Routed.P50)
	assert.Empty(t, res.StopErr, "every replica stops cleanly on SIGTERM")
	for _, r := range res.Replicas {
		assert.Positive(t, r.Stop, r.Name)
		assert.LessOrEqual(t, r.Stop, res.StopTime, r.Name)
	}
	for _, replica := range []string{"r1", "r2"} {
		for _, kind := range []string{"cpu.pprof", "heap.pprof", "goroutine.pprof", "memstats.json", "live-heap.pprof", "live-memstats.json"} {
			name := filepath.Join(cfg.ProfileDir, replica+"-connected."+kind)
			fi, err := os.Stat(name)
			if assert.NoError(t, err) {
				assert.Positive(t, fi.Size(), name)
			}
		}
	}

	var out strings.Builder
	missed := bench.ReportScale(&out, cfg, res)
	assert.Equal(t, strings.Count(out.String(), "| MISS |"), len(missed), out.String())
	assert.Contains(t, out.String(), "| (c) gateway RSS per idle computer, all replicas |")
	assert.Contains(t, out.String(), "| **restart: all 400 computers back**, from every replica serving |")
	assert.Contains(t, out.String(), "| host ping through a second replica (NATS), p50 / p99 |")
	assert.Regexp(t, `\| graceful stop, each replica's own \| r1 [0-9.]+m?s, r2 [0-9.]+m?s \|`, out.String())
}

// TestSelfCheckPutsTheBaselineInTheGatewaysPlace: -self-check measures the bench against
// itself: no gateway is involved (no probe reaches opencode) and the report says so.
func TestSelfCheckPutsTheBaselineInTheGatewaysPlace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), smokeTimeout)
	defer cancel()
	cfg := bench.Config{Computers: 3, Duration: 100 * time.Millisecond, HTTPClients: 2,
		IdleComputers: 10, DialConcurrency: 4, Rounds: 2, Settle: 50 * time.Millisecond, WorkDir: t.TempDir(),
		SelfCheck: true}
	res, err := bench.Run(ctx, cfg)
	require.NoError(t, err)
	assert.Zero(t, res.OpencodeRequests, "a gateway answered the probes")
	for name, f := range map[string]bench.Figures{"gateway's place": res.Gateway, "baseline": res.Baseline} {
		assert.Positive(t, f.Probe.Count, name)
		assert.Positive(t, f.HTTP.Count, name)
		assert.Positive(t, f.ConnectTime, name)
	}
	assert.NoFileExists(t, filepath.Join(cfg.WorkDir, "trap-sandbox"), "the gateway was built")
	var out strings.Builder
	bench.Report(&out, cfg, res)
	assert.Contains(t, out.String(), "self-check")
}
