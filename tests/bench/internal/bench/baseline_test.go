package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// uuidV4 is the text form of a random (v4) UUID, as the gateway mints its message ids.
var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// sentMessageID serves the baseline with env set, has a computer connect and a host POST a
// ping to it, and returns the message id of the gateway_request the computer got.
func sentMessageID(t *testing.T, env string) string {
	t.Setenv(BaselineUUIDIDsEnv, env)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr, err := freeAddr()
	require.NoError(t, err)
	served := make(chan error, 1)
	serveCtx, stop := context.WithCancel(ctx)
	go func() { served <- ServeBaseline(serveCtx, addr) }()
	defer func() {
		stop()
		assert.NoError(t, <-served)
	}()
	var cs []*computer
	require.Eventually(t, func() bool {
		cs, err = connectAll(ctx, "ws://"+addr+"/trapos/ws", 1, 1)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "the baseline did not start")
	defer closeAll(cs)
	answered := make(chan error, 1)
	go func() {
		answered <- postPing(ctx, &http.Client{}, "http://"+addr+"/trapos/computers/"+cs[0].id+"/requests", cs[0].id)
	}()
	_, data, err := cs[0].ws.ReadMessage()
	require.NoError(t, err)
	var f wireFrame
	require.NoError(t, json.Unmarshal(data, &f))
	require.Equal(t, "gateway_request", f.Event)
	reply := `{"event":"computer_response","traposSenderId":"` + cs[0].id + `","messageId":"` + f.MessageID + `","type":"ping","ok":true,"payload":{"traposId":"` + cs[0].id + `"}}`
	require.NoError(t, cs[0].ws.WriteMessage(websocket.TextMessage, []byte(reply)))
	require.NoError(t, <-answered)
	return f.MessageID
}

func TestTheBaselineMintsShortMessageIDsByDefault(t *testing.T) {
	id := sentMessageID(t, "")
	assert.True(t, strings.HasPrefix(id, "b"), id)
	assert.Less(t, len(id), 12, id)
}

func TestTheBaselineMintsUUIDMessageIDsWhenAsked(t *testing.T) {
	assert.Regexp(t, uuidV4, sentMessageID(t, "1"))
}

func TestReportShowsTheBenchsOwnCPU(t *testing.T) {
	r := figures()
	r.Gateway.HTTP.BenchCPU, r.Baseline.HTTP.BenchCPU = 44*time.Microsecond, 40*time.Microsecond
	var out strings.Builder
	Report(&out, Config{IdleComputers: 10000, BaselineUUIDIDs: true}, r)
	assert.Contains(t, out.String(), "| (b) the bench's own CPU per round trip (its HTTP clients and computers) | 44.0 µs | 40.0 µs | 1.10× | | |")
	assert.Contains(t, out.String(), "baseline-uuid-ids: the baseline mints random UUID message ids")
}
