package computer

import (
	"strconv"
	"strings"
)

// InputTypesSince names the client that first took each screen.input event type added to the
// first list (key, key_up, char, paste, click, scroll, terminate): an older one refuses the
// whole request, naming the event by its place, as one it does not know (the gateway adds
// when the type came and the fix to that refusal).
var InputTypesSince = map[string]string{InputDrag: "0.5.21", InputMouseClick: "0.5.22", InputMouseUp: "0.5.22"}

// MonitorSince is the first client that reads a monitor (screen.read's monitor field,
// docs/screen.md): an older one ignores the field and answers with the computer's own screen,
// which its caller would take for the monitor's, so the gateway refuses it such a request.
const MonitorSince = "0.5.29"

// MonitorWatchSince is the first client that watches a monitor (screen.watch's monitor field):
// one from MonitorSince refuses it bad_payload, an older one ignores it and would watch the
// computer's own screen, so the gateway refuses either such a request, naming the upgrade.
const MonitorWatchSince = "0.5.31"

// TakesInput is whether a computer whose client is clientVersion (its hello's and
// computer.info's; empty for one too old to name it) takes screen.input events of type typ.
func TakesInput(clientVersion, typ string) bool {
	since, ok := InputTypesSince[typ]
	return !ok || !OlderVersion(clientVersion, since)
}

// OlderVersion compares MAJOR.MINOR.PATCH versions; a missing or unparsable have is older.
func OlderVersion(have, want string) bool {
	h, okH := parseVersion(have)
	w, okW := parseVersion(want)
	if !okW {
		return false
	}
	if !okH {
		return true
	}
	for i := range h {
		if h[i] != w[i] {
			return h[i] < w[i]
		}
	}
	return false
}

func parseVersion(v string) ([3]int, bool) {
	var out [3]int
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}
