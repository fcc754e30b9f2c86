package integration

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVersionNamesTheBuild: `trap-sandbox --version` of the real binary names its commit when
// the go command recorded a clean one, else its Go build ID as `go tool buildid` prints it (a
// build without a commit, go run or -buildvcs=false, said only "(devel)", the same for every
// build).
func TestVersionNamesTheBuild(t *testing.T) {
	ctx := testContext(t)
	out, errOut, code := runCLI(ctx, t, nil, "--version")
	require.Equal(t, 0, code, errOut)

	info, err := exec.CommandContext(ctx, "go", "version", "-m", gatewayBin).Output()
	require.NoError(t, err)
	revision := regexp.MustCompile(`(?m)^\s*build\s+vcs\.revision=([0-9a-f]{12})`).FindStringSubmatch(string(info))
	clean := strings.Contains(string(info), "vcs.modified=false")
	if revision != nil && clean {
		assert.Regexp(t, `^trap-sandbox `+revision[1]+` \(serves trapos-sandbox \d+\.\d+\.\d+\)\n$`, out)
		return
	}
	id, err := exec.CommandContext(ctx, "go", "tool", "buildid", gatewayBin).Output()
	require.NoError(t, err)
	parts := strings.Split(strings.TrimSpace(string(id)), "/")
	build := parts[len(parts)-1][:12]
	commit := "devel"
	if revision != nil {
		commit = revision[1] + `\+dirty`
	}
	assert.Regexp(t, `^trap-sandbox `+commit+` build `+regexp.QuoteMeta(build)+` \(serves trapos-sandbox \d+\.\d+\.\d+\)\n$`, out)
}
