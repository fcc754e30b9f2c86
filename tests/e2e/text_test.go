package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"fakecraft/fakecrafttest"

	"tests/internal/harness"
)

// Fixtures of the text rule's test (docs/protocol.md, "Text and bytes").
const (
	textTraposID = "6:text"
	// hostText is what every surface sends: ASCII, é (one byte, E9, in CC) and an em dash,
	// which CC's character set cannot hold (sent as '?', with a warning).
	hostText = "ASCII é —"
	// shownText is what every surface shows back: the computer's bytes as text.
	shownText = "ASCII é ?"
	// textProgram makes names from raw bytes, as a player's é (byte E9) and a C1 control byte
	// (CC drops bytes below 32 from paths), then idles.
	textProgram = `
fs.makeDir("/names")
local h = fs.open("/names/\233.txt", "wb") h.write("caf\233\n") h.close()
h = fs.open("/names/a\155b", "wb") h.write("c1") h.close()
` + idleProgram
	// showProgram prints its arguments after the first and keeps their bytes in /cmd/<first>.
	showProgram = `
local args = { ... }
local surface = table.remove(args, 1)
local s = table.concat(args, " ")
local h = fs.open("/cmd/" .. surface, "wb") h.write(s) h.close()
print(s)
`
)

// ccBytes are the bytes hostText is on the computer.
var ccBytes = []byte("ASCII \xe9 ?")

// textSurface is one host surface, driven the way its users drive it. Every method returns
// what the surface shows, and the warnings it gave about characters CC cannot hold.
type textSurface struct {
	name  string
	write func(path, content string) (warnings []string)
	read  func(path string) string
	exec  func(code string) (returns []any, warnings []string)
	run   func(command string) (output string, warnings []string)
	list  func(dir string) []string
}

// TestSameTextOnEverySurface: the CLI (the real binary), the HTTP API, MCP over HTTP and MCP
// over stdio send the same text as file content, path, Lua code and a command line; each puts
// the same bytes on the computer (checked there, in Lua), shows the same text back, and names
// the character it could not send. Names the computer made from raw bytes list in a form
// every surface takes back.
func TestSameTextOnEverySurface(t *testing.T) {
	ctx := testContext(t)
	g := startTextComputer(ctx, t, map[string]string{"/e2e.lua": textProgram, "/show.lua": showProgram})

	surfaces := []textSurface{
		cliSurface(ctx, t, g),
		httpSurface(ctx, t, g),
		mcpSurface(ctx, t, "mcp-http", harness.ConnectMCP(ctx, t, g, "")),
		mcpSurface(ctx, t, "mcp-stdio", harness.ConnectMCPStdio(ctx, t, gatewayBin, g)),
	}
	for _, s := range surfaces {
		t.Run(s.name, func(t *testing.T) {
			path := "/t/" + s.name + "/é.txt"
			warnings := s.write(path, hostText+"\n")
			requireDashWarning(t, warnings, "write")
			assert.Equal(t, shownText+"\n", s.read(path), "the file reads back as the text the computer holds")

			returns, warnings := s.exec(`local s = "` + hostText + `" return s, #s`)
			requireDashWarning(t, warnings, "exec")
			assert.Equal(t, []any{shownText, float64(len(ccBytes))}, returns, "é is one byte in the code, — is ?")

			out, warnings := s.run("/show.lua " + s.name + " " + hostText)
			requireDashWarning(t, warnings, "run")
			assert.Equal(t, shownText+"\n", out)

			names := s.list("/names")
			assert.Contains(t, names, "é.txt", "a player's é (byte E9) lists as é")
			assert.Len(t, names, 2, "%v", names)
			if s.name == "cli" {
				assert.Contains(t, names, `a\x9bb`, "a terminal sees a control byte as \\xNN, the form paths take")
			} else {
				assert.Contains(t, names, "a\u009bb")
			}
			for _, name := range names {
				got := s.read("/names/" + name)
				assert.NotEmpty(t, got, "%s: what ls shows (%q) is taken back", s.name, name)
			}
			assert.Equal(t, "café\n", s.read("/names/é.txt"))

			// é written decomposed (e and U+0301, as macOS gives file names) is é, the byte E9:
			// it was "e?", and the path was refused with U+0301's bytes as its fix.
			assert.Empty(t, s.write("/t/"+s.name+"/cafe\u0301.txt", "cafe\u0301\n"), "nothing was sent as ?")
			assert.Equal(t, "café\n", s.read("/t/"+s.name+"/caf\u00e9.txt"), "the file is café.txt, é one byte")
		})
	}

	// On the computer, in Lua: every surface put the same bytes in its file and its command.
	var check []string
	for _, s := range surfaces {
		check = append(check, `bytes("/t/`+s.name+`/\233.txt")`, `bytes("/cmd/`+s.name+`")`)
	}
	code := `local function bytes(p) local h = fs.open(p, "rb") if not h then return "missing " .. p end ` +
		`local d = h.readAll() h.close() return { d:byte(1, -1) } end return ` + strings.Join(check, ", ")
	status, ans := postRequest(ctx, t, g, textTraposID, mustJSON(t, map[string]any{"type": "lua.exec", "payload": map[string]any{"code": code}, "timeoutMs": 20000}))
	require.Equal(t, http.StatusOK, status)
	require.True(t, ans.OK, "%+v", ans.Error)
	returns, _ := ans.Payload["returns"].([]any)
	require.Len(t, returns, 2*len(surfaces), "%v", ans.Payload)
	for i, s := range surfaces {
		assert.Equal(t, byteList(append(append([]byte{}, ccBytes...), '\n')), returns[2*i], "%s: the file's bytes on the computer", s.name)
		assert.Equal(t, byteList(ccBytes), returns[2*i+1], "%s: the command's bytes on the computer", s.name)
	}
}

