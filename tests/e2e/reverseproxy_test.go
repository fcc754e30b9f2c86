package e2e

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"
	"fakecraft/httpapi"

	"trap-sandbox/testkit"
	"trap-sandbox/testkit/opencodefake"

	"tests/internal/child"
	"tests/internal/harness"
	"tests/internal/repo"
)

// nginxExample is the configuration docs/reverse-proxy.md shows, kept as a file so that this
// test runs nginx with it as written; only its placeholders (below) are replaced.
const nginxExample = "docs/examples/nginx-trap-sandbox.conf"

// nginxConsoleExample is the page's optional part for the web console: locations that go in
// the example's server block, before its catch-all location (exampleCatchAll).
const nginxConsoleExample = "docs/examples/nginx-trap-sandbox-console.conf"

// pageFile finds a file the console's page loads beside itself: a script's src, a stylesheet's
// href (a name without a slash).
var pageFile = regexp.MustCompile(`<(?:script|link)\b[^>]*\b(?:src|href)="([^"/:]+)"`)

// The example's placeholders: what an operator edits, and what this test points at its own
// ports and files.
const (
	exampleListen  = "listen 443 ssl;"
	exampleGateway = "127.0.0.1:4445"
	exampleCert    = "/etc/ssl/certs/mc.example.org.pem"
	exampleKey     = "/etc/ssl/private/mc.example.org.key"
	// The console's upstream: the gateway's --listen port.
	exampleListenPort = "127.0.0.1:4444"
	exampleCatchAll   = "    location /                 { return 404; }\n"
)

// TestTheReverseProxyDocShowsItsExample: the page's nginx block is the file this test runs.
func TestTheReverseProxyDocShowsItsExample(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)
	conf, err := os.ReadFile(filepath.Join(root, nginxExample))
	require.NoError(t, err)
	doc, err := os.ReadFile(filepath.Join(root, "docs/reverse-proxy.md"))
	require.NoError(t, err)
	assert.Contains(t, string(doc), "```nginx\n"+string(conf)+"```\n",
		"docs/reverse-proxy.md's first nginx block must be %s as it stands", nginxExample)
	console, err := os.ReadFile(filepath.Join(root, nginxConsoleExample))
	require.NoError(t, err)
	assert.Contains(t, string(doc), "```nginx\n"+string(console)+"```\n",
		"docs/reverse-proxy.md's web console block must be %s as it stands", nginxConsoleExample)
}

