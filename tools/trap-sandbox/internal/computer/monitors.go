package computer

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"trap-sandbox/internal/jsonscan"
)

// The bound on the monitors a computer's own screen.read names (docs/screen.md, Monitors). The
// client names MaxMonitorNames of MaxMonitorNameBytes at most and counts the rest
// (libsandboxscreen's MAX_MONITOR_NAMES and MAX_MONITOR_NAME, client 0.5.32 on); the gateway
// holds every client to it (boundMonitors), since an older client names every monitor and a
// hostile one sends what it likes up to the frame limit: 5000 names, a name of 100 KiB, numbers,
// a count of -7, each reached the agent, the HTTP API, the CLI and the web console's picker as it
// was, whose docs promise 64 names at most.
const (
	MaxMonitorNames     = 64
	MaxMonitorNameBytes = 64
	// MaxMonitorsLeftOut is the most monitors left out a screen says: a million, far more than
	// the monitors of any world's cable (each a block in a loaded chunk). A bigger count is no
	// count of monitors; 1e300 made the answer unreadable (no int holds it), and the web
	// console's number past 2^53 is no longer whole.
	MaxMonitorsLeftOut = 1_000_000
)

// Monitors' JSON keys in screen.read's answer.
const (
	monitorsKey        = "monitors"
	monitorsLeftOutKey = "monitorsLeftOut"
)

// boundMonitors is the one rule for screen.read's monitors and monitorsLeftOut as the computer
// sent them (JSON; absent: nil): as the client keeps them, the first MaxMonitorNames names, in
// the computer's order, that are strings of 1 to MaxMonitorNameBytes of CC's bytes (measured as
// libsandboxscreen measures them, #name: a character up to U+00FF is one byte, as on the wire
// and in host text alike), and left is the computer's count plus every entry not kept. An entry
// that is no such name (a longer or empty string, one holding a character no byte is, a number,
// null) is dropped and counted: the computer said there was one more monitor. left is clamped
// to 0 … MaxMonitorsLeftOut, a count that is no number being 0 and a fraction cut to its whole
// part. A monitors that is no list is as none sent (nil); a list whose entries are all dropped
// is empty ([]), as the answer of a computer with no monitor named.
//
// The list is walked without decoding it (jsonscan.Elements), an entry decoded only when it
// is a string that may still be kept: a hostile computer's 128 KiB frame of 60 000 entries
// ([0,0,…]) decoded whole into a slice of entries took 23 MiB and 37 ms of the gateway's for
// each read of its screen.
func boundMonitors(list, leftOut json.RawMessage) (names []string, left int) {
	left = monitorsCount(leftOut)
	if !jsonscan.Valid(list) || list[jsonscan.SkipSpace(list, 0)] != '[' {
		return nil, left
	}
	names = []string{}
	for e := range jsonscan.Elements(list) {
		if len(names) < MaxMonitorNames && e[0] == '"' && len(e) > len(`""`) && len(e) <= maxMonitorNameJSONBytes {
			var name string
			if json.Unmarshal(e, &name) == nil && isMonitorName(name) {
				names = append(names, name)
				continue
			}
		}
		left = min(left+1, MaxMonitorsLeftOut)
	}
	return names, left
}

// maxMonitorNameJSONBytes is the longest a name isMonitorName takes can be as a JSON string: each of
// its bytes escaped (\u00e9), between quotes. A longer or empty string is no name, counted
// without decoding it.
const maxMonitorNameJSONBytes = MaxMonitorNameBytes*len(`\u00e9`) + len(`""`)

// isMonitorName reports whether s (wire or host text) is a name the client names: 1 to
// MaxMonitorNameBytes of CC's bytes, each character one of them (U+0000 to U+00FF).
func isMonitorName(s string) bool {
	n := utf8.RuneCountInString(s)
	return n >= 1 && n <= MaxMonitorNameBytes && !strings.ContainsFunc(s, func(r rune) bool { return r > 0xFF })
}

// monitorsCount is the computer's monitorsLeftOut (JSON; absent: 0) as a count of monitors:
// 0 … MaxMonitorsLeftOut, anything but a number 0.
func monitorsCount(raw json.RawMessage) int {
	f, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
	if err != nil && !math.IsInf(f, 0) { // out of float64's range is ±Inf, clamped below
		return 0
	}
	return int(max(0, min(f, MaxMonitorsLeftOut)))
}

// wireScreen is screen.read's answer as the computer sent it: a Screen whose monitors and
// monitorsLeftOut are left to boundMonitors, so that entries that are not names, and a count
// no int holds, are bounded rather than make the whole answer unreadable.
type wireScreen struct {
	Screen
	Monitors        json.RawMessage `json:"monitors"`
	MonitorsLeftOut json.RawMessage `json:"monitorsLeftOut"`
}

// screen is w's Screen with its monitors bounded.
func (w wireScreen) screen() Screen {
	s := w.Screen
	s.Monitors, s.MonitorsLeftOut = boundMonitors(w.Monitors, w.MonitorsLeftOut)
	return s
}

// BoundScreenAnswer is a computer's answer to screen.read as the HTTP API's /requests relays it
// (its payload as JSON, every other field as the computer sent it) with its monitors bounded
// as the typed read bounds them (wireScreen), the same list: the keys are read as Go reads them
// (in any case, the last one of a case-folded name winning), and the answer then names them in
// one case only, monitors and monitorsLeftOut, so that a reader matching keys exactly (the web
// console) reads what the bound left and not another spelling ("Monitors") it passed over. An
// answer that names no monitors in any case (a monitor's, an old client's) comes back as it is;
// so does one that is not a JSON object, which is not a screen.
func BoundScreenAnswer(answer json.RawMessage) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(answer, &fields) != nil || fields == nil {
		return answer
	}
	named := false
	for k := range fields {
		if strings.EqualFold(k, monitorsKey) || strings.EqualFold(k, monitorsLeftOutKey) {
			named = true
			delete(fields, k)
		}
	}
	if !named {
		return answer
	}
	var sent struct {
		Monitors        json.RawMessage `json:"monitors"`
		MonitorsLeftOut json.RawMessage `json:"monitorsLeftOut"`
	}
	_ = json.Unmarshal(answer, &sent) // an object, as fields showed; the two are raw JSON
	names, left := boundMonitors(sent.Monitors, sent.MonitorsLeftOut)
	if names != nil {
		fields[monitorsKey], _ = json.Marshal(names)
	}
	if left > 0 {
		fields[monitorsLeftOutKey] = json.RawMessage(strconv.Itoa(left))
	}
	bounded, err := json.Marshal(fields)
	if err != nil {
		return answer // no map of valid JSON values fails to encode
	}
	return bounded
}
