package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/http-api.md's metric table is the operator's reference: it names every metric a
// running gateway serves on /metrics, and each metric it names is served (those marked
// `--nats` only by a replica: TestServeWithNATSSharesComputersAcrossReplicas). Beside them
// the process's own figures (Prometheus's standard go_* and process_* families, which the
// section names in a sentence) are served: what an operator watches for a leak over hours.
func TestTheMetricsTableNamesEveryServedMetric(t *testing.T) {
	clearEnv(t)
	doc, err := os.ReadFile("../../../../docs/http-api.md")
	require.NoError(t, err)
	_, section, found := strings.Cut(string(doc), "\n## `GET /metrics`\n")
	require.True(t, found, "docs/http-api.md has the /metrics section")
	section, _, _ = strings.Cut(section, "\n## ")
	documented, natsOnly := map[string]bool{}, map[string]bool{}
	rows := map[string]string{} // each metric's row after its name: its type and labels
	row := regexp.MustCompile("(?m)^\\| `(trapos_[a-z0-9_]+)` \\|(.*)$")
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		documented[m[1]] = true
		rows[m[1]] = m[2]
		if strings.Contains(m[2], "`--nats` only") {
			natsOnly[m[1]] = true
		}
	}
	require.NotEmpty(t, documented, "the table was read")
	// The alerts name metrics of the table (an alert on a metric never served never fires).
	_, alerts, found := strings.Cut(section, "\n### What to alert on\n")
	require.True(t, found, "docs/http-api.md says what to alert on")
	var alertsProcess []string
	for _, m := range regexp.MustCompile(`\b(trapos_[a-z0-9_]+|process_[a-z0-9_]+)\b`).FindAllStringSubmatch(alerts, -1) {
		if strings.HasPrefix(m[1], "process_") {
			alertsProcess = append(alertsProcess, m[1])
			continue
		}
		assert.True(t, documented[m[1]], "the alert's %s is not in the table", m[1])
	}

	root, _ := parse(t, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir())
	addr, _, _ := startServe(t, root.Serve)
	served := map[string]bool{}
	// A series' label value (the counters show each of theirs from the start, at 0) is one
	// the table names in the metric's row: the table had left out ai asks refused for dirs and
	// the limit log_lines. The close codes and frame types are protocol.md's and
	// capabilities.md's tables, which the rows point to.
	elsewhere := map[string]bool{"trapos_gateway_closes_total": true, "trapos_gateway_frames_in_total": true, "trapos_gateway_frames_out_total": true}
	series := regexp.MustCompile(`^(trapos_[a-z0-9_]+)\{(.*)\} `)
	label := regexp.MustCompile(`([a-z]+)="([^"]*)"`)
	for line := range strings.Lines(get(t, "http://"+addr+"/metrics")) {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			served[strings.Fields(rest)[0]] = true
		}
		if m := series.FindStringSubmatch(line); m != nil && !elsewhere[m[1]] {
			name := m[1]
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if _, ok := rows[name]; !ok {
					name = strings.TrimSuffix(name, suffix)
				}
			}
			for _, l := range label.FindAllStringSubmatch(m[2], -1) {
				if l[1] != "le" {
					assert.Contains(t, rows[name], "`"+l[2]+"`", "docs/http-api.md's row of %s names its %s %q", name, l[1], l[2])
				}
			}
		}
	}
	for _, name := range []string{"go_goroutines", "process_open_fds", "process_resident_memory_bytes"} {
		assert.True(t, served[name], "%s is not served: an operator cannot see the process grow", name)
		assert.Contains(t, section, "`"+name+"`", "docs/http-api.md's /metrics section names %s", name)
	}
	for _, name := range alertsProcess {
		assert.True(t, served[name], "the alert's %s is not served", name)
	}
	for name := range served {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue // the standard collectors' families, named in the section's sentence
		}
		assert.True(t, documented[name], "%s is served but not in docs/http-api.md's table", name)
	}
	for name := range documented {
		if !natsOnly[name] {
			assert.True(t, served[name], "docs/http-api.md names %s, which is not served", name)
		}
	}
}