// TestComputerConnectsThroughNginx runs nginx with the documented configuration in front of
// the gateway's computers-only port (started with --public-url, as the page says): a computer installs the client
// through it over TLS and connects with wss://, and the host API is not reachable through it.
func TestComputerConnectsThroughNginx(t *testing.T) {
	nginx := nginxPath(t)
	ctx := testContext(t)
	dir := t.TempDir()
	roots := writeSelfSignedCert(t, dir, "localhost")
	port := freePort(t)
	public := fmt.Sprintf("https://localhost:%d", port)

	oc := opencodefake.Start(t, opencodefake.Options{})
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", installPassword,
		"--opencode-url", oc.URL, "--computers-listen", "127.0.0.1:0", "--public-url", public}})
	require.NotEmpty(t, g.ComputersAddr(), "the gateway logs its computers-only port")
	startNginx(t, nginx, dir, false, map[string]string{
		exampleListen:  fmt.Sprintf("listen 127.0.0.1:%d ssl;", port),
		exampleGateway: g.ComputersAddr(),
		exampleCert:    filepath.Join(dir, "cert.pem"),
		exampleKey:     filepath.Join(dir, "key.pem"),
	})

	// A computer of a server whose Java trusts the certificate, as a real CA's would be.
	disk := t.TempDir()
	out := playerSessionHTTP(ctx, t, disk, false, httpapi.Options{AllowPrivate: true, TLSConfig: &tls.Config{RootCAs: roots}},
		"wget run "+public+"/trapos/install "+installPassword, "", "reboot", "sandbox health")
	assert.Contains(t, out, "Installed trapos-sandbox ")
	assert.NotContains(t, out, "Could not check the password", "the installer reached the WebSocket through the proxy")
	assertHealthy(t, out)
	assert.Contains(t, readSettings(t, disk), `[ "sandbox.url" ] = "wss://localhost:`+fmt.Sprint(port)+`/trapos/ws"`)

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	t.Cleanup(client.CloseIdleConnections)
	get := func(path string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, public+path, nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	code, body := get("/healthz")
	assert.Equal(t, http.StatusOK, code, "/healthz is passed for monitoring")
	assert.Equal(t, "ok", strings.TrimSpace(body))
	// The install line copied with a slash after it: the same installer, passed too.
	code, body = get("/trapos/install/")
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `install = "`+public+`/trapos/install";`)
	for _, path := range []string{"/trapos/computers", "/metrics", "/mcp", "/console/"} {
		code, body := get(path)
		assert.Equal(t, http.StatusNotFound, code, "%s must stay on the machine", path)
		assert.Contains(t, body, "nginx", "%s: the proxy's own 404, not the gateway's", path)
	}
	// The same API on the machine itself answers (the host's tools use it there).
	resp, err := http.Get(g.URL("/trapos/computers"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestProxiedComputersAreCountedByTheirOwnAddresses: behind nginx every computer reached the
// gateway from nginx's address, so `trap-sandbox computers` showed 127.0.0.1 under REMOTE for
// all of them and the per-address limits counted every Minecraft server behind it as one. With
// --trusted-proxies naming nginx, two computers dialling it from 127.0.0.2 and 127.0.0.3 show
// those addresses; without it, nginx's, as before.
func TestProxiedComputersAreCountedByTheirOwnAddresses(t *testing.T) {
	nginx := nginxPath(t)
	for _, trusted := range []bool{true, false} {
		t.Run(fmt.Sprintf("trusted=%v", trusted), func(t *testing.T) {
			ctx := testContext(t)
			dir := t.TempDir()
			roots := writeSelfSignedCert(t, dir, "localhost")
			port := freePort(t)
			args := []string{"--password", sandboxPassword, "--opencode-url", opencodefake.ClosedPortURL(t),
				"--computers-listen", "127.0.0.1:0", "--public-url", fmt.Sprintf("https://localhost:%d", port)}
			if trusted {
				args = append(args, "--trusted-proxies", "127.0.0.1")
			}
			g := harness.Start(t, gatewayBin, harness.Options{Args: args})
			startNginx(t, nginx, dir, false, map[string]string{
				exampleListen:  fmt.Sprintf("listen 127.0.0.1:%d ssl;", port),
				exampleGateway: g.ComputersAddr(),
				exampleCert:    filepath.Join(dir, "cert.pem"),
				exampleKey:     filepath.Join(dir, "key.pem"),
			})

			from := map[string]string{"7:": "127.0.0.2", "8:": "127.0.0.3"}
			for id, ip := range map[int]string{7: from["7:"], 8: from["8:"]} {
				opts := computerOptionsAt(t, fmt.Sprintf("wss://localhost:%d/trapos/ws", port), sandboxPassword, "/e2e.lua")
				opts.ID = id
				opts.Files = map[string]string{"/e2e.lua": livenessProgram}
				opts.HTTP.TLSConfig = &tls.Config{RootCAs: roots}
				opts.HTTP.Resolver = loopbackResolver{}
				opts.HTTP.Dial = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext
				c := fakecrafttest.StartWithin(t, opts, testTimeout)
				c.WaitFor(ctx, markerConnected)
			}

			out, errOut, code := cli(ctx, t, g, nil, "computers")
			require.Equal(t, 0, code, errOut)
			remote := map[string]string{}
			for _, line := range lines(out)[1:] {
				fields := strings.Fields(line)
				require.Len(t, fields, 6, "TRAPOS ID, ACCOUNT, CLIENT, CONNECTED SINCE, REMOTE, LAST FRAME:\n%s", out)
				remote[fields[0]] = fields[4]
			}
			require.Len(t, remote, 2, out)
			for id, ip := range from {
				if trusted {
					assert.Equal(t, ip, remote[id], "the address the computer dialled nginx from:\n%s", out)
				} else {
					assert.True(t, strings.HasPrefix(remote[id], "127.0.0.1:"), "nginx's address, without --trusted-proxies:\n%s", out)
				}
			}
		})
	}
}

// TestPlayersReachTheWebConsoleThroughNginx runs nginx with the page's configuration and its
// optional web console part in front of the gateway (--listen's port for the console, as the
// part says): through it, over TLS, the console's page loads, an account's token lists only
// its account's computers and reads one's screen (the stream, unbuffered), and SANDBOX_API_TOKEN
// opens the console as the host. Without a token, or with a wrong one, the API refuses, though
// nginx connects from loopback, with SANDBOX_API_TOKEN set (401) or not (403: the request came
// through a proxy); /mcp, /metrics and the admin routes, and the API's routes the console does
// not call, stay on the machine, whatever the token.
func TestPlayersReachTheWebConsoleThroughNginx(t *testing.T) {
	nginx := nginxPath(t)
	for _, withAPIToken := range []bool{true, false} {
		t.Run(fmt.Sprintf("SANDBOX_API_TOKEN=%v", withAPIToken), func(t *testing.T) {
			ctx := testContext(t)
			dir := t.TempDir()
			roots := writeSelfSignedCert(t, dir, "localhost")
			port := freePort(t)
			public := fmt.Sprintf("https://localhost:%d", port)

			dataDir := "--data-dir=" + t.TempDir()
			alice := lastLineOf(gatewayCLI(ctx, t, "accounts", "add", "alice", dataDir))
			aliceCred := lastLineOf(gatewayCLI(ctx, t, "credentials", "add", "alice", dataDir))
			gatewayCLI(ctx, t, "accounts", "add", "bob", dataDir)
			bobCred := lastLineOf(gatewayCLI(ctx, t, "credentials", "add", "bob", dataDir))
			var env []string
			apiToken := ""
			if withAPIToken {
				apiToken = "host-" + rand.Text()
				env = []string{"SANDBOX_API_TOKEN=" + apiToken}
			}
			g := harness.Start(t, gatewayBin, harness.Options{Env: env, Args: []string{dataDir,
				"--opencode-url", opencodefake.ClosedPortURL(t), "--computers-listen", "127.0.0.1:0",
				"--public-url", public, "--trusted-proxies", "127.0.0.1"}})
			startNginx(t, nginx, dir, true, map[string]string{
				exampleListen:     fmt.Sprintf("listen 127.0.0.1:%d ssl;", port),
				exampleGateway:    g.ComputersAddr(),
				exampleListenPort: g.Addr,
				exampleCert:       filepath.Join(dir, "cert.pem"),
				exampleKey:        filepath.Join(dir, "key.pem"),
			})
			connectScreenComputer(ctx, t, g, "7:desk", aliceCred)
			connectScreenComputer(ctx, t, g, "8:bobpc", bobCred)
			// Labels as the console sends them (encodeURIComponent): a /, a ü, a %; and one as
			// url.PathEscape (the CLI, http-api.md) writes it, with what it leaves unescaped.
			opened := []struct{ id, path string }{
				{"9:a/b", "/trapos/computers/9%3Aa%2Fb"},
				{"10:grün", "/trapos/computers/10%3Agr%C3%BCn"},
				{"11:100%", "/trapos/computers/11%3A100%25"},
				{"12:x+y&z=@$", "/trapos/computers/" + url.PathEscape("12:x+y&z=@$")},
			}
			for _, c := range opened {
				connectScreenComputer(ctx, t, g, c.id, aliceCred)
			}

			client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
			t.Cleanup(client.CloseIdleConnections)
			do := func(ctx context.Context, method, path, token string) *http.Response {
				var body io.Reader
				if method == http.MethodPost {
					body = strings.NewReader(`{}`)
				}
				req, err := http.NewRequestWithContext(ctx, method, public+path, body)
				require.NoError(t, err)
				if method == http.MethodPost {
					req.Header.Set("Content-Type", "application/json")
				}
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := client.Do(req)
				require.NoError(t, err)
				return resp
			}
			call := func(method, path, token string) (int, string) {
				resp := do(ctx, method, path, token)
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				return resp.StatusCode, string(body)
			}
			listed := func(token string) []string {
				code, body := call(http.MethodGet, "/trapos/computers", token)
				require.Equal(t, http.StatusOK, code, body)
				var computers []struct{ TraposID, AccountID string }
				require.NoError(t, json.Unmarshal([]byte(body), &computers))
				var ids []string
				for _, c := range computers {
					ids = append(ids, c.AccountID+"/"+c.TraposID)
				}
				sort.Strings(ids)
				return ids
			}

			code, body := call(http.MethodGet, "/console/", "")
			assert.Equal(t, http.StatusOK, code, "the console's page holds no data: it loads without a token")
			assert.Contains(t, body, "console.js")
			// Every file of the page's passes: one the console gains must be added to the part.
			// Those the page loads (inputs.js, which the gateway makes, is in no directory),
			// and every file of its directory.
			files := map[string]bool{}
			for _, m := range pageFile.FindAllStringSubmatch(body, -1) {
				files[m[1]] = true
			}
			root, err := repo.Root()
			require.NoError(t, err)
			assets, err := os.ReadDir(filepath.Join(root, "tools/trap-sandbox/internal/webconsole/assets"))
			require.NoError(t, err)
			for _, asset := range assets {
				if asset.Name() != "index.html" {
					files[asset.Name()] = true
				}
			}
			assert.Contains(t, files, "inputs.js", "the page's scripts: %s", body)
			for name := range files {
				code, _ = call(http.MethodGet, "/console/"+name, "")
				assert.Equal(t, http.StatusOK, code, "the console's %s, through nginx", name)
			}

			aliceIDs := []string{"alice/10:grün", "alice/11:100%", "alice/12:x+y&z=@$", "alice/7:desk", "alice/9:a/b"}
			assert.Equal(t, aliceIDs, listed(alice), "alice's token lists alice's computers only")
			if withAPIToken {
				assert.Equal(t, append(aliceIDs, "bob/8:bobpc"), listed(apiToken), "SANDBOX_API_TOKEN is the host")
			}
			code, body = call(http.MethodGet, "/trapos/accounts", alice)
			assert.Equal(t, http.StatusOK, code, body)
			assert.Contains(t, body, `"id":"alice"`)
			code, body = call(http.MethodPost, "/trapos/computers/7:desk/requests", alice)
			assert.NotEqual(t, http.StatusNotFound, code, "the console's computer.info reaches the gateway: %s", body)
			assert.NotContains(t, body, "nginx")

			// The screen's stream: its first frame arrives while the stream stays open.
			firstFrame := func(path string) string {
				watch, stop := context.WithCancel(ctx)
				defer stop()
				resp := do(watch, http.MethodGet, path, alice)
				defer resp.Body.Close()
				if !assert.Equal(t, http.StatusOK, resp.StatusCode, path) {
					return ""
				}
				assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
				lines := bufio.NewScanner(resp.Body)
				for lines.Scan() {
					if data, ok := strings.CutPrefix(lines.Text(), "data:"); ok {
						return data
					}
				}
				return ""
			}
			assert.Contains(t, firstFrame("/trapos/computers/7:desk/screen"), `"des"`, "alice's computer's screen, through nginx")
			// Whatever its label, a computer opens as the console opens it: the gateway reads
			// the id nginx passed on still encoded (connectScreenComputer's frame shows id[2:5]).
			for _, c := range opened {
				assert.Contains(t, firstFrame(c.path+"/screen"), `"`+c.id[2:5]+`"`, "%s's screen, through nginx", c.id)
				code, body := call(http.MethodPost, c.path+"/requests", alice)
				assert.NotContains(t, body, "nginx", "%s's computer.info reaches the gateway", c.id)
				assert.NotContains(t, body, "not_connected", "%s's computer.info reaches it: %d %s", c.id, code, body)
				code, body = call(http.MethodPost, c.path+"/input", alice)
				assert.NotContains(t, body, "nginx", "%s's input reaches the gateway", c.id)
				assert.NotContains(t, body, "not_connected", "%s's input reaches it: %d %s", c.id, code, body)
			}

			// bob's computer is not alice's to watch.
			code, body = call(http.MethodGet, "/trapos/computers/8:bobpc/screen", alice)
			assert.Equal(t, http.StatusNotFound, code, body)
			assert.Contains(t, body, "not_connected")

			noToken := http.StatusForbidden // the request came through a proxy: no loopback trust
			if withAPIToken {
				noToken = http.StatusUnauthorized
			}
			for _, path := range []string{"/trapos/computers", "/trapos/accounts", "/trapos/computers/7:desk/screen"} {
				code, body := call(http.MethodGet, path, "")
				assert.Equal(t, noToken, code, "%s without a token: %s", path, body)
				code, body = call(http.MethodGet, path, testkit.WrongSecret(alice))
				assert.Equal(t, http.StatusUnauthorized, code, "%s with a wrong token: %s", path, body)
			}
			code, body = call(http.MethodPost, "/trapos/computers/7:desk/input", "")
			assert.Equal(t, noToken, code, "input without a token: %s", body)

			// Nothing else of the API, whoever asks: nginx's own answer, not the gateway's.
			for _, token := range []string{"", alice, apiToken} {
				for _, route := range []struct{ method, path string }{
					{http.MethodGet, "/mcp"}, {http.MethodPost, "/mcp"}, {http.MethodGet, "/metrics"},
					{http.MethodPost, "/trapos/accounts"}, {http.MethodGet, "/trapos/tokens"},
					{http.MethodPost, "/trapos/credentials"}, {http.MethodGet, "/trapos/ai/turns"},
					{http.MethodGet, "/trapos/computers/7:desk/files/startup.lua"},
					{http.MethodPost, "/trapos/computers/7:desk/screen"}, {http.MethodGet, "/trapos/computers/7:desk/input"},
					{http.MethodGet, "/trapos/computers/7:desk/revoke"}, {http.MethodPost, "/trapos/computers/7:desk/revoke"},
				} {
					code, body := call(route.method, route.path, token)
					assert.Contains(t, []int{http.StatusNotFound, http.StatusForbidden}, code, "%s %s", route.method, route.path)
					assert.Contains(t, body, "nginx", "%s %s: the proxy's own answer, not the gateway's", route.method, route.path)
				}
			}

			// Another route smuggled through a console location: nginx picks the location by
			// the decoded, normalized path, the gateway routes by the path as sent. Each is
			// nginx's own 404. 99:gone is not connected, so what reaches the gateway's files
			// route answers at once.
			for _, token := range []string{alice, apiToken} {
				for _, route := range []struct{ method, path string }{
					// A file read whose normalized path is a console route.
					{http.MethodGet, "/trapos/computers/99:gone/files/x%2F..%2F..%2Fscreen"},
					{http.MethodGet, "/trapos/computers/99:gone/files/x%2F..%2F..%2F..%2Fcomputers"},
					{http.MethodGet, "/trapos/computers/99:gone/files/x%2F..%2F..%2F..%2F..%2Faccounts"},
					{http.MethodGet, "/trapos/computers/99:gone/files/..%2F..%2F..%2F..%2Fconsole%2F"},
					{http.MethodPost, "/trapos/computers/99:gone/files/x%2F..%2F..%2Finput"},
					{http.MethodGet, "/trapos/computers/99:gone/files/x/screen"},
					{http.MethodGet, "/trapos/computers/9:a/files/x/screen"},
					{http.MethodGet, "/trapos/computers/9:a/b/screen"},
					{http.MethodGet, "/trapos/computers/99%3Agone%2F..%2F..%2F..%2Fmetrics"},
					{http.MethodGet, "/trapos/tokens%2F..%2F..%2Fconsole%2F"},
					{http.MethodGet, "/console/..%2Ftrapos%2Ftokens"},
					{http.MethodGet, "/console/%2E%2E/trapos/tokens"},
					{http.MethodGet, "//trapos/computers"},
					// The console's routes, but not as the console sends them.
					{http.MethodGet, "/trapos/computers?x=1"}, {http.MethodGet, "/trapos/accounts?account=bob"},
					{http.MethodGet, "/trapos/computers/9%3Aa%2Fb/screen?x=1"},
					{http.MethodGet, "/trapos/computers/9%3Aa%2Fb/screen/"},
					{http.MethodGet, "/trapos/computers/9%3Aa%2Fb/screen;x"},
					{http.MethodGet, "/trapos/computers/9%3Aa%2Fb;x/screen"},
					{http.MethodGet, "/trapos/computers/9%3Aa%2fb/screen"},
					{http.MethodPost, "/trapos/computers/9%3Aa%2Fb/input/"},
					{http.MethodGet, "/console/console.js?x=1"},
				} {
					code, body := call(route.method, route.path, token)
					assert.Equal(t, http.StatusNotFound, code, "%s %s: %s", route.method, route.path, body)
					assert.Contains(t, body, "nginx", "%s %s: the proxy's own answer, not the gateway's", route.method, route.path)
				}
			}
			// Double encoding and a .. inside an id pass, as one id the gateway reads literally
			// (%25 is a label's %): the screen's route, of a computer that is not connected.
			for _, path := range []string{
				"/trapos/computers/9%3Aa%252Fb/screen",
				"/trapos/computers/99%3Agone%2F..%2F7%3Adesk/screen",
			} {
				code, body := call(http.MethodGet, path, alice)
				assert.Equal(t, http.StatusNotFound, code, "%s: %s", path, body)
				assert.Contains(t, body, "not_connected", path)
			}
		})
	}
}

// loopbackResolver answers every name with 127.0.0.1, where the test's nginx listens: a
// computer that dials from another loopback address cannot reach ::1, which localhost may
// name first.
type loopbackResolver struct{}

func (loopbackResolver) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
}

// TestACommandThroughNginxSaysTheGatewayBehindItStopped: the web console's part passes
// GET /trapos/computers to --listen's port, so a command given --url with the public https://
// name reaches the gateway through nginx. Once the gateway stopped, nginx answered its own
// 502 page, and the command said the proxy passes none of the host API (the answer to its
// 404 for the other routes): the wrong fault and the wrong fix. It now says the proxy got no
// answer from the gateway behind it.
func TestACommandThroughNginxSaysTheGatewayBehindItStopped(t *testing.T) {
	nginx := nginxPath(t)
	ctx := testContext(t)
	dir := t.TempDir()
	writeSelfSignedCert(t, dir, "localhost")
	port := freePort(t)
	public := fmt.Sprintf("https://localhost:%d", port)
	apiToken := "host-" + rand.Text()
	g := harness.Start(t, gatewayBin, harness.Options{Env: []string{"SANDBOX_API_TOKEN=" + apiToken}, Args: []string{
		"--opencode-url", opencodefake.ClosedPortURL(t), "--computers-listen", "127.0.0.1:0", "--public-url", public}})
	startNginx(t, nginx, dir, true, map[string]string{
		exampleListen:     fmt.Sprintf("listen 127.0.0.1:%d ssl;", port),
		exampleGateway:    g.ComputersAddr(),
		exampleListenPort: g.Addr,
		exampleCert:       filepath.Join(dir, "cert.pem"),
		exampleKey:        filepath.Join(dir, "key.pem"),
	})
	computers := func() (string, int) {
		cmd := exec.CommandContext(ctx, gatewayBin, "computers", "--url", public, "--api-token", apiToken)
		// The certificate is trusted as fakecraft trusts it (docs/reverse-proxy.md); a
		// race-built binary otherwise sleeps 1 s at exit.
		cmd.Env = append(harness.CleanEnv(), "SSL_CERT_FILE="+filepath.Join(dir, "cert.pem"), "GORACE=atexit_sleep_ms=0")
		out, err := cmd.CombinedOutput()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return string(out), exitErr.ExitCode()
		}
		require.NoError(t, err)
		return string(out), 0
	}
	out, code := computers()
	require.Equal(t, 0, code, "the console's part passes the list to the gateway: %s", out)
	assert.Contains(t, out, "no computers connected", "the gateway's own answer, through nginx")

	require.NoError(t, g.Stop())
	out, code = computers()
	assert.Equal(t, 1, code, out)
	assert.Equal(t, "trap-sandbox: list computers: the gateway at "+public+` answered HTTP 502, a reverse proxy's page "502 Bad Gateway": `+
		"the proxy got no answer from the gateway behind it (stopped, or not at the address the proxy passes to); "+
		"start the gateway, or see why in the proxy's error log\n", out)
}

