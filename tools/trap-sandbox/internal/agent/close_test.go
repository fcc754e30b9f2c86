package agent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit/opencodefake"
)

// TestClosingTheGatewayAbortsItsTurnsOnOpencode: a gateway stopped (restarted) while a turn
// ran sent its abort on a context the stop had cancelled, so the abort never left and the
// turn ran on in opencode (which does not stop a turn whose client went away): the player's
// next question after the restart waited behind it (a stalled model's, until its deadline)
// and a write it still asked for was put to the player under the new question. Close now
// aborts every running turn on opencode before it returns.
func TestClosingTheGatewayAbortsItsTurnsOnOpencode(t *testing.T) {
	started, ended := make(chan struct{}), make(chan struct{})
	f := startFakeAgentWith(t, func(tu *opencodefake.Turn) {
		close(started)
		<-tu.Done() // a model that thinks until it is stopped
		close(ended)
	})
	m := f.module(t)
	from := protocol.Requester{AccountID: "local", TraposID: "5:desk"}
	_, err := m.handleAsk(t.Context(), from, payload(t, map[string]any{"prompt": "think"}))
	require.NoError(t, err)
	<-started

	m.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		require.Fail(t, "the turn still runs on opencode after the gateway closed")
	}
	assert.Positive(t, f.agent.Aborts())
}
