package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/ccstr"
	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit/opencodefake"
)

// TestLatin1LabelArrivesAsTyped: `fakecraft run --label küche` stores the label as a
// player's would be (ccstr.FromText: the five CC bytes k\xFCche), and the daemon's hello
// carries it so that the gateway lists 0:küche, not 0:kÃ¼che; what the computer prints of it
// reads back as typed in the transcript.
func TestLatin1LabelArrivesAsTyped(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.Label = ccstr.FromText("küche")
	require.Equal(t, "k\xfcche", opts.Label)
	opts.Files = map[string]string{"/e2e.lua": `print("label: " .. os.getComputerLabel())` + idleProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerIdle)
	assert.Contains(t, c.Output(), "label: küche\n", "the transcript is UTF-8 text")

	out, errOut, code := cli(ctx, t, g, nil, "computers")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "0:küche")
	out, errOut, code = cli(ctx, t, g, nil, "info", "0:küche")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `(?m)^label:\s+küche$`, out)
	assert.NotContains(t, out, "relabelled:", "the label and its traposId's agree, ü and all")
}
