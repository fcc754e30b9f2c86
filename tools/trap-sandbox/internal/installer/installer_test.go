package installer

import (
	"bytes"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"traposclient"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/server"
)

// newMux serves the module on the shared server, with an API token set: the routes must
// stay public all the same.
func newMux(t *testing.T, public *Base) (http.Handler, traposclient.Package) {
	t.Helper()
	pkg, err := traposclient.Sandbox()
	if err != nil {
		t.Fatal(err)
	}
	return newMuxLogging(t, public, slog.New(slog.DiscardHandler)), pkg
}

// newMuxLogging is newMux writing the module's log to logger.
func newMuxLogging(t *testing.T, public *Base, logger *slog.Logger) http.Handler {
	t.Helper()
	pkg, err := traposclient.Sandbox()
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(logger, server.Config{APIToken: "token"}, New(pkg, public, logger, clock.NewFake(time.Unix(0, 0))))
	return srv.Handler()
}

func get(t *testing.T, h http.Handler, host, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = host
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestInstallerNamesTheRequestHost(t *testing.T) {
	mux, pkg := newMux(t, nil)
	code, body := get(t, mux, "192.168.1.20:4444", InstallPath)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	for _, want := range []string{
		`websocket = "ws://192.168.1.20:4444/trapos/ws";`,
		`files = "http://192.168.1.20:4444/trapos/files/";`,
		`install = "http://192.168.1.20:4444/trapos/install";`,
		`version = "` + pkg.Version + `";`,
		`"servers/sandbox.lua";`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("installer lacks %s", want)
		}
	}
}

func TestInstallerUsesThePublicURL(t *testing.T) {
	public, err := ParsePublicURL("https://mc.example.org/sandbox")
	if err != nil {
		t.Fatal(err)
	}
	mux, _ := newMux(t, &public)
	_, body := get(t, mux, "10.0.0.5:4444", InstallPath)
	if !strings.Contains(body, `websocket = "wss://mc.example.org/sandbox/trapos/ws";`) || strings.Contains(body, "10.0.0.5") {
		t.Fatalf("installer does not name the public URL:\n%s", body[:400])
	}
}

// TestForwardedHeadersNameNoOtherSource: the installer names the host the computer asked
// (or --public-url), never one a header beside it names: whoever can add a header on the way
// (a proxy, a page's fetch) cannot make a computer fetch its files or say hello elsewhere.
func TestForwardedHeadersNameNoOtherSource(t *testing.T) {
	mux, _ := newMux(t, nil)
	for _, path := range []string{InstallPath, FilesPath + LayoutFile} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host = "192.168.1.20:4444"
		req.Header.Set("X-Forwarded-Host", "evil.example")
		req.Header.Set("X-Forwarded-Proto", "https")
		req.Header.Set("Forwarded", "host=evil.example;proto=https")
		req.Header.Set("X-Original-URL", "http://evil.example/trapos/install")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code != http.StatusOK || strings.Contains(body, "evil") {
			t.Errorf("%s: status %d, names another source:\n%.600s", path, rec.Code, body)
		}
		for _, want := range []string{`websocket = "ws://192.168.1.20:4444/trapos/ws";`, `files = "http://192.168.1.20:4444/trapos/files/";`} {
			if path == InstallPath && !strings.Contains(body, want) {
				t.Errorf("the installer lacks %s", want)
			}
		}
	}
}

