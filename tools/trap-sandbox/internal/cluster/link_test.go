package cluster

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/link"
	"trap-sandbox/internal/protocol"
)

// linkBegin opens a link session on r as traposID and asks it for a code.
func (r *replica) linkBegin(t *testing.T, traposID string) protocol.Frame {
	t.Helper()
	c := r.dial(t, traposID)
	c.send(map[string]any{"event": "computer_request", "traposSenderId": traposID, "messageId": "hello-1",
		"type": gateway.TypeHello, "payload": map[string]any{"traposId": traposID, "link": true}})
	require.True(t, c.read().OK, "a link hello")
	c.send(map[string]any{"event": "computer_request", "traposSenderId": traposID, "messageId": "b",
		"type": protocol.TypeLinkBegin, "payload": map[string]any{}})
	return c.read()
}

// TestAFloodOfMadeUpLinkSessionsLeavesAComputerOnAnotherReplicaItsCode: a load balancer sends
// a player's daemon (on the shared password, connected a minute) to replica a and its
// sandbox link to replica b, where a program on the same Minecraft server has spent the
// address's codes with made-up computer ids. b finds the computer by a's claim (its address
// and the time of its hello) and gives it a code from its own budget, as a would have; it
// was refused, only the replica holding the daemon's socket counting its minute.
func TestAFloodOfMadeUpLinkSessionsLeavesAComputerOnAnotherReplicaItsCode(t *testing.T) {
	tc := newTestCluster(t)
	accounts := account.New(account.NewMemory(), tc.clock)
	tc.modules = func(gw *gateway.Gateway) {
		link.New(link.Config{Accounts: accounts, Clock: tc.clock}, slog.New(slog.DiscardHandler)).Register(gw)
	}
	a := tc.startReplicaWith("a", gateway.Config{Clock: tc.clock})
	b := tc.startReplicaWith("b", gateway.Config{Clock: tc.clock})
	a.connect(t, "7:kitchen") // the player's daemon
	b.waitComputers(t, "7:kitchen@a")
	tc.clock.Advance(time.Minute) // link's ownCodesAfter

	for id := 100; id < 100+link.DefaultCodesPerAddress; id++ {
		f := b.linkBegin(t, fmt.Sprintf("%d:", id))
		require.True(t, f.OK, "%+v", f.Error)
	}
	f := b.linkBegin(t, "200:")
	require.False(t, f.OK, "the made-up ids spent the address's codes")
	assert.Contains(t, f.Error.Message, "too many link codes from this address")

	f = b.linkBegin(t, "7:kitchen")
	assert.True(t, f.OK, "the player's sandbox link on b during the flood, its daemon on a: %+v", f.Error)
}
