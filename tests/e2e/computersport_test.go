package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// TestAComputerOnTheGatewaysMachineUsesTheComputersPort is the same-machine setup of the user
// guide's section 3: the gateway with --computers-listen, and the Minecraft server's http rule
// allowing that port alone. A player installs with the install line the gateway logged (the
// computers' port's), reboots and is connected; a program on that computer that posts to the
// host API through the only port it may reach gets the computers-only 404 and makes no
// account; and the gateway does not warn of a computer on its machine without a token.
func TestAComputerOnTheGatewaysMachineUsesTheComputersPort(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", oc.URL,
		"--computers-listen", "127.0.0.1:0"}})
	computers := g.ComputersAddr()
	require.NotEmpty(t, computers, g.Log())
	install := "wget run http://" + computers + "/trapos/install"
	require.Contains(t, g.Log(), `install="`+install+`"`, "the start-up line names the computers' port")

	dir := t.TempDir()
	steal := `local ok, err, resp = http.post("http://` + computers + `/trapos/accounts", '{"id":"mallory","admin":true}', {["Content-Type"] = "application/json"})
print(ok and "answered " .. ok.getResponseCode() or "refused: " .. tostring(err))
if resp then
  print(resp.getResponseCode())
  local f = fs.open("answer.txt", "wb") f.write(resp.readAll()) f.close() resp.close()
end
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "steal.lua"), []byte(steal), 0o644))
	out := playerSession(ctx, t, dir, true, install+" "+installPassword, "", "reboot", "sandbox health", "steal")
	assert.Contains(t, out, "Installed trapos-sandbox ")
	assert.Contains(t, readSettings(t, dir), `[ "sandbox.url" ] = "ws://`+computers+`/trapos/ws"`)
	assertHealthy(t, out)
	stole := afterLast(out, "> steal")
	assert.Contains(t, stole, "refused: Not Found\n404\tNot Found\n", out)
	answer, err := os.ReadFile(filepath.Join(dir, "answer.txt"))
	require.NoError(t, err, out)
	assert.Equal(t, "this port (--computers-listen) serves computers only (GET /trapos/ws, /trapos/install, /trapos/files/..., /healthz): "+
		"the host API, the web console, /mcp and /metrics are on --listen\n", string(answer), "one line, in bytes a computer shows as they are")

	// The host's own tools reach the API on --listen's port, and it holds no such account.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL("/trapos/accounts"), nil)
	require.NoError(t, err)
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	accounts, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(accounts))
	assert.NotContains(t, string(accounts), "mallory")
	assert.NotContains(t, g.Log(), "a computer connected from this machine")
}

// TestAnInstallLineWithADoubledSlashInstallsThroughTheComputersPort: the install line typed with
// a doubled slash (http://host:port//trapos/install, as after a URL that ends in /) on the
// computers' port installs, as on --listen's, which redirects it to /trapos/install: the
// computers' port answered it 404, ComputersOnlyAnswer, and wget said Failed.
func TestAnInstallLineWithADoubledSlashInstallsThroughTheComputersPort(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword, "--opencode-url", oc.URL,
		"--computers-listen", "127.0.0.1:0"}})
	computers := g.ComputersAddr()
	require.NotEmpty(t, computers, g.Log())
	dir := t.TempDir()
	out := playerSession(ctx, t, dir, true, "wget run http://"+computers+"//trapos/install "+installPassword, "")
	assert.Contains(t, out, "Installed trapos-sandbox ")
	assert.Contains(t, readSettings(t, dir), `[ "sandbox.url" ] = "ws://`+computers+`/trapos/ws"`, out)
}
