// Package installer is the sandbox module that serves the in-game client to computers: the
// Lua installer at GET /trapos/install (run on a computer with `wget run`) and the package's
// files at GET /trapos/files/<install path>, byte for byte the repository's trapos/ files
// built into the binary (package traposclient). Both routes are public, like /trapos/ws: a
// computer has no API token.
package installer

import (
	_ "embed"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"

	"traposclient"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/logthrottle"
	"trap-sandbox/internal/server"
)

// ModuleName is the module's name in logs.
const ModuleName = "trapos-installer"

//go:embed install.lua
var installBody string

//go:embed hook.lua
var hookSource string

// Installer is the installer module.
type Installer struct {
	pkg traposclient.Package
	// public, when set, is --public-url: every installer names it instead of the request's Host.
	public *Base
	log    *slog.Logger
	// warn writes the warning about an installer fetched through a proxy without --public-url
	// once a minute: every computer installed through it would repeat it.
	warn *logthrottle.Throttle
}

// New returns the module serving pkg. public is the parsed --public-url, or nil; c times the
// warnings.
func New(pkg traposclient.Package, public *Base, logger *slog.Logger, c clock.Clock) *Installer {
	return &Installer{pkg: pkg, public: public, log: logger, warn: logthrottle.New(logger, c)}
}

// forwardedWithoutPublicURL is the warning for an installer request a proxy marked as
// forwarded while --public-url is unset.
const forwardedWithoutPublicURL = "the installer was fetched through a reverse proxy and the gateway has no --public-url: it named the WebSocket from the request's Host, which behind a proxy is the proxy's way to the gateway (nginx's default: the upstream address) or lacks the proxy's TLS (ws:// where computers need wss://); start the gateway with --public-url set to the proxy's http(s) URL (docs/reverse-proxy.md)"

// Name implements server.Module.
func (i *Installer) Name() string { return ModuleName }

// Mount implements server.Module: both routes, under /trapos/, public (outside the API auth).
func (i *Installer) Mount(routes *server.Routes) {
	routes.HandleFunc("GET "+InstallPath, i.serveInstaller)
	// The install line with a slash after it, as a URL is copied: the same installer, which
	// names its URLs from the base, not the path asked (a 404 was CC's wget's "Failed." alone).
	routes.HandleFunc("GET "+InstallPath+"/{$}", i.serveInstaller)
	routes.HandleFunc("GET "+FilesPath+"{path...}", i.serveFile)
	if i.public != nil && plainPrefix.MatchString(i.public.Prefix()) {
		for _, p := range []string{InstallPath, InstallPath + "/{$}", FilesPath + "{path...}", WebSocketPath} {
			routes.HandleFunc("GET "+i.public.Prefix()+p, i.servePrefixKept)
		}
	}
}

// plainPrefix is a --public-url path that can stand in a route pattern as it is (no {} of a
// wildcard, no escapes): the ones servePrefixKept answers for.
var plainPrefix = regexp.MustCompile(`^(?:/[A-Za-z0-9._~-]+)+$`)

// servePrefixKept answers a computer's path under --public-url's path: the gateway serves at
// its root, so the proxy was to strip that path and did not. Without this the operator's curl
// read Go's "404 page not found" and the computer's wget only "Failed.".
func (i *Installer) servePrefixKept(w http.ResponseWriter, r *http.Request) {
	prefix := i.public.Prefix()
	msg := fmt.Sprintf("the gateway serves /trapos/ at its root, and this request kept --public-url's path %s: make the reverse proxy strip it (nginx: location %s/trapos/ws { proxy_pass http://<the gateway>/trapos/ws; }, the same for /trapos/install and /trapos/files/; docs/reverse-proxy.md)", prefix, prefix)
	i.warn.Log(slog.LevelWarn, msg, msg)
	http.Error(w, msg, http.StatusNotFound)
}

// Version is the version of the package served (older clients are logged against it).
func (i *Installer) Version() string { return i.pkg.Version }