// TestAByteThatIsNotUTF8InARequestStandsForItself: a JSON payload typed in a Latin-1 terminal
// (the CLI's request) or sent so by a script (POST /requests) holds the byte FC for ü. By the
// text rule it is that byte on the computer; sent as it came it made the frame no UTF-8 text,
// and the computer closed its socket (1007) before it answered.
func TestAByteThatIsNotUTF8InARequestStandsForItself(t *testing.T) {
	ctx := testContext(t)
	g := startTextComputer(ctx, t, map[string]string{"/e2e.lua": idleProgram})

	_, errOut, code := cli(ctx, t, g, nil, "request", textTraposID, "fs.write", "{\"path\":\"/latin1/cli.txt\",\"data\":\"k\xfcche\"}")
	require.Equal(t, 0, code, errOut)
	status, ans := postRequest(ctx, t, g, textTraposID, "{\"type\":\"fs.write\",\"payload\":{\"path\":\"/latin1/http.txt\",\"data\":\"k\xfcche\"}}")
	require.Equal(t, http.StatusOK, status)
	require.True(t, ans.OK, "%+v", ans.Error)

	code2 := `local function bytes(p) local h = fs.open(p, "rb") local d = h.readAll() h.close() return { d:byte(1, -1) } end ` +
		`return bytes("/latin1/cli.txt"), bytes("/latin1/http.txt")`
	status, ans = postRequest(ctx, t, g, textTraposID, mustJSON(t, map[string]any{"type": "lua.exec", "payload": map[string]any{"code": code2}}))
	require.Equal(t, http.StatusOK, status)
	require.True(t, ans.OK, "%+v", ans.Error)
	want := byteList([]byte("k\xfcche"))
	assert.Equal(t, []any{want, want}, ans.Payload["returns"], "ü is the byte FC on the computer, from both")
}

// startTextComputer starts a gateway and the computer 6:text, which lets the host write files
// and run Lua, with files on its disk (/e2e.lua its program), and waits until it idles.
func startTextComputer(ctx context.Context, t *testing.T, files map[string]string) *harness.Gateway {
	t.Helper()
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 6, "text"
	opts.Settings["sandbox.allow_files"] = "write"
	opts.Settings["sandbox.allow_exec"] = "true"
	opts.Files = files
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerIdle)
	return g
}

func requireDashWarning(t *testing.T, warnings []string, what string) {
	t.Helper()
	require.Len(t, warnings, 1, "%s: one warning, for the em dash: %v", what, warnings)
	assert.Contains(t, warnings[0], "U+2014", what)
	fix := `\226\128\148`
	if what == "write" { // a .txt file: a Lua escape is bytes only in Lua code
		fix = "to store its UTF-8 bytes (E2 80 94), send the file as bytes"
	}
	assert.Contains(t, warnings[0], fix, "%s: the warning names the fix", what)
}

