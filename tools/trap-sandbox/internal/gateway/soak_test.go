package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"trap-sandbox/internal/protocol"
)

// soakComputer connects as id again and again until ctx ends: each life says hello, answers
// gateway pings (or, one life in five, ignores them), and ends after a random 0.1-0.6 s by
// a close frame or a bare TCP close. Lives of computers sharing an id replace each other.
func soakComputer(ctx context.Context, url, id string, seed uint64) error {
	rnd := rand.New(rand.NewPCG(seed, 1))
	for ctx.Err() == nil {
		conn, resp, err := websocket.DefaultDialer.DialContext(ctx, url, nil)
		if err != nil {
			// The dialer's socket deadline is ctx's deadline and may fire before ctx notices.
			if d, ok := ctx.Deadline(); ctx.Err() != nil || (ok && !time.Now().Before(d)) {
				return nil
			}
			return fmt.Errorf("dial %s: %w", id, err)
		}
		_ = resp.Body.Close()
		answer := rnd.IntN(5) != 0
		life := time.Duration(100+rnd.IntN(500)) * time.Millisecond
		err = soakLife(ctx, conn, id, answer, life)
		if rnd.IntN(2) == 0 {
			_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""),
				time.Now().Add(100*time.Millisecond))
		}
		_ = conn.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// soakLife runs one socket until it has lived life after its hello answer, ctx ends, or the
// gateway closes it (e.g. 4009 replaced). The life starts at the hello answer, not at the dial:
// on a loaded machine a dial and hello can take longer than a whole life, and a computer that
// never gets registered would leave the requesters nothing to reach.
func soakLife(ctx context.Context, conn *websocket.Conn, id string, answer bool, life time.Duration) error {
	hello := fmt.Sprintf(`{"event":"computer_request","traposSenderId":%q,"messageId":"h","type":"hello","payload":{"traposId":%q}}`, id, id)
	if err := conn.WriteMessage(websocket.TextMessage, []byte(hello)); err != nil {
		return nil // the gateway may already be closing this socket
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Now()) })
	defer stop()
	helloAnswered := false
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) && ce.Code != CloseReplaced && ce.Code != CloseGoingAway {
				return fmt.Errorf("%s closed with unexpected code %d %q", id, ce.Code, ce.Text)
			}
			return nil // our deadline, a replacement, or shutdown
		}
		f, err := protocol.DecodeFrame(data)
		if err != nil {
			return fmt.Errorf("%s got an undecodable frame: %w", id, err)
		}
		if !helloAnswered && f.Event == protocol.EventGatewayResponse && f.Type == TypeHello {
			helloAnswered = true
			_ = conn.SetReadDeadline(time.Now().Add(life))
			if ctx.Err() != nil { // ended while the deadline was being set
				_ = conn.SetReadDeadline(time.Now())
			}
		}
		if f.Event != protocol.EventGatewayRequest || !answer {
			continue
		}
		resp := fmt.Sprintf(`{"event":"computer_response","traposSenderId":%q,"messageId":%q,"type":%q,"ok":true,"payload":{"traposId":%q}}`,
			id, f.MessageID, f.Type, id)
		if conn.WriteMessage(websocket.TextMessage, []byte(resp)) != nil {
			return nil
		}
	}
}

func TestSoakChurnLosesNoRequest(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs after the harness's cleanup
	// The soak runs at least minDuration and until minOK requests have succeeded, so a loaded
	// machine makes it longer, never empty (a hang is go test's timeout to catch).
	computers, ids, minDuration, minOK := 1000, 750, 2*time.Second, int64(20)
	if testing.Short() {
		computers, ids, minDuration, minOK = 40, 30, 500*time.Millisecond, 5
	}
	const requesters, requestTimeout = 4, time.Second
	// No hello timeout: on a loaded machine a hello may take seconds, and this is not its test.
	h := newHarness(t, Config{UpgradeRate: -1, MaxUnauthenticatedPerAddress: computers, HelloTimeout: time.Hour, Metrics: newMetrics()}, nil)

	churn, stopChurn := context.WithCancel(context.Background())
	defer stopChurn()
	var wg sync.WaitGroup
	errs := make(chan error, computers)
	for i := range computers {
		wg.Go(func() {
			if err := soakComputer(churn, h.wsURL(), fmt.Sprintf("%d:soak", i%ids), uint64(i)); err != nil {
				errs <- err
			}
		})
	}

	var calls, ok, notConnected, timedOut atomic.Int64
	start := time.Now()
	more := func() bool { return time.Since(start) < minDuration || ok.Load() < minOK }
	unexpected := make(chan error, requesters)
	var requestersWG sync.WaitGroup
	for r := range requesters {
		requestersWG.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(r), 2))
			for more() {
				// Half the calls go to a computer that was registered a moment ago (most
				// succeed), half to any id (most find it gone).
				id := fmt.Sprintf("%d:soak", rnd.IntN(ids))
				if live := h.gw.Computers(); len(live) > 0 && rnd.IntN(2) == 0 {
					id = live[rnd.IntN(len(live))].TraposID
				}
				callCtx, callCancel := context.WithTimeout(context.Background(), requestTimeout)
				resp, err := h.gw.Request(callCtx, LocalAccount, id, TypePing, nil)
				callCancel()
				calls.Add(1)
				switch {
				case err == nil && resp.OK && string(resp.Payload) == fmt.Sprintf(`{"traposId":%q}`, id):
					ok.Add(1)
				case protocol.CodeOf(err) == protocol.CodeNotConnected:
					notConnected.Add(1)
				case protocol.CodeOf(err) == protocol.CodeTimeout:
					timedOut.Add(1)
				default:
					payload, _ := json.Marshal(resp)
					unexpected <- fmt.Errorf("request to %s: response %s, error %v", id, payload, err)
					return
				}
			}
		})
	}
	requestersWG.Wait()
	stopChurn()
	wg.Wait()
	close(errs)
	close(unexpected)
	for err := range errs {
		assert.NoError(t, err)
	}
	for err := range unexpected {
		assert.NoError(t, err)
	}
	t.Logf("%d requests: %d ok, %d not_connected, %d timeout", calls.Load(), ok.Load(), notConnected.Load(), timedOut.Load())
	require.GreaterOrEqual(t, ok.Load(), minOK, "requests must succeed")
	assert.Equal(t, calls.Load(), ok.Load()+notConnected.Load()+timedOut.Load())

	// Every call has returned, so no session may still hold a pending request.
	h.gw.mu.Lock()
	defer h.gw.mu.Unlock()
	for s := range h.gw.sessions {
		assert.Zero(t, s.pending.len(), "pending requests left on %s", s.Key().TraposID)
	}
}
