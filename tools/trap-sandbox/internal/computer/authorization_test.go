package computer_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit/daemonfake"
)

// revocable is a Local whose caller stops being authorized once revoked is set (as the
// gateway's Transport asks the server's check of the caller's token).
type revocable struct {
	*daemonfake.Local
	revoked atomic.Bool
}

func (r *revocable) StillAuthorized(context.Context) error {
	if r.revoked.Load() {
		return protocol.Errorf(protocol.CodeUnauthorized, "account token revoked: ask for a new one")
	}
	return nil
}

// revokeAt is a Local that revokes its caller once request step of type typ was served.
func revokeAt(typ string, step int) *revocable {
	r := &revocable{Local: daemonfake.NewLocal(map[string]string{"/big": strings.Repeat("o", 3*computer.ChunkBytes)})}
	n := 0
	r.After = func(_ context.Context, _ int, got string) error {
		if got == typ {
			if n++; n == step {
				r.revoked.Store(true)
			}
		}
		return nil
	}
	return r
}

// TestARevokedCallerStopsBetweenRequests: a call of several requests asks the Transport
// whether its caller is still authorized before each request after its first, and stops with
// the unauthorized answer: a Read before its next chunk, an input of several requests
// before its next part.
func TestARevokedCallerStopsBetweenRequests(t *testing.T) {
	r := revokeAt(protocol.TypeFSRead, 1)
	_, err := computer.New(r).Read(t.Context(), "7:", "/big", 1<<20, 0)
	require.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(err), "%v", err)
	assert.Equal(t, "account token revoked: ask for a new one (the read of /big on 7: stopped before its end)", err.(*protocol.Error).Message)
	assert.Equal(t, []string{protocol.TypeFSRead}, r.Types(), "no chunk more")

	// The computer is named as every list shows it: a label's trailing space was written raw.
	r = revokeAt(protocol.TypeFSRead, 1)
	r.Label = "kitchen "
	_, err = computer.New(r).Read(t.Context(), "7:kitchen ", "/big", 1<<20, 0)
	require.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(err), "%v", err)
	assert.Equal(t, `account token revoked: ask for a new one (the read of /big on 7:kitchen\x20 stopped before its end)`, err.(*protocol.Error).Message)

	r = revokeAt(protocol.TypeScreenInput, 1)
	r.Exec = daemonfake.NewTerminal().Exec
	c := computer.New(r)
	ctx, release, err := c.InputTurn(t.Context(), "7:")
	require.NoError(t, err)
	defer release()
	typed := computer.SplitInput([]computer.InputEvent{{Type: computer.InputChar, Text: strings.Repeat("a", 2*computer.MaxInputEvents)}})
	_, _, err = c.SendInput(ctx, "7:", typed[0], 0)
	require.NoError(t, err)
	_, _, err = c.SendInput(ctx, "7:", typed[1], 0)
	require.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(err), "%v", err)
	assert.Equal(t, []string{protocol.TypeScreenInput}, r.Types(), "no part more")
}