func (i *Installer) serveInstaller(w http.ResponseWriter, r *http.Request) {
	base := i.public
	if base == nil {
		b, err := BaseFromHost(r.Host)
		if err != nil {
			http.Error(w, err.Error()+"; use the gateway's address, or start it with --public-url", http.StatusBadRequest)
			return
		}
		base = &b
		if header := server.ForwardedBy(r); header != "" {
			i.warn.Log(slog.LevelWarn, forwardedWithoutPublicURL, forwardedWithoutPublicURL,
				"forwardedBy", header, "named", b.WebSocket())
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(Script(i.pkg, *base)))
}

func (i *Installer) serveFile(w http.ResponseWriter, r *http.Request) {
	p := r.PathValue("path")
	body, ok := i.pkg.File(p)
	if !ok {
		http.Error(w, fmt.Sprintf("%s %s has no file %q", i.pkg.Name, i.pkg.Version, p), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(body)
}

// LayoutFile is the package's file of the screen's layout rules (a URL longer than a row),
// which the installer loads from its SOURCE.layout: it prints before the package is on the
// computer, and by the same rule as the package's commands.
const LayoutFile = "apis/libsandboxlayout.lua"

// SettingsFile is the package's file of the settings' rules, which the installer loads from
// its SOURCE.settings to read sandbox.url as the daemon does (ws:/host, ws//host, a bare
// ws://host:port), before the package is on the computer.
const SettingsFile = "apis/libsandboxsettings.lua"

// AdviceFile is the package's file of the advice on a failed connection, which the installer
// loads from its SOURCE.advice to say what a refused password may hide (a space at an end, a ?
// for a character CC cannot hold) in the words sandbox health and status use, before the
// package is on the computer.
const AdviceFile = "apis/libsandboxadvice.lua"

// UninstallFile is the package's file of where the installer puts what is not a package file
// (its record, the startup hook) and of the uninstall, which the installer loads from its
// SOURCE.uninstall: `sandbox uninstall` runs the same file on the computer without the
// gateway, where the installer kept an 80 KB copy of itself for that before.
const UninstallFile = "apis/libsandboxuninstall.lua"

// Script is the installer for pkg as served from base: a SOURCE table, then install.lua.
func Script(pkg traposclient.Package, base Base) string {
	var b strings.Builder
	b.WriteString("-- trapos-sandbox installer from the trap-sandbox gateway at " + base.String() + "\n")
	b.WriteString("local SOURCE = {\n")
	field := func(name, value string) { b.WriteString("  " + name + " = " + luaString(value) + ";\n") }
	field("package", pkg.Name)
	field("version", pkg.Version)
	field("install", base.Install())
	field("files", base.Files())
	field("websocket", base.WebSocket())
	b.WriteString("  paths = {\n")
	for _, p := range pkg.Files {
		b.WriteString("    " + luaString(p) + ";\n")
	}
	b.WriteString("  };\n")
	source := func(name, value string) { b.WriteString("  " + name + " = " + luaLongString(value) + ";\n") }
	source("hook", hookSource) // written to the computer as it is
	// The package's rules the installer only loads go without their comments, as its own body
	// does (withoutCommentLines).
	layout, _ := pkg.File(LayoutFile)
	source("layout", withoutCommentLines(string(layout)))
	settingsRules, _ := pkg.File(SettingsFile)
	source("settings", withoutCommentLines(string(settingsRules)))
	adviceRules, _ := pkg.File(AdviceFile)
	source("advice", withoutCommentLines(string(adviceRules)))
	uninstallRules, _ := pkg.File(UninstallFile)
	source("uninstall", withoutCommentLines(string(uninstallRules)))
	b.WriteString("};\n\n")
	b.WriteString(withoutCommentLines(installBody))
	return b.String()
}

// longBracket opens a Lua long string or long comment ([[, [==[, …).
var longBracket = regexp.MustCompile(`\[(=*)\[`)

// withoutCommentLines is the Lua source src with every line that holds only a comment left
// empty: the installer is saved on a floppy disk for a friend (125 000 bytes), and the
// comments of its body and of the rules it carries were two fifths of it, so a change of a few
// hundred bytes to those rules filled the floppy. The line itself stays, so a traceback's line
// number still names the source's line. A source with a long bracket that does not close on
// its own line, or a line that ends in a backslash (a string or comment over several lines,
// in which a line that begins with -- is text), is returned as it is.
func withoutCommentLines(src string) string {
	lines := strings.SplitAfter(src, "\n")
	for _, line := range lines {
		if strings.HasSuffix(strings.TrimRight(line, "\r\n"), "\\") {
			return src
		}
		for _, open := range longBracket.FindAllStringSubmatchIndex(line, -1) {
			closing := "]" + line[open[2]:open[3]] + "]"
			if !strings.Contains(line[open[1]:], closing) {
				return src
			}
		}
	}
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), "--") {
			lines[i] = line[len(strings.TrimRight(line, "\r\n")):] // its line end alone
		}
	}
	return strings.Join(lines, "")
}

// luaLongString is s as a Lua long string literal ([=[ ... ]=]) that holds exactly s's bytes,
// for the Lua sources the installer carries: they go as they are, where luaString's escapes
// (\n, \034 for each quote) made the installer 126 698 bytes, over the 125 000 a floppy disk
// holds, so a player could not save it on one for a friend. The level is the lowest (from 1:
// Lua 5.1 refuses a [[ inside a level-0 one) whose closing bracket first appears at the end;
// the newline after the opening bracket is one Lua skips, so s may begin with its own. A
// carriage return, which Lua reads as a newline in a long string, keeps the escaped form.
func luaLongString(s string) string {
	if strings.ContainsRune(s, '\r') {
		return luaString(s)
	}
	for level := 1; ; level++ {
		eq := strings.Repeat("=", level)
		closing := "]" + eq + "]"
		if strings.Index(s+closing, closing) == len(s) {
			return "[" + eq + "[\n" + s + closing
		}
	}
}

// luaString quotes s as a Lua string literal that holds exactly s's bytes: printable ASCII
// other than the quote and the backslash is kept, every other byte is a \ddd escape.
func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n':
			b.WriteString(`\n`)
		case c >= 0x20 && c < 0x7f && c != '"' && c != '\\':
			b.WriteByte(c)
		default:
			// Three digits always, so a digit that follows is not read as part of the escape.
			fmt.Fprintf(&b, `\%03d`, c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
