package integration

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"tests/internal/harness"
	"tests/internal/repo"
)

func httpGet(t *testing.T, url string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(testContext(t), http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, body
}

// TestServedFilesAreTheRepositorys: every file packages/trapos-sandbox/ccpm.json lists is
// served by the real binary at /trapos/files/<path>, byte for byte trapos/<path>, so the
// client a computer downloads can never drift from the repository.
func TestServedFilesAreTheRepositorys(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(root, "packages", "trapos-sandbox", "ccpm.json"))
	require.NoError(t, err)
	var desc struct {
		Files []string `json:"files"`
	}
	require.NoError(t, json.Unmarshal(raw, &desc))
	require.NotEmpty(t, desc.Files)

	g := startGateway(t)
	for _, f := range desc.Files {
		want, err := os.ReadFile(filepath.Join(root, "trapos", filepath.FromSlash(f)))
		require.NoError(t, err)
		code, got := httpGet(t, g.URL("/trapos/files/"+f))
		require.Equal(t, http.StatusOK, code, f)
		require.Equal(t, string(want), string(got), "served %s differs from the repository's", f)
	}
	code, _ := httpGet(t, g.URL("/trapos/files/tests/libsandbox_spec.lua"))
	require.Equal(t, http.StatusNotFound, code)
}

// TestInstallerIsLuaNamingTheGateway: the installer the real binary serves is a Lua chunk
// that parses, names the gateway it came from, and needs no API token.
func TestInstallerIsLuaNamingTheGateway(t *testing.T) {
	g := startGateway(t, "--api-token", "secret-token")
	code, body := httpGet(t, g.URL("/trapos/install"))
	require.Equal(t, http.StatusOK, code, string(body))
	_, err := lua.NewState().LoadString(string(body))
	require.NoError(t, err, "the installer does not parse")
	require.Contains(t, string(body), `websocket = "`+g.WebSocketURL()+`";`)

	pub := startGateway(t, "--public-url", "https://mc.example.org/sandbox/")
	_, body = httpGet(t, pub.URL("/trapos/install"))
	require.Contains(t, string(body), `websocket = "wss://mc.example.org/sandbox/trapos/ws";`)
	require.Contains(t, pub.Log(), `install="wget run https://mc.example.org/sandbox/trapos/install"`)
}

// TestInstallerRefusesAnInjectedHost: a Host header that is not a plain host[:port] gets 400,
// so no request can write Lua into the installer.
func TestInstallerRefusesAnInjectedHost(t *testing.T) {
	g := startGateway(t)
	for _, host := range []string{`x";os.shutdown()--`, `a\b`, "h/ost"} {
		conn, err := net.Dial("tcp", g.Addr)
		require.NoError(t, err)
		_, err = io.WriteString(conn, "GET /trapos/install HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		_ = conn.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "Host %q: %s", host, body)
		require.False(t, strings.Contains(string(body), "os.shutdown"), "Host %q echoed into %s", host, body)
	}
}