func byteList(b []byte) []any {
	out := make([]any, len(b))
	for i, c := range b {
		out[i] = float64(c)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// cliSurface drives the real binary's commands.
func cliSurface(ctx context.Context, t *testing.T, g *harness.Gateway) textSurface {
	run := func(args ...string) (string, []string) {
		t.Helper()
		out, errOut, code := cli(ctx, t, g, nil, args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		var warnings []string
		for _, line := range strings.Split(errOut, "\n") {
			if strings.HasPrefix(line, "trap-sandbox: warning: ") {
				warnings = append(warnings, line)
			}
		}
		return out, warnings
	}
	dir := t.TempDir()
	return textSurface{
		name: "cli",
		write: func(path, content string) []string {
			local := filepath.Join(dir, "upload.txt")
			require.NoError(t, os.WriteFile(local, []byte(content), 0o600))
			_, warnings := run("put", textTraposID, local, path)
			return warnings
		},
		read: func(path string) string {
			out, _ := run("cat", textTraposID, path)
			local := filepath.Join(dir, "download.txt")
			run("get", textTraposID, path, local)
			got, err := os.ReadFile(local)
			require.NoError(t, err)
			assert.Equal(t, out, string(got), "get writes what cat shows")
			return out
		},
		exec: func(code string) ([]any, []string) {
			out, warnings := run("exec", textTraposID, code)
			var returns []any
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var v any
				require.NoError(t, json.Unmarshal([]byte(line), &v), line)
				returns = append(returns, v)
			}
			return returns, warnings
		},
		run: func(command string) (string, []string) { return run("run", textTraposID, command) },
		list: func(dir string) []string {
			out, _ := run("ls", textTraposID, dir)
			var names []string
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				names = append(names, strings.Fields(line)[1])
			}
			return names
		},
	}
}

// httpSurface drives the HTTP API as a script would.
func httpSurface(ctx context.Context, t *testing.T, g *harness.Gateway) textSurface {
	files := func(path string) string {
		parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
		for i, p := range parts {
			parts[i] = url.PathEscape(p)
		}
		return g.URL("/trapos/computers/" + url.PathEscape(textTraposID) + "/files/" + strings.Join(parts, "/"))
	}
	do := func(method, target, contentType, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, target, strings.NewReader(body))
		require.NoError(t, err)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := harness.HTTPClient().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, data
	}
	type answer struct {
		OK       bool            `json:"ok"`
		Payload  json.RawMessage `json:"payload"`
		Warnings []struct {
			Message string `json:"message"`
		} `json:"warnings"`
	}
	decode := func(status int, body []byte) (answer, []string) {
		t.Helper()
		require.Equal(t, http.StatusOK, status, "%s", body)
		var a answer
		require.NoError(t, json.Unmarshal(body, &a), "%s", body)
		require.True(t, a.OK, "%s", body)
		var warnings []string
		for _, w := range a.Warnings {
			warnings = append(warnings, w.Message)
		}
		return a, warnings
	}
	request := func(typ string, payload map[string]any, out any) []string {
		t.Helper()
		a, warnings := decode(do(http.MethodPost, g.URL("/trapos/computers/"+url.PathEscape(textTraposID)+"/requests"), "application/json",
			mustJSON(t, map[string]any{"type": typ, "payload": payload, "timeoutMs": 20000})))
		require.NoError(t, json.Unmarshal(a.Payload, out))
		return warnings
	}
	return textSurface{
		name: "http",
		write: func(path, content string) []string {
			_, warnings := decode(do(http.MethodPut, files(path), "text/plain; charset=utf-8", content))
			return warnings
		},
		read: func(path string) string {
			status, body := do(http.MethodGet, files(path), "", "")
			require.Equal(t, http.StatusOK, status, "%s", body)
			return string(body)
		},
		exec: func(code string) ([]any, []string) {
			var ans struct {
				Returns []any `json:"returns"`
			}
			warnings := request("lua.exec", map[string]any{"code": code, "timeoutMs": 15000}, &ans)
			return ans.Returns, warnings
		},
		run: func(command string) (string, []string) {
			var ans struct {
				Output string `json:"output"`
			}
			warnings := request("shell.run", map[string]any{"command": command, "timeoutMs": 15000}, &ans)
			return ans.Output, warnings
		},
		list: func(dir string) []string {
			a, _ := decode(do(http.MethodGet, files(dir), "", ""))
			var listing struct {
				Entries []struct {
					Name string `json:"name"`
				} `json:"entries"`
			}
			require.NoError(t, json.Unmarshal(a.Payload, &listing))
			var names []string
			for _, e := range listing.Entries {
				names = append(names, e.Name)
			}
			return names
		},
	}
}

// mcpSurface drives the MCP tools through an SDK client session.
func mcpSurface(ctx context.Context, t *testing.T, name string, s *sdk.ClientSession) textSurface {
	call := func(tool string, args map[string]any, out any) {
		t.Helper()
		args["traposId"] = textTraposID
		harness.ToolOK(t, harness.CallTool(ctx, t, s, tool, args), textTraposID, out)
	}
	type warned struct {
		Warnings []struct {
			Message string `json:"message"`
		} `json:"warnings"`
	}
	messages := func(w warned) []string {
		var out []string
		for _, x := range w.Warnings {
			out = append(out, x.Message)
		}
		return out
	}
	return textSurface{
		name: name,
		write: func(path, content string) []string {
			var out warned
			call("write_file", map[string]any{"path": path, "content": content}, &out)
			return messages(out)
		},
		read: func(path string) string {
			var out struct {
				Content *string `json:"content"`
			}
			call("read_file", map[string]any{"path": path}, &out)
			require.NotNil(t, out.Content, "%s reads as text", path)
			return *out.Content
		},
		exec: func(code string) ([]any, []string) {
			var out struct {
				warned
				Returns []any `json:"returns"`
			}
			call("run_lua", map[string]any{"code": code, "timeoutMs": 20000}, &out)
			return out.Returns, messages(out.warned)
		},
		run: func(command string) (string, []string) {
			var out struct {
				warned
				Output string `json:"output"`
			}
			call("run_program", map[string]any{"command": command, "timeoutMs": 20000}, &out)
			return out.Output, messages(out.warned)
		},
		list: func(dir string) []string {
			var out struct {
				Entries []struct {
					Name string `json:"name"`
				} `json:"entries"`
			}
			call("list_files", map[string]any{"path": dir}, &out)
			var names []string
			for _, e := range out.Entries {
				names = append(names, e.Name)
			}
			return names
		},
	}
}
