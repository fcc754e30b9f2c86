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
	fmt.Fprintln(w, "| figure | gateway | baseline | gateway/baseline | target | result |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	probeRatio := ratio(g.Probe.PerSecond, b.Probe.PerSecond)
	fmt.Fprintf(w, "| (a) probe_gateway round trips/s | %.0f | %.0f | %.2f× | ≥ %.2f× | %s |\n",
		g.Probe.PerSecond, b.Probe.PerSecond, probeRatio, TargetProbeRatio, verdict("(a) probe_gateway round trips/s", probeRatio >= TargetProbeRatio))
	fmt.Fprintf(w, "| (a) gateway/baseline by round | | | %s | | |\n", roundRatios(g.ProbeRounds, b.ProbeRounds))
	fmt.Fprintf(w, "| (a) p50 / p99 latency | %s / %s | %s / %s | %.2f× / %.2f× | | |\n",
		ms(g.Probe.P50), ms(g.Probe.P99), ms(b.Probe.P50), ms(b.Probe.P99),
		ratio(float64(g.Probe.P50), float64(b.Probe.P50)), ratio(float64(g.Probe.P99), float64(b.Probe.P99)))
	fmt.Fprintf(w, "| (a) server CPU per round trip | %s | %s | %.2f× | | |\n",
		us(g.Probe.ServerCPU), us(b.Probe.ServerCPU), ratio(float64(g.Probe.ServerCPU), float64(b.Probe.ServerCPU)))
	fmt.Fprintf(w, "| (a) opencode health requests per probe_gateway | %.3f | — | | | |\n",
		ratio(float64(r.OpencodeRequests), float64(g.ProbesSent)))
	httpRatio := ratio(g.HTTP.PerSecond, b.HTTP.PerSecond)
	fmt.Fprintf(w, "| (b) HTTP ping round trips/s | %.0f | %.0f | %.2f× | ≥ %.2f× | %s |\n",
		g.HTTP.PerSecond, b.HTTP.PerSecond, httpRatio, TargetHTTPRatio, verdict("(b) HTTP ping round trips/s", httpRatio >= TargetHTTPRatio))
	fmt.Fprintf(w, "| (b) gateway/baseline by round | | | %s | | |\n", roundRatios(g.HTTPRounds, b.HTTPRounds))
	fmt.Fprintf(w, "| (b) p50 / p99 latency | %s / %s | %s / %s | %.2f× / %.2f× | p99 ≤ 1.00× | %s |\n",
		ms(g.HTTP.P50), ms(g.HTTP.P99), ms(b.HTTP.P50), ms(b.HTTP.P99),
		ratio(float64(g.HTTP.P50), float64(b.HTTP.P50)), ratio(float64(g.HTTP.P99), float64(b.HTTP.P99)),
		verdict("(b) HTTP ping p99 latency", g.HTTP.P99 <= b.HTTP.P99))
	fmt.Fprintf(w, "| (b) server CPU per round trip | %s | %s | %.2f× | | |\n",
		us(g.HTTP.ServerCPU), us(b.HTTP.ServerCPU), ratio(float64(g.HTTP.ServerCPU), float64(b.HTTP.ServerCPU)))
	fmt.Fprintf(w, "| (c) RSS per idle connection | %.1f KiB | %.1f KiB | %.2f× | ≤ %d KiB | %s |\n",
		g.BytesPerConn/1024, b.BytesPerConn/1024, ratio(g.BytesPerConn, b.BytesPerConn), TargetBytesPerConn>>10,
		verdict("(c) RSS per idle connection", g.BytesPerConn <= TargetBytesPerConn))
	fmt.Fprintf(w, "| (c) RSS before → after | %.1f → %.1f MiB | %.1f → %.1f MiB | | | |\n",
		mib(g.RSSBefore), mib(g.RSSAfter), mib(b.RSSBefore), mib(b.RSSAfter))
	if g.HeapPerConn > 0 {
		fmt.Fprintf(w, "| (c) Go heap / stacks in use per connection (/metrics) | %.1f KiB / %.1f KiB | — | | | |\n", g.HeapPerConn/1024, g.StackPerConn/1024)
	}
	fmt.Fprintf(w, "| (d) connect + hello, %d computers | %s | %s | %.2f× | < %s | %s |\n",
		cfg.IdleComputers, g.ConnectTime.Round(time.Millisecond), b.ConnectTime.Round(time.Millisecond),
		ratio(float64(g.ConnectTime), float64(b.ConnectTime)), TargetConnectTime, verdict("(d) connect + hello", g.ConnectTime < TargetConnectTime))
	return missed
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

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond)) }
