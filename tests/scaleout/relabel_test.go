package scaleout

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"

	"tests/internal/harness"
)

// relabelProgram waits until the daemon is connected, then shows "waiting" lines until the
// host writes /relabel, and then labels the computer "new": the daemon says bye under 0: and
// hello as 0:new within its label check.
const relabelProgram = harness.WaitConnectedLua + `
print("` + markerUp + `")
local i = 0
while not fs.exists("/relabel") do
  i = i + 1
  print("waiting " .. i)
  sleep(0.5)
end
os.setComputerLabel("new")
print("e2e: relabelled")
while true do sleep(1) end
`

// TestARelabelIsHeardThroughAnyReplica: the real Lua daemon on replica B is relabelled in game
// while its screen is watched through replica A (the real binaries, a real nats-server): the
// stream on A ends as on one gateway, naming the new id in its message and in relabelledTo
// (what the web console's view follows), and A lists the computer under its new id. The
// stream on A ended "computer 0: disconnected", and a view there waited for 0: for good.
func TestARelabelIsHeardThroughAnyReplica(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	a := startReplica(t, nats, "a")
	b := startReplica(t, nats, "b")
	c := daemonComputerWith(t, map[string]string{"sandbox.url": b.WebSocketURL(), "sandbox.password": "pw",
		"sandbox.allow_screen": "view", "sandbox.allow_files": "write"}, relabelProgram)
	c.WaitFor(ctx, markerUp)
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.Equal(ct, "b", listComputers(ct, a)["0:"]) },
		waitLimit, testkit.Poll, "A to list the computer on B")

	s := openLiveScreen(ctx, t, a, "0:")
	s.frameWith(t, "waiting ")
	writeThrough(ctx, t, a, "0:", "/relabel")
	for {
		name, data := s.next(t)
		if name == "frame" {
			continue
		}
		require.Equal(t, "end", name)
		assert.JSONEq(t, `{"ok":false,"error":{"code":"not_connected","message":"computer 0: was relabelled: it is 0:new now; ask it by that id","relabelledTo":"0:new"}}`, data)
		break
	}
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.Equal(ct, "b", listComputers(ct, a)["0:new"]) },
		waitLimit, testkit.Poll, "A to list the computer under its new id")
}

// writeThrough writes an empty file at path on computer traposID through g's HTTP API.
func writeThrough(ctx context.Context, t *testing.T, g *harness.Gateway, traposID, path string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL("/trapos/computers/"+traposID+"/requests"),
		strings.NewReader(`{"type":"fs.write","payload":{"path":"`+path+`","data":""}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
