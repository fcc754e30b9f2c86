package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Report writes the figures as a Markdown table with ratios, targets and PASS/MISS, and
// returns the figures that missed their target (none: every target met).
func Report(w io.Writer, cfg Config, r Result) (missed []string) {
	g, b := r.Gateway, r.Baseline
	verdict := func(figure string, ok bool) string {
		if ok {
			return "PASS"
		}
		missed = append(missed, figure)
		return "MISS"
	}
	fmt.Fprintf(w, "\ncomputers=%d duration=%s rounds=%d http-clients=%d idle=%d dial-concurrency=%d\n\n",
		cfg.Computers, cfg.Duration, cfg.Rounds, cfg.HTTPClients, cfg.IdleComputers, cfg.DialConcurrency)
	if cfg.SelfCheck {
		fmt.Fprintln(w, "self-check: the \"gateway\" column is a second baseline process; PASS and MISS say nothing of the gateway")
		fmt.Fprintln(w)
	}
	if cfg.BaselineUUIDIDs {
		fmt.Fprintln(w, "baseline-uuid-ids: the baseline mints random UUID message ids, as the gateway must; the targets are judged against the baseline with its short ids, not this run")
		fmt.Fprintln(w)
	}
	if cfg.BaselineGateway != "" {
		fmt.Fprintf(w, "baseline-gateway: the \"baseline\" column is the gateway built as %s; PASS and MISS compare two gateways, not the gateway with the bare server\n", cfg.BaselineGateway)
		fmt.Fprintln(w)
	}
	if cfg.OnlyHTTP {
		fmt.Fprintln(w, "only-http: phase (b) alone; (a), (c) and (d) were not run")
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "| figure | gateway | baseline | gateway/baseline | target | result |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	if !cfg.OnlyHTTP {
		reportProbes(w, r, verdict)
	}
	reportHTTP(w, g, b, verdict)
	if !cfg.OnlyHTTP {
		reportMemory(w, cfg, g, b, verdict)
	}
	return missed
}

// reportProbes writes phase (a)'s rows.
func reportProbes(w io.Writer, r Result, verdict func(string, bool) string) {
	g, b := r.Gateway, r.Baseline
	probeRatio := ratio(g.Probe.PerSecond, b.Probe.PerSecond)
	fmt.Fprintf(w, "| (a) probe_gateway round trips/s | %.0f | %.0f | %.2f× | ≥ %.2f× | %s |\n",
		g.Probe.PerSecond, b.Probe.PerSecond, probeRatio, TargetProbeRatio, verdict("(a) probe_gateway round trips/s", probeRatio >= TargetProbeRatio))
	fmt.Fprintf(w, "| (a) gateway/baseline by round | | | %s | | |\n", roundRatios(g.ProbeRounds, b.ProbeRounds))
	fmt.Fprintf(w, "| (a) p50 / p99 latency | %s / %s | %s / %s | %.2f× / %.2f× | | |\n",
		ms(g.Probe.P50), ms(g.Probe.P99), ms(b.Probe.P50), ms(b.Probe.P99),
		ratio(float64(g.Probe.P50), float64(b.Probe.P50)), ratio(float64(g.Probe.P99), float64(b.Probe.P99)))
	fmt.Fprintf(w, "| (a) server CPU per round trip | %s | %s | %.2f× | | |\n",
		us(g.Probe.ServerCPU), us(b.Probe.ServerCPU), ratio(float64(g.Probe.ServerCPU), float64(b.Probe.ServerCPU)))
	fmt.Fprintf(w, "| (a) the bench's own CPU per round trip (its computers) | %s | %s | %.2f× | | |\n",
		us(g.Probe.BenchCPU), us(b.Probe.BenchCPU), ratio(float64(g.Probe.BenchCPU), float64(b.Probe.BenchCPU)))
	fmt.Fprintf(w, "| (a) opencode health requests per probe_gateway | %.3f | — | | | |\n",
		ratio(float64(r.OpencodeRequests), float64(g.ProbesSent)))
}

