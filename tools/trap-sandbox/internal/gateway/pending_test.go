package gateway

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
)

// TestARunGivenUpOnHoldsUntilItsLateAnswer: a run whose caller stopped waiting (abandon) is
// what a later request waited behind (heldBy) until its late answer comes (take), or until
// CC has surely ended it (gaveUpHolds after it was sent); a ping given up on is not, nor is
// anything sent after the request that timed out. At most maxGaveUp are kept.
func TestARunGivenUpOnHoldsUntilItsLateAnswer(t *testing.T) {
	start := time.Unix(1000, 0)
	p := newPendingTable(100)
	_, err := p.add("ping-1", byHost, protocol.TypePing, start)
	require.NoError(t, err)
	_, err = p.add("run-1", byHost, protocol.TypeLuaExec, start.Add(time.Second))
	require.NoError(t, err)
	require.NotNil(t, p.abandon("ping-1"))
	require.NotNil(t, p.abandon("run-1"))
	assert.Equal(t, 0, p.len(), "neither is waited for")

	held, ok := p.heldBy(start.Add(3 * time.Second))
	require.True(t, ok)
	assert.Equal(t, protocol.TypeLuaExec, held.typ, "a ping given up on holds nothing")
	assert.True(t, held.abandoned)
	_, ok = p.heldBy(start.Add(time.Second))
	assert.False(t, ok, "sent after the request that timed out")
	_, ok = p.heldBy(start.Add(time.Second + gaveUpHolds))
	assert.False(t, ok, "CC has ended it by then")

	_, err = p.add("run-2", byHost, protocol.TypeShellRun, start.Add(20*time.Second))
	require.NoError(t, err)
	require.NotNil(t, p.abandon("run-2"))
	_, ok = p.heldBy(start.Add(21 * time.Second))
	require.True(t, ok)
	assert.Nil(t, p.take("run-2"), "its late answer is no one's")
	_, ok = p.heldBy(start.Add(21 * time.Second))
	assert.False(t, ok, "it answered, so it holds nothing")

	for i := range maxGaveUp + 5 {
		id := fmt.Sprintf("run-%d", 100+i)
		_, err = p.add(id, byHost, protocol.TypeLuaExec, start.Add(30*time.Second+time.Duration(i)*time.Millisecond))
		require.NoError(t, err)
		require.NotNil(t, p.abandon(id))
	}
	assert.Len(t, p.gaveUp, maxGaveUp)
	held, ok = p.heldBy(start.Add(31 * time.Second))
	require.True(t, ok)
	assert.Equal(t, start.Add(30*time.Second+5*time.Millisecond), held.sent, "the oldest went")
}
