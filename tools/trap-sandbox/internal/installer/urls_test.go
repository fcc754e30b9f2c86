package installer

import (
	"strings"
	"testing"
)

func TestParsePublicURL(t *testing.T) {
	for raw, want := range map[string][2]string{
		"http://mc.example.org:4444":      {"ws://mc.example.org:4444/trapos/ws", "http://mc.example.org:4444/trapos/install"},
		"https://mc.example.org/sandbox/": {"wss://mc.example.org/sandbox/trapos/ws", "https://mc.example.org/sandbox/trapos/install"},
		"http://[2001:db8::1]:80":         {"ws://[2001:db8::1]:80/trapos/ws", "http://[2001:db8::1]:80/trapos/install"},
	} {
		b, err := ParsePublicURL(raw)
		if err != nil {
			t.Errorf("%s: %v", raw, err)
			continue
		}
		if b.WebSocket() != want[0] || b.Install() != want[1] {
			t.Errorf("%s: ws %s install %s; want %v", raw, b.WebSocket(), b.Install(), want)
		}
	}
	for _, raw := range []string{"ws://host:4444", "host:4444", "http://", "http://u:p@host", "http://host/?q=1", "http://host/#f", "http://ho\"st/", "http://host:99999"} {
		if _, err := ParsePublicURL(raw); err == nil {
			t.Errorf("%q accepted", raw)
		}
	}
}

// TestParsePublicURLNamesWhatToGive: an operator's likely slips are refused saying what to give
// instead: the install line's URL or sandbox.url pasted for the base (accepted, the installer
// named https://mc.example.org/trapos/install/trapos/ws), a CRLF environment file's carriage
// return or a space after its = (which url.Parse called a path segment with a colon), no host.
func TestParsePublicURLNamesWhatToGive(t *testing.T) {
	for raw, want := range map[string]string{
		"https://mc.example.org/trapos/install":     `"https://mc.example.org/trapos/install" ends with the gateway's route /trapos/install, which the gateway appends itself: give the base URL without it, https://mc.example.org`,
		"https://mc.example.org/sandbox/trapos/ws/": `ends with the gateway's route /trapos/ws, which the gateway appends itself: give the base URL without it, https://mc.example.org/sandbox`,
		"http://mc.example.org:4444/trapos/files/":  `ends with the gateway's route /trapos/files, which the gateway appends itself: give the base URL without it, http://mc.example.org:4444`,
		" https://mc.example.org":                   "a space, tab or line break at its start or end (an environment file with CRLF line ends?): give the URL alone",
		"https://mc.example.org\r":                  "a space, tab or line break at its start or end",
		"https://":                                  `"https://" names no host: give the URL computers reach the gateway at, e.g. https://mc.example.org`,
	} {
		_, err := ParsePublicURL(raw)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want it to say %q", raw, err, want)
		}
	}
	for _, ok := range []string{"https://mc.example.org/trapos", "https://mc.example.org/my/trapos/wsx"} {
		if _, err := ParsePublicURL(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
}

// TestParsePublicURLHidesPasswords: a refused --public-url never repeats a password in it.
func TestParsePublicURLHidesPasswords(t *testing.T) {
	for _, raw := range []string{"https://u:hunter2@mc.example.org", "ftp://u:hunter2@mc.example.org", "https://u:hunter2@mc.example.org:abc", "https://u:hunter2@mc.example.org:99999"} {
		_, err := ParsePublicURL(raw)
		if err == nil {
			t.Errorf("%q accepted", raw)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: the refusal shows the password: %v", raw, err)
		}
	}
}

func TestBaseFromHost(t *testing.T) {
	for _, ok := range []string{"127.0.0.1:4444", "localhost", "mc.example.org:80", "[::1]:4444", "a-b.c"} {
		if _, err := BaseFromHost(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "host:", "host:0", "host:65536", `x";os.shutdown()--`, "h ost", "host/path", "[::1", "[zz]:1", "-host", "host.", "a\nb", "user@host", "[::1]]"} {
		if _, err := BaseFromHost(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