// TestInstallerThroughAProxyWithoutPublicURLWarns: a proxy in front of a gateway without
// --public-url gets an installer that names the WebSocket by the Host it sent (nginx's default:
// the upstream's loopback address) and ws://, where computers need the proxy's name and wss://.
// The gateway serves it as ever (a proxy that passes Host without TLS works) and warns once a
// minute, naming the fix; a request no proxy marked, or a gateway with --public-url, does not.
func TestInstallerThroughAProxyWithoutPublicURLWarns(t *testing.T) {
	public, err := ParsePublicURL("https://mc.example.org")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		public  *Base
		headers map[string]string
		warns   bool
	}{
		{"X-Forwarded-For", nil, map[string]string{"X-Forwarded-For": "203.0.113.7"}, true},
		{"Forwarded", nil, map[string]string{"Forwarded": "for=203.0.113.7;proto=https"}, true},
		{"X-Real-IP", nil, map[string]string{"X-Real-IP": "203.0.113.7"}, true},
		{"direct", nil, nil, false},
		{"with --public-url", &public, map[string]string{"X-Forwarded-For": "203.0.113.7"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			mux := newMuxLogging(t, tc.public, slog.New(slog.NewTextHandler(&log, nil)))
			for range 3 {
				req := httptest.NewRequest(http.MethodGet, InstallPath, nil)
				req.Host = "127.0.0.1:4444"
				for k, v := range tc.headers {
					req.Header.Set(k, v)
				}
				rec := httptest.NewRecorder()
				mux.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
			warnings := strings.Count(log.String(), "has no --public-url")
			switch {
			case tc.warns && warnings != 1:
				t.Fatalf("want one warning for three installers (once a minute), got %d:\n%s", warnings, log.String())
			case tc.warns && !strings.Contains(log.String(), "named=ws://127.0.0.1:4444/trapos/ws"):
				t.Errorf("the warning does not name the URL the installer gave:\n%s", log.String())
			case !tc.warns && warnings != 0:
				t.Errorf("want no warning, got:\n%s", log.String())
			}
		})
	}
}

// TestPrefixKeptByTheProxyIsNamed: behind --public-url https://host/sandbox the proxy is to
// strip /sandbox; one that passes /sandbox/trapos/... on gets a 404 that says so (and a
// warning once a minute), where Go's mux said "404 page not found"; so does the install line
// copied with a slash after it. A path that cannot stand in
// a route pattern as it is gets the plain 404, and the gateway still starts.
func TestPrefixKeptByTheProxyIsNamed(t *testing.T) {
	public, err := ParsePublicURL("https://mc.example.org/sandbox")
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	mux := newMuxLogging(t, &public, slog.New(slog.NewTextHandler(&log, nil)))
	for _, path := range []string{"/sandbox" + InstallPath, "/sandbox" + InstallPath + "/", "/sandbox" + FilesPath + "apis/libsandbox.lua", "/sandbox" + WebSocketPath} {
		code, body := get(t, mux, "127.0.0.1:4444", path)
		if code != http.StatusNotFound || !strings.Contains(body, "kept --public-url's path /sandbox: make the reverse proxy strip it") {
			t.Errorf("%s: status %d, body %q", path, code, body)
		}
	}
	if n := strings.Count(log.String(), "level=WARN"); n != 1 {
		t.Errorf("want one warning for four requests (once a minute), got %d:\n%s", n, log.String())
	}
	if code, body := get(t, mux, "127.0.0.1:4444", InstallPath); code != http.StatusOK {
		t.Errorf("the root's installer: status %d, body %q", code, body)
	}

	odd, err := ParsePublicURL("https://mc.example.org/a{b}")
	if err != nil {
		t.Fatal(err)
	}
	mux = newMuxLogging(t, &odd, slog.New(slog.DiscardHandler))
	if code, body := get(t, mux, "127.0.0.1:4444", "/a%7Bb%7D"+InstallPath); code != http.StatusNotFound || strings.Contains(body, "strip") {
		t.Errorf("a path with braces: status %d, body %q", code, body)
	}
}

// TestHostInjectionRefused: a Host that is not a plain host[:port] never reaches the Lua.
func TestHostInjectionRefused(t *testing.T) {
	mux, _ := newMux(t, nil)
	for _, host := range []string{`evil";os.shutdown();--`, "a b", "host/x", "", "[::1"} {
		code, body := get(t, mux, host, InstallPath)
		if code != http.StatusBadRequest || strings.Contains(body, "SOURCE") {
			t.Errorf("Host %q: status %d, body %q", host, code, body)
		}
	}
}

