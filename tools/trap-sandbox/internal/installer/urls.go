package installer

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// WebSocketPath is where computers connect (the gateway module's route).
const WebSocketPath = "/trapos/ws"

// InstallPath and FilesPath are this module's routes.
const (
	InstallPath = "/trapos/install"
	FilesPath   = "/trapos/files/"
)

// Base is the http(s) URL computers reach the gateway at: scheme, host[:port] and an
// optional path prefix (a reverse proxy's), without a trailing slash.
type Base struct {
	u url.URL
}

// ParsePublicURL checks --public-url: an absolute http or https URL with a host and no
// query, fragment or credentials. Its path is kept as a prefix. An error names the value, not
// the flag: the caller names both ways of setting it.
func ParsePublicURL(raw string) (Base, error) {
	if strings.TrimSpace(raw) != raw {
		// A line of an environment file with a space after the =, or CRLF line ends: url.Parse
		// says "first path segment in URL cannot contain colon" or "invalid control character".
		return Base{}, errors.New("a space, tab or line break at its start or end (an environment file with CRLF line ends?): give the URL alone, e.g. https://mc.example.org")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's error quotes the whole URL, password included: say only what is wrong.
		return Base{}, fmt.Errorf("not a URL (%w)", errors.Unwrap(err))
	}
	shown := u.Redacted() // the refusals below never repeat a password given in it
	if u.Scheme != "http" && u.Scheme != "https" {
		return Base{}, fmt.Errorf("%q: want an http:// or https:// URL (the gateway turns it into ws:// or wss://)", shown)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return Base{}, fmt.Errorf("%q: want scheme://host[:port][/path] without credentials, query or fragment", shown)
	}
	if u.Host == "" {
		return Base{}, fmt.Errorf("%q names no host: give the URL computers reach the gateway at, e.g. https://mc.example.org", raw)
	}
	if !validHost(u.Host) {
		return Base{}, fmt.Errorf("%q: %q is not a plain host[:port]", shown, u.Host)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	for _, route := range []string{InstallPath, WebSocketPath, strings.TrimSuffix(FilesPath, "/")} {
		if strings.HasSuffix(u.Path, route) {
			// The install line or sandbox.url pasted for the base: the gateway would append its
			// routes to it (https://mc.example.org/trapos/install/trapos/ws), which no proxy serves.
			base := *u
			base.Path = strings.TrimSuffix(u.Path, route)
			return Base{}, fmt.Errorf("%q ends with the gateway's route %s, which the gateway appends itself: give the base URL without it, %s", shown, route, base.String())
		}
	}
	u.RawPath = ""
	return Base{u: *u}, nil
}

// BaseFromHost is the base URL of a request that reached the gateway directly: http://host.
// A Host that is not a plain host[:port] is refused, so no header can put anything else into
// the installer.
func BaseFromHost(host string) (Base, error) {
	if !validHost(host) {
		return Base{}, fmt.Errorf("Host %q is not a plain host[:port]", host)
	}
	return Base{u: url.URL{Scheme: "http", Host: host}}, nil
}

// hostPattern is a DNS name or IPv4 address, or a bracketed IPv6 address, then an optional port.
var hostPattern = regexp.MustCompile(`^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::([0-9]{1,5}))?$`)

func validHost(host string) bool {
	m := hostPattern.FindStringSubmatch(host)
	if m == nil {
		return false
	}
	if m[1] != "" {
		if port, err := strconv.Atoi(m[1]); err != nil || port < 1 || port > 65535 {
			return false
		}
	}
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		return net.ParseIP(host[1:end]) != nil
	}
	return true
}

// Prefix is the base URL's path, "" or /prefix without a trailing slash: where a proxy serves
// the gateway's root.
func (b Base) Prefix() string { return b.u.Path }

// String is the base URL itself (http://host:port/prefix).
func (b Base) String() string { return b.u.String() }

// Install is the URL of the installer.
func (b Base) Install() string { return b.u.String() + InstallPath }

// Files is the URL prefix of the package's files: Files()+"apis/libsandbox.lua".
func (b Base) Files() string { return b.u.String() + FilesPath }

// WebSocket is the URL a computer's sandbox.url should hold: http becomes ws, https wss,
// the path is kept and /trapos/ws appended.
func (b Base) WebSocket() string {
	w := b.u
	w.Scheme = "ws"
	if b.u.Scheme == "https" {
		w.Scheme = "wss"
	}
	return w.String() + WebSocketPath
}

// InstallCommand is the line a player types on a computer.
func (b Base) InstallCommand() string { return "wget run " + b.Install() }
