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
	row := regexp.MustCompile("(?m)^\\| `(trapos_[a-z_]+)` \\|(.*)$")
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		documented[m[1]] = true
		if strings.Contains(m[2], "`--nats` only") {
			natsOnly[m[1]] = true
		}
	}
	require.NotEmpty(t, documented, "the table was read")

	root, _ := parse(t, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir())
	addr, _, _ := startServe(t, root.Serve)
	served := map[string]bool{}
	for line := range strings.Lines(get(t, "http://"+addr+"/metrics")) {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			served[strings.Fields(rest)[0]] = true
		}
	}
	for _, name := range []string{"go_goroutines", "process_open_fds", "process_resident_memory_bytes"} {
		assert.True(t, served[name], "%s is not served: an operator cannot see the process grow", name)
		assert.Contains(t, section, "`"+name+"`", "docs/http-api.md's /metrics section names %s", name)
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
