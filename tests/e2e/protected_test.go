package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit/opencodefake"
)

// TestFileWriteCannotChangeTheBoot: with sandbox.allow_files write and sandbox.allow_exec
// false, the host rewrote /.settings (allow_exec true) or dropped a file into /startup/, and
// after the next boot lua.exec ran (issue 22). Through the real gateway's HTTP API, every
// such change is now refused with forbidden naming sandbox.allow_exec, in whatever spelling,
// and the computer's disk keeps none of it; other files are still the host's to write.
func TestFileWriteCannotChangeTheBoot(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 7, "north"
	opts.Overlay = t.TempDir()
	opts.Settings["sandbox.allow_files"] = "write"
	opts.Files = map[string]string{"/e2e.lua": idleProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerIdle)

	status, got := postRequest(ctx, t, g, requestTraposID, `{"type":"fs.write","payload":{"path":"/e2e-evil.lua","data":"print('owned')"}}`)
	require.Equal(t, http.StatusOK, status)
	require.True(t, got.OK, "%+v", got.Error)

	for _, body := range []string{
		`{"type":"fs.write","payload":{"path":"/.settings","data":"{ [\"sandbox.allow_exec\"] = true, }"}}`,
		`{"type":"fs.write","payload":{"path":"//x/../.SETTINGS. ","data":"{ [\"sandbox.allow_exec\"] = true, }"}}`,
		`{"type":"fs.write","payload":{"path":"/startup/evil.lua","data":"print('owned')"}}`,
		`{"type":"fs.write","payload":{"path":"\\Startup.lua","data":"print('owned')"}}`,
		`{"type":"fs.write","payload":{"path":"/shell.lua","data":"print('owned')"}}`,
		`{"type":"fs.write","payload":{"path":"/servers/cc/expect.lua","data":"print('owned')"}}`,
		`{"type":"fs.makeDir","payload":{"path":"/startup"}}`,
		`{"type":"fs.move","payload":{"from":"/e2e-evil.lua","to":"/x/..*/startup.lua"}}`,
		`{"type":"fs.delete","payload":{"path":"/servers/sandbox.lua"}}`,
		`{"type":"fs.delete","payload":{"path":"/apis"}}`,
	} {
		status, got := postRequest(ctx, t, g, requestTraposID, body)
		require.Equal(t, http.StatusOK, status, body)
		assert.False(t, got.OK, body)
		if assert.NotNil(t, got.Error, body) {
			assert.Equal(t, "forbidden", got.Error.Code, body)
			assert.Contains(t, got.Error.Message, "needs sandbox.allow_exec: it would change ", body)
			assert.Contains(t, got.Error.Message, "the owner can allow it with: set sandbox.allow_exec true", body)
		}
	}

	for _, name := range []string{"startup.lua", "startup", "shell.lua", "servers"} {
		_, err := os.Stat(filepath.Join(opts.Overlay, name))
		assert.True(t, os.IsNotExist(err), "the host put %s on the computer's disk", name)
	}
	if settings, err := os.ReadFile(filepath.Join(opts.Overlay, ".settings")); err == nil {
		assert.NotContains(t, string(settings), "allow_exec", "the host rewrote /.settings")
	}
	_, err := os.Stat(filepath.Join(opts.Overlay, "e2e-evil.lua"))
	assert.NoError(t, err, "the refused move left the file where it was")

	status, got = postRequest(ctx, t, g, requestTraposID, `{"type":"fs.read","payload":{"path":"/servers/sandbox.lua"}}`)
	require.Equal(t, http.StatusOK, status)
	assert.True(t, got.OK, "the daemon's own file is still there to read: %+v", got.Error)
	status, got = postRequest(ctx, t, g, requestTraposID, `{"type":"lua.exec","payload":{"code":"1"}}`)
	require.Equal(t, http.StatusOK, status)
	assert.False(t, got.OK)
	if assert.NotNil(t, got.Error) {
		assert.Equal(t, "forbidden", got.Error.Code)
	}
}

// ownerProgram is the player at the computer: once connected, it waits, and when a job the
// host runs asks it to (e2e_withdraw), it takes exec back as a player would, with CC's `set`,
// and says it is done (e2e_withdrawn).
const ownerProgram = `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
print("` + markerIdle + `")
while true do
  local event = os.pullEvent()
  if event == "e2e_withdraw" then
    shell.run("set", "sandbox.allow_exec", "false")
    os.queueEvent("e2e_withdrawn")
  end
end
`

// TestWithdrawingExecStopsARunningJob: the owner typed `set sandbox.allow_exec false` while
// a lua.exec job of the host's ran, and the job ran on (up to its timeout of as much as a
// minute), doing what it liked, and its answer reached the host. The job now stops at the
// next event, before it runs again: the host reads forbidden naming the setting, and what the
// job would have done after the owner's `set` is not done.
func TestWithdrawingExecStopsARunningJob(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 7, "north"
	opts.Overlay = t.TempDir()
	opts.Settings["sandbox.allow_exec"] = "true"
	opts.Files = map[string]string{"/e2e.lua": ownerProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerIdle)

	status, got := postRequest(ctx, t, g, requestTraposID, `{"type":"lua.exec","payload":{"code":`+
		`"os.queueEvent('e2e_withdraw'); os.pullEvent('e2e_withdrawn'); fs.open('/after-withdraw', 'w').close(); return 'ran on'"}}`)
	require.Equal(t, http.StatusOK, status)
	require.False(t, got.OK, "the job ran on after the owner withdrew exec: %+v", got.Payload)
	require.NotNil(t, got.Error)
	assert.Equal(t, "forbidden", got.Error.Code)
	assert.Equal(t, "lua.exec was stopped while it ran: the owner withdrew sandbox.allow_exec (it is now false); "+
		"the owner can allow it again with: set sandbox.allow_exec true", got.Error.Message)
	_, err := os.Stat(filepath.Join(opts.Overlay, "after-withdraw"))
	assert.True(t, os.IsNotExist(err), "the job wrote a file after the owner withdrew exec")

	status, got = postRequest(ctx, t, g, requestTraposID, `{"type":"shell.run","payload":{"command":"ls"}}`)
	require.Equal(t, http.StatusOK, status)
	assert.False(t, got.OK)
	if assert.NotNil(t, got.Error) {
		assert.Equal(t, "forbidden", got.Error.Code)
	}
}