// nginxPath finds nginx: on PATH, or where Debian's package puts it (/usr/sbin, not on a
// plain user's PATH). CI installs it (.ci/run).
func nginxPath(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	if p, err := exec.LookPath("/usr/sbin/nginx"); err == nil {
		return p
	}
	t.Skip("the reverse-proxy test needs nginx (apt-get install -y nginx; .ci/run installs it): none on PATH or in /usr/sbin")
	return ""
}

// startNginx runs nginx in the foreground with the example configuration, each placeholder
// replaced, inside a minimal main configuration whose files all live in dir, and waits until it
// has started its worker (its listening socket is open by then). The test's cleanup stops it.
// With console, the page's web console locations go in the server block, as the page says.
func startNginx(t *testing.T, nginx, dir string, console bool, replace map[string]string) {
	t.Helper()
	root, err := repo.Root()
	require.NoError(t, err)
	example, err := os.ReadFile(filepath.Join(root, nginxExample))
	require.NoError(t, err)
	site := string(example)
	if console {
		locations, err := os.ReadFile(filepath.Join(root, nginxConsoleExample))
		require.NoError(t, err)
		require.Contains(t, site, exampleCatchAll, "%s lost the location the console's go before", nginxExample)
		site = strings.Replace(site, exampleCatchAll, string(locations)+exampleCatchAll, 1)
	}
	// One pass over the example: replaced one after another, a value could be taken for another
	// placeholder (nginx's port 44457 for --computers-listen's 127.0.0.1:4445, which made it
	// listen on 127.0.0.1:356637 in CI).
	var pairs []string
	for placeholder, value := range replace {
		require.Contains(t, site, placeholder, "%s lost a placeholder this test replaces", nginxExample)
		pairs = append(pairs, placeholder, value)
	}
	site = strings.NewReplacer(pairs...).Replace(site)
	sitePath := filepath.Join(dir, "site.conf")
	require.NoError(t, os.WriteFile(sitePath, []byte(site), 0o600))
	main := fmt.Sprintf(`daemon off;
master_process on;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log stderr notice;
events {}
http {
    access_log off;
    # Answers stay in memory: the worker (nobody, under root) cannot write below the test's
    # private temporary directory. Debian's own paths are the package's.
    proxy_max_temp_file_size 0;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[2]s;
}
`, dir, sitePath)
	mainPath := filepath.Join(dir, "nginx.conf")
	require.NoError(t, os.WriteFile(mainPath, []byte(main), 0o600))

	log := &markerWriter{marker: "start worker process", seen: make(chan struct{})}
	// -e: the error log before the configuration is read, which would otherwise be
	// /var/log/nginx/error.log (not writable unless root).
	cmd := exec.Command(nginx, "-e", "stderr", "-p", dir, "-c", mainPath)
	cmd.Stdout, cmd.Stderr = log, log
	proc, err := child.Start("nginx", cmd)
	require.NoError(t, err)
	t.Cleanup(func() {
		// SIGTERM is nginx's fast stop: it closes what is still open rather than wait for it.
		if err := proc.Stop(harness.StopTimeout); err != nil {
			t.Errorf("nginx did not stop cleanly: %v\n%s", err, log.String())
		}
	})
	select {
	case <-log.seen:
	case <-proc.Exited():
		t.Fatalf("nginx exited before starting (%v):\n%s", proc.ExitErr(), log.String())
	case <-t.Context().Done():
	}
}

// markerWriter keeps a process's output and closes seen once marker has appeared in it.
type markerWriter struct {
	marker string
	seen   chan struct{}

	mu   sync.Mutex
	buf  strings.Builder
	done bool
}

func (w *markerWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.done && strings.Contains(w.buf.String(), w.marker) {
		w.done = true
		close(w.seen)
	}
	return len(p), nil
}

func (w *markerWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// writeSelfSignedCert writes cert.pem and key.pem for name into dir and returns a pool that
// trusts the certificate.
func writeSelfSignedCert(t *testing.T, dir, name string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cert.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return roots
}

// freePort is a loopback TCP port free a moment ago, for a server (nginx) that takes no
// port 0.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}