// reportHTTP writes phase (b)'s rows.
func reportHTTP(w io.Writer, g, b Figures, verdict func(string, bool) string) {
	httpRatio := ratio(g.HTTP.PerSecond, b.HTTP.PerSecond)
	fmt.Fprintf(w, "| (b) HTTP ping round trips/s | %.0f | %.0f | %.2f× | ≥ %.2f× | %s |\n",
		g.HTTP.PerSecond, b.HTTP.PerSecond, httpRatio, TargetHTTPRatio, verdict("(b) HTTP ping round trips/s", httpRatio >= TargetHTTPRatio))
	fmt.Fprintf(w, "| (b) gateway/baseline by round | | | %s | | |\n", roundRatios(g.HTTPRounds, b.HTTPRounds))
	fmt.Fprintf(w, "| (b) p50 / p99 latency | %s / %s | %s / %s | %.2f× / %.2f× | p99 ≤ 1.00× | %s |\n",
		ms(g.HTTP.P50), ms(g.HTTP.P99), ms(b.HTTP.P50), ms(b.HTTP.P99),
		ratio(float64(g.HTTP.P50), float64(b.HTTP.P50)), ratio(float64(g.HTTP.P99), float64(b.HTTP.P99)),
		verdict("(b) HTTP ping p99 latency", g.HTTP.P99 <= b.HTTP.P99))
	fmt.Fprintf(w, "| (b) p99 gateway/baseline by round | | | %s | | |\n", roundRatios(float64s(g.HTTPP99Rounds), float64s(b.HTTPP99Rounds)))
	fmt.Fprintf(w, "| (b) server CPU per round trip | %s | %s | %.2f× | | |\n",
		us(g.HTTP.ServerCPU), us(b.HTTP.ServerCPU), ratio(float64(g.HTTP.ServerCPU), float64(b.HTTP.ServerCPU)))
	fmt.Fprintf(w, "| (b) server CPU per round trip, gateway/baseline by round | | | %s | | |\n", roundRatios(float64s(g.HTTPCPURounds), float64s(b.HTTPCPURounds)))
	fmt.Fprintf(w, "| (b) the bench's own CPU per round trip (its HTTP clients and computers) | %s | %s | %.2f× | | |\n",
		us(g.HTTP.BenchCPU), us(b.HTTP.BenchCPU), ratio(float64(g.HTTP.BenchCPU), float64(b.HTTP.BenchCPU)))
}

// reportMemory writes the rows of phases (c) and (d).
func reportMemory(w io.Writer, cfg Config, g, b Figures, verdict func(string, bool) string) {
	fmt.Fprintf(w, "| (c) RSS per idle connection | %.1f KiB | %.1f KiB | %.2f× | ≤ %d KiB | %s |\n",
		g.BytesPerConn/1024, b.BytesPerConn/1024, ratio(g.BytesPerConn, b.BytesPerConn), TargetBytesPerConn>>10,
		verdict("(c) RSS per idle connection", g.BytesPerConn <= TargetBytesPerConn))
	fmt.Fprintf(w, "| RSS after (a) and (b), busy | %.1f MiB | %.1f MiB | | | |\n", mib(g.RSSBusy), mib(b.RSSBusy))
	fmt.Fprintf(w, "| (c) RSS before → after, a fresh process | %.1f → %.1f MiB | %.1f → %.1f MiB | | | |\n",
		mib(g.RSSBefore), mib(g.RSSAfter), mib(b.RSSBefore), mib(b.RSSAfter))
	if g.HeapPerConn > 0 {
		fmt.Fprintf(w, "| (c) Go heap / stacks in use per connection (/metrics) | %.1f KiB / %.1f KiB | — | | | |\n", g.HeapPerConn/1024, g.StackPerConn/1024)
	}
	fmt.Fprintf(w, "| (d) connect + hello, %d computers | %s | %s | %.2f× | < %s | %s |\n",
		cfg.IdleComputers, g.ConnectTime.Round(time.Millisecond), b.ConnectTime.Round(time.Millisecond),
		ratio(float64(g.ConnectTime), float64(b.ConnectTime)), TargetConnectTime, verdict("(d) connect + hello", g.ConnectTime < TargetConnectTime))
}

// roundRatios lists the gateway/baseline ratio of each round (both measured back to back), so
// that a reader sees how much the machine's noise moved the median.
func roundRatios(gateway, baseline []float64) string {
	parts := make([]string, 0, len(gateway))
	for i := range min(len(gateway), len(baseline)) {
		parts = append(parts, fmt.Sprintf("%.2f×", ratio(gateway[i], baseline[i])))
	}
	return strings.Join(parts, " ")
}

func float64s(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d)
	}
	return out
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond)) }

