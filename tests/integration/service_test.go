package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/repo"
)

// TestTheDocumentedServiceUnitVerifies: the README's systemd unit is said to pass
// `systemd-analyze verify`; nothing checked it, and a key systemd does not know (a typo, a
// key of a newer systemd) is only a warning there, which the unit then runs without. It
// verifies the unit as the README gives it, with no word from systemd, the binary at
// ExecStart being this build.
func TestTheDocumentedServiceUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian: apt-get install systemd)")
	}
	root, err := repo.Root()
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(root, "tools", "trap-sandbox", "README.md"))
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)\n```ini\n(.*?)```\n").FindSubmatch(readme)
	require.NotNil(t, m, "the README's unit, in a ```ini block")
	const installed = "ExecStart=/usr/local/bin/trap-sandbox "
	unit := string(m[1])
	require.Contains(t, unit, installed, "the unit runs the binary the README installs")
	unit = strings.Replace(unit, installed, "ExecStart="+gatewayBin+" ", 1)
	path := filepath.Join(t.TempDir(), "trap-sandbox.service")
	require.NoError(t, os.WriteFile(path, []byte(unit), 0o644))

	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, analyze, "verify", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Empty(t, strings.TrimSpace(string(out)), "systemd says nothing of the unit")
}