func TestFilesAreThePackagesBytes(t *testing.T) {
	mux, pkg := newMux(t, nil)
	for _, p := range pkg.Files {
		want, _ := pkg.File(p)
		code, body := get(t, mux, "127.0.0.1:4444", FilesPath+p)
		if code != http.StatusOK || !bytes.Equal([]byte(body), want) {
			t.Errorf("%s: status %d, %d bytes, want %d", p, code, len(body), len(want))
		}
	}
	for _, p := range []string{"tests/libsandbox_spec.lua", "apis", "apis/"} {
		if code, _ := get(t, mux, "127.0.0.1:4444", FilesPath+p); code != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, code)
		}
	}
	// The mux cleans dot segments (a redirect) before any file is looked up.
	if code, _ := get(t, mux, "127.0.0.1:4444", FilesPath+"../../go.mod"); code == http.StatusOK {
		t.Error("../../go.mod served")
	}
}

func TestLuaStringKeepsEveryByte(t *testing.T) {
	if got := luaString("a\"b\\c\n\x00" + "1\xff"); got != `"a\034b\092c\n\0001\255"` {
		t.Fatalf("luaString = %s", got)
	}
}

func TestLuaLongStringClosesOnlyAtItsEnd(t *testing.T) {
	for _, c := range []struct{ s, want string }{
		{"x = 1\n", "[=[\nx = 1\n]=]"},
		{"\nfirst line empty", "[=[\n\nfirst line empty]=]"},
		{"t[a[1]] = ']=]'", "[==[\nt[a[1]] = ']=]']==]"},
		{"ends in ]=", "[==[\nends in ]=]==]"},
		{"a\r\nb", `"a\013\nb"`},
	} {
		if got := luaLongString(c.s); got != c.want {
			t.Errorf("luaLongString(%q) = %q, want %q", c.s, got, c.want)
		}
	}
}

func TestWithoutCommentLinesKeepsCodeAndLineNumbers(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"-- why\nlocal x = 1 -- one\n  -- more\nreturn x\n", "\nlocal x = 1 -- one\n\nreturn x\n"},
		{"local s = \"[[a]]\"\n-- c\n", "local s = \"[[a]]\"\n\n"},
		{"--[[ one line ]] x()\n-- c", "\n"},
		{"-- c\r\nx()\r\n", "\r\nx()\r\n"},
	} {
		if got := withoutCommentLines(c.src); got != c.want {
			t.Errorf("withoutCommentLines(%q) = %q, want %q", c.src, got, c.want)
		}
	}
	// A line that begins with -- inside a string or comment over several lines is text.
	for _, src := range []string{
		"local s = [[\n-- text\n]]\n",
		"local s = [==[ a\n-- text\n]==]\n",
		"--[[\n-- text\n]]\n",
		"local s = \"a\\\n-- text\"\n",
	} {
		if got := withoutCommentLines(src); got != src {
			t.Errorf("withoutCommentLines(%q) = %q, want it unchanged", src, got)
		}
	}
}

func TestComputerBases(t *testing.T) {
	ifaces := []net.Addr{
		&net.IPNet{IP: net.IPv4(127, 0, 0, 1)}, &net.IPNet{IP: net.IPv4(192, 168, 1, 20)},
		&net.IPNet{IP: net.ParseIP("fe80::1")}, &net.IPNet{IP: net.ParseIP("2001:db8::5")},
	}
	var got []string
	for _, b := range ComputerBases(&net.TCPAddr{Port: 4444}, nil, ifaces) {
		got = append(got, b.WebSocket())
	}
	if strings.Join(got, " ") != "ws://192.168.1.20:4444/trapos/ws ws://[2001:db8::5]:4444/trapos/ws" {
		t.Errorf("unspecified: %v", got)
	}
	only := ComputerBases(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4444}, nil, ifaces)
	if len(only) != 1 || only[0].InstallCommand() != "wget run http://127.0.0.1:4444/trapos/install" {
		t.Errorf("loopback: %v", only)
	}
	public, _ := ParsePublicURL("http://mc.example.org:80")
	if b := ComputerBases(&net.TCPAddr{Port: 4444}, &public, ifaces); len(b) != 1 || b[0].WebSocket() != "ws://mc.example.org:80/trapos/ws" {
		t.Errorf("public: %v", b)
	}
}

