package computer_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit/daemonfake"
)

// answering is a computer that answers screen.read with a one-cell screen plus the JSON fields
// extra (`"monitors":…`), as it sends them.
func answering(extra string) *computer.Client {
	d := daemonfake.NewLocal(nil)
	d.Exec = func(string, map[string]any) (any, *daemonfake.Error) {
		return json.RawMessage(`{"width":1,"height":1,"rows":[{"text":"a","fg":"0","bg":"f"}]` + extra + `}`), nil
	}
	return computer.New(d)
}

// monitorNames is n names as a cable names its monitors, monitor_0 on.
func monitorNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "monitor_" + strconv.Itoa(i)
	}
	return names
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestTheGatewayBoundsTheMonitorsAComputerNames: the client (0.5.32 on) names 64 monitors at
// most in its screen.read, each of 64 bytes at most, and counts the rest in monitorsLeftOut; the
// gateway holds every computer to it, an older client's (every name) and a hostile one's alike:
// 5000 names, a name of 100 KiB, entries that are no name, a count of -7 or 1e300. Each reached
// the agent, the HTTP API, the CLI and the web console's picker as the computer sent it (a name
// that is no bytes, or a count no int holds, failed the whole read). The typed read (ReadScreen:
// MCP, the CLI) and the raw one (Request: the HTTP API's /requests, the web console) say the
// same. A name is measured in CC's bytes, as the client's #name: 64 é are 64 bytes.
func TestTheGatewayBoundsTheMonitorsAComputerNames(t *testing.T) {
	many := monitorNames(5000)
	for _, c := range []struct {
		name, extra string
		names       []string // nil: no monitors field
		left        int
	}{
		{"an honest computer's", `,"monitors":["top","monitor_0"]`, []string{"top", "monitor_0"}, 0},
		{"a client's that counts the rest", `,"monitors":["top"],"monitorsLeftOut":6`, []string{"top"}, 6},
		{"an older client's on a cable of 5000", `,"monitors":` + jsonOf(t, many), many[:64], 4936},
		{"5000 and a count on top", `,"monitors":` + jsonOf(t, many) + `,"monitorsLeftOut":10`, many[:64], 4946},
		{"a name of 100 KiB", `,"monitors":["` + strings.Repeat("x", 100<<10) + `","top"]`, []string{"top"}, 1},
		{"entries that are no name", `,"monitors":[1,"top",null,{"a":1},["left"],"",true,"left"]`, []string{"top", "left"}, 6},
		{"names measured in CC's bytes", `,"monitors":["` + strings.Repeat("é", 64) + `","` + strings.Repeat("é", 65) + `"]`, []string{strings.Repeat("é", 64)}, 1},
		{"a name that is no bytes", `,"monitors":["top—left","top"]`, []string{"top"}, 1},
		{"a negative count", `,"monitors":["top"],"monitorsLeftOut":-7`, []string{"top"}, 0},
		{"a count no int holds", `,"monitors":[],"monitorsLeftOut":1e300`, []string{}, computer.MaxMonitorsLeftOut},
		{"a count past 2^53", `,"monitors":[],"monitorsLeftOut":9007199254740993`, []string{}, computer.MaxMonitorsLeftOut},
		{"a count that saturates", `,"monitors":` + jsonOf(t, many) + `,"monitorsLeftOut":999999`, many[:64], computer.MaxMonitorsLeftOut},
		{"a fraction", `,"monitors":["top"],"monitorsLeftOut":2.5`, []string{"top"}, 2},
		{"a count that is no number", `,"monitors":["top"],"monitorsLeftOut":"5"`, []string{"top"}, 0},
		{"monitors that is no list", `,"monitors":"top","monitorsLeftOut":3`, nil, 3},
		{"no monitors (an older client)", ``, nil, 0},
		{"the list in another case", `,"Monitors":` + jsonOf(t, many), many[:64], 4936},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := answering(c.extra)
			s, err := client.ReadScreen(t.Context(), "7:", 0)
			require.NoError(t, err)
			assert.Equal(t, c.names, s.Monitors, "ReadScreen's monitors")
			assert.Equal(t, c.left, s.MonitorsLeftOut, "ReadScreen's monitorsLeftOut")

			raw, _, err := client.Request(t.Context(), "7:", protocol.TypeScreenRead, json.RawMessage(`{}`), 0)
			require.NoError(t, err)
			var fields map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(raw, &fields))
			var names []string
			if list, ok := fields["monitors"]; ok {
				require.NoError(t, json.Unmarshal(list, &names), "monitors is a list of names")
			}
			left := 0
			if n, ok := fields["monitorsLeftOut"]; ok {
				require.NoError(t, json.Unmarshal(n, &left), "monitorsLeftOut is a whole number")
				assert.Positive(t, left, "a count of none is left out")
			}
			assert.Equal(t, c.names, names, "Request's monitors")
			assert.Equal(t, c.left, left, "Request's monitorsLeftOut")
			for k := range fields {
				if strings.EqualFold(k, "monitors") || strings.EqualFold(k, "monitorsLeftOut") {
					assert.Contains(t, []string{"monitors", "monitorsLeftOut"}, k, "no reader that folds case reads another list")
				}
			}
			assert.JSONEq(t, `{"text":"a","fg":"0","bg":"f"}`, string(fields["rows"][1:len(fields["rows"])-1]), "the rest of the answer is the computer's")
		})
	}
}

// TestOtherAnswersAreNotBounded: the bound is screen.read's; another type's answer (a program's
// own type, served with sandbox serve) passes as the computer sent it.
func TestOtherAnswersAreNotBounded(t *testing.T) {
	client := answering(`,"monitors":` + jsonOf(t, monitorNames(100)))
	raw, _, err := client.Request(t.Context(), "7:", "inventory", json.RawMessage(`{}`), 0)
	require.NoError(t, err)
	var fields struct {
		Monitors []string `json:"monitors"`
	}
	require.NoError(t, json.Unmarshal(raw, &fields))
	assert.Len(t, fields.Monitors, 100, "another type's answer is its program's own")
}

// TestAHostileMonitorsListCostsNoAllocationPerEntry: a computer's frame (128 KiB) of 30 000
// entries that are no names ([0,0,…], ["","",…], [[0],[0],…]) is walked, not decoded into a slice: decoded,
// each entry was an allocation and each read of its screen took 23 MiB and 37 ms of the
// gateway's, for the raw read (the web console's picker asking again and again) and the typed
// one alike. The count is still every entry.
func TestAHostileMonitorsListCostsNoAllocationPerEntry(t *testing.T) {
	const entries = 30_000
	for _, entry := range []string{`0`, `""`, `[0]`} {
		answer := json.RawMessage(`{"monitors":[` + strings.Repeat(entry+",", entries-1) + entry + `]}`)
		require.Less(t, len(answer), protocol.MaxFrameBytes)
		assert.JSONEq(t, `{"monitors":[],"monitorsLeftOut":30000}`, string(computer.BoundScreenAnswer(answer)), entry)
		allocs := testing.AllocsPerRun(3, func() { computer.BoundScreenAnswer(answer) })
		assert.Less(t, allocs, float64(entries/100), "%s: allocations for each entry", entry)

		screen, err := answering(`,"monitors":[`+strings.Repeat(entry+",", entries-1)+entry+`]`).ReadScreen(t.Context(), "7:", 0)
		require.NoError(t, err)
		assert.Empty(t, screen.Monitors)
		assert.Equal(t, entries, screen.MonitorsLeftOut)
	}
}