// ReportScale writes a scale run's figures as a Markdown table and returns the figures that
// missed their target: the memory per idle computer, the one target the scale run enforces.
func ReportScale(w io.Writer, cfg ScaleConfig, r ScaleResult) (missed []string) {
	var before, after, restarted int64
	for _, rep := range r.Replicas {
		before += rep.RSSBefore
		after += rep.RSSAfter
		restarted += rep.RSSRestarted
	}
	perComputer := r.BytesPerComputer()
	verdict := "PASS"
	if perComputer > TargetBytesPerConn {
		verdict = "MISS"
		missed = append(missed, "(c) gateway RSS per idle computer, all replicas")
	}
	fmt.Fprintf(w, "\nscale-out=%d replicas=%d workers=%d source addresses=%d (%d computers each) dial-concurrency=%d; replicas as shipped but --max-connections\n\n",
		cfg.Computers, len(r.Replicas), r.Workers, r.Addresses, cfg.PerAddress, cfg.DialConcurrency)
	fmt.Fprintln(w, "| figure | value | target | result |")
	fmt.Fprintln(w, "|---|---|---|---|")
	fmt.Fprintf(w, "| (c) gateway RSS per idle computer, all replicas | %.1f KiB | ≤ %d KiB | %s |\n", perComputer/1024, TargetBytesPerConn>>10, verdict)
	fmt.Fprintf(w, "| gateway RSS before → after, sum of %d replicas | %.1f → %.1f MiB | | |\n", len(r.Replicas), mib(before), mib(after))
	for _, rep := range r.Replicas {
		fmt.Fprintf(w, "| replica %s: %d computers, RSS before → after | %.1f → %.1f MiB (%.1f KiB each) | | |\n",
			rep.Name, rep.Computers, mib(rep.RSSBefore), mib(rep.RSSAfter), ratio(float64(rep.RSSAfter-rep.RSSBefore), float64(rep.Computers))/1024)
	}
	fmt.Fprintf(w, "| nats-server RSS before → after | %.1f → %.1f MiB (%.1f KiB per computer) | | |\n",
		mib(r.NATSRSSBefore), mib(r.NATSRSSAfter), ratio(float64(r.NATSRSSAfter-r.NATSRSSBefore), float64(cfg.Computers))/1024)
	fmt.Fprintf(w, "| (d) connect + hello, %d computers at once | %s | | |\n", cfg.Computers, r.ConnectTime.Round(time.Millisecond))
	fmt.Fprintf(w, "| every replica lists every computer, from the connects' start | %s | | |\n", r.ListedTime.Round(time.Millisecond))
	if r.Routed.Count > 0 {
		fmt.Fprintf(w, "| host ping, %d sequential, p50 / p99: direct | %s / %s | | |\n", r.Direct.Count, ms(r.Direct.P50), ms(r.Direct.P99))
		fmt.Fprintf(w, "| host ping through a second replica (NATS), p50 / p99 | %s / %s | | |\n", ms(r.Routed.P50), ms(r.Routed.P99))
	}
	fmt.Fprintf(w, "| restart: every replica killed (SIGKILL) | %s | | |\n", r.KillTime.Round(time.Millisecond))
	fmt.Fprintf(w, "| restart: every replica started, until /healthz | %s | | |\n", r.StartTime.Round(time.Millisecond))
	fmt.Fprintf(w, "| **restart: all %d computers back**, from every replica serving | %s | | |\n", cfg.Computers, r.ReconnectTime.Round(time.Millisecond))
	fmt.Fprintf(w, "| restart: every replica lists every computer again | %s | | |\n", r.RelistedTime.Round(time.Millisecond))
	fmt.Fprintf(w, "| after the restart: gateway RSS, sum / nats-server RSS | %.1f MiB / %.1f MiB | | |\n", mib(restarted), mib(r.NATSRSSRestarted))
	stop := "all exited"
	if r.StopErr != "" {
		stop = r.StopErr
	}
	fmt.Fprintf(w, "| graceful stop at the end (SIGTERM), every replica | %s (%s) | | |\n", r.StopTime.Round(time.Millisecond), stop)
	each := make([]string, 0, len(r.Replicas))
	for _, rep := range r.Replicas {
		each = append(each, fmt.Sprintf("%s %s", rep.Name, rep.Stop.Round(10*time.Millisecond)))
	}
	fmt.Fprintf(w, "| graceful stop, each replica's own | %s | | |\n", strings.Join(each, ", "))
	return missed
}