// TestTheInstallerCarriesThePackagesLayout: the installer prints by the package's own layout
// rule (a URL longer than a row), sent in SOURCE.layout, the package's file less its comment lines: it
// had a copy of its own.
func TestTheInstallerCarriesThePackagesLayout(t *testing.T) {
	h, pkg := newMux(t, nil)
	layout, ok := pkg.File(LayoutFile)
	if !ok {
		t.Fatalf("the package has no %s", LayoutFile)
	}
	code, script := get(t, h, "127.0.0.1:4444", InstallPath)
	if code != http.StatusOK || !strings.Contains(script, "  layout = "+luaLongString(withoutCommentLines(string(layout)))+";\n") {
		t.Fatalf("the installer (%d) does not carry %s:\n%s", code, LayoutFile, script)
	}
	if strings.Contains(installBody, "local function urlRows") {
		t.Fatal("install.lua has a copy of the layout rule")
	}
}

// TestTheInstallerCarriesThePackagesAdvice: what a refused password may hide (a ? for a
// character CC cannot hold, a space at an end) is said by the package's own advice, sent in
// SOURCE.advice (less its comment lines): the installer had its own copy of the rule, in other words.
func TestTheInstallerCarriesThePackagesAdvice(t *testing.T) {
	h, pkg := newMux(t, nil)
	advice, ok := pkg.File(AdviceFile)
	if !ok {
		t.Fatalf("the package has no %s", AdviceFile)
	}
	code, script := get(t, h, "127.0.0.1:4444", InstallPath)
	if code != http.StatusOK || !strings.Contains(script, "  advice = "+luaLongString(withoutCommentLines(string(advice)))+";\n") {
		t.Fatalf("the installer (%d) does not carry %s", code, AdviceFile)
	}
	for _, copied := range []string{`find("?", 1, true)`, `"tsc_"`} {
		if strings.Contains(installBody, copied) {
			t.Errorf("install.lua has a copy of the advice's rule: %s", copied)
		}
	}
}

// TestTheGuideSaysTheInstallersSize: the user guide's floppy paragraph names the installer's
// size ("about 78 KB, fits a floppy's 125 KB"), which a player weighs against a floppy holding
// other files. The installer grew past it unnoticed (81 KB); the figure must stay within
// 2 KB of the installer served for the guide's own gateway, and the installer on a floppy.
func TestTheGuideSaysTheInstallersSize(t *testing.T) {
	const floppyBytes = 125_000 // CC: Tweaked's floppy disk capacity (computercraft-server.toml)
	doc, err := os.ReadFile("../../../../docs/user-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`the installer, about (\d+) KB, fits a floppy's 125 KB`).FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/user-guide.md no longer says the installer's size in its floppy paragraph")
	}
	said, _ := strconv.Atoi(string(m[1]))
	mux, _ := newMux(t, nil)
	code, body := get(t, mux, "192.168.1.20:4444", InstallPath)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	if size := float64(len(body)) / 1000; math.Abs(size-float64(said)) > 2 {
		t.Errorf("the guide says the installer is about %d KB; it is %.1f KB: say about %.0f KB", said, size, size)
	}
	if len(body) >= floppyBytes {
		t.Errorf("the installer (%d bytes) no longer fits a floppy's %d bytes, as the guide says it does", len(body), floppyBytes)
	}
}
