package screen

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// refusals records the viewers LimitViewers refused, as the gateway's metric and log see them.
type refusals struct{ of []string }

func (r *refusals) refused(accountID string, held int) {
	r.of = append(r.of, fmt.Sprint(accountID, ":", held))
}

// TestAnAccountHoldsItsMostViewersAndNoMore: past its most viewers at once an account's next
// one is refused busy, naming the account, how many it holds and the flag; another account,
// and the agent of one computer (a pass), keep their own counts; a viewer that leaves, and a
// watch that fails, give their places back.
func TestAnAccountHoldsItsMostViewersAndNoMore(t *testing.T) {
	m, _ := standIn(t)
	var r refusals
	m.LimitViewers(2, r.refused)
	local := account.WithCaller(t.Context(), account.LocalAdmin)
	ops := account.WithCaller(t.Context(), account.Caller{Account: "ops", Admin: true})

	v1, err := m.Watch(local, "7:", 0)
	require.NoError(t, err)
	v2, err := m.WatchMonitor(local, "7:", "top", 0)
	require.NoError(t, err)
	_, err = m.Watch(local, "7:", 0)
	assert.Equal(t, protocol.CodeBusy, protocol.CodeOf(err))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "account local already holds 2 screen waits and streams at once on this gateway")
	assert.Contains(t, err.Error(), "(--max-screen-viewers)")
	assert.Equal(t, []string{"account local:2"}, r.of, "the refusal is counted")

	v3, err := m.Watch(ops, "7:", 0)
	require.NoError(t, err, "another account has places of its own")
	agent := account.WithCaller(t.Context(), account.Caller{Account: account.Local, Only: "7:"})
	a1, err := m.Watch(agent, "7:", 0)
	require.NoError(t, err, "the agent of a computer of local's has places of its own, not the operator's")
	a2, err := m.Watch(agent, "7:", 0)
	require.NoError(t, err)
	_, err = m.Watch(agent, "7:", 0)
	assert.Equal(t, protocol.CodeBusy, protocol.CodeOf(err))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the agent of computer 7: (account local) already holds 2 screen waits and streams at once")
	assert.Equal(t, []string{"account local:2", "the agent of computer 7: (account local):2"}, r.of)
	a1.Close()
	a2.Close()

	v1.Close()
	v4, err := m.Watch(local, "7:", 0)
	require.NoError(t, err, "the viewer that left gave its place back")
	v4.Close()
	for range 3 {
		_, err = m.Watch(local, "9:", 0)
		assert.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(err), "a watch that fails")
	}
	v5, err := m.Watch(local, "7:", 0)
	require.NoError(t, err, "the failed watches gave their places back")

	for _, v := range []*Viewer{v2, v3, v5} {
		v.Close()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	assert.Empty(t, m.viewersOf, "an account holding none is forgotten")
}

// TestTheStreamPastTheAccountsMostViewersIsBusy: the host API's stream, past its account's most
// viewers, is answered 429 busy with the refusal, before any event; one closed gives its place
// to the next.
func TestTheStreamPastTheAccountsMostViewersIsBusy(t *testing.T) {
	m, d := standIn(t)
	m.LimitViewers(1, nil)
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, m).Handler())
	defer srv.Close()

	ctx, leave := context.WithCancel(t.Context())
	first := stream(t, ctx, srv.URL+"/trapos/computers/7:/screen")
	defer first.Body.Close()
	require.Equal(t, http.StatusOK, first.StatusCode)
	_, err := m.handleUpdate(t.Context(), from, frame(1, map[string]string{"1": "hi "}, true))
	require.NoError(t, err)
	name, _ := event(t, bufio.NewReader(first.Body))
	require.Equal(t, "frame", name, "the first stream is the account's viewer")

	second := stream(t, t.Context(), srv.URL+"/trapos/computers/7:/screen")
	defer second.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, second.StatusCode)
	var a server.Answer
	require.NoError(t, json.NewDecoder(second.Body).Decode(&a))
	require.NotNil(t, a.Error)
	assert.Equal(t, protocol.CodeBusy, a.Error.Code)
	assert.Contains(t, a.Error.Message, "account local already holds 1 screen waits and streams at once")

	leave()
	// The first stream's viewer leaves when its handler sees the request gone, and gives its
	// place back before it stops the watch: the unwatch tells the test it left.
	require.Eventually(t, func() bool { return slices.Contains(d.Types(), protocol.TypeScreenUnwatch) }, testWait, testTick)
	third := stream(t, t.Context(), srv.URL+"/trapos/computers/7:/screen")
	defer third.Body.Close()
	assert.Equal(t, http.StatusOK, third.StatusCode)
}
