package hostapi

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
)

// TestTheGatewayRemembersBoundedNamedCalls: of the named inputs that ended, the gateway keeps
// namedCallsMax, the oldest forgotten first, so its memory of calls does not grow with every
// input it types; an input after a call it still remembers goes at once, and leaves nothing.
func TestTheGatewayRemembersBoundedNamedCalls(t *testing.T) {
	var o inputOrder
	for i := range namedCallsMax + 10 {
		o.begin("7:", strconv.Itoa(i))()
	}
	assert.Equal(t, namedCallsMax, len(o.calls), "the newest ended calls")
	assert.Equal(t, namedCallsMax, len(o.ended))
	_, kept := o.calls[callKey{"7:", "0"}]
	assert.False(t, kept, "the oldest forgotten")
	assert.NoError(t, o.await(t.Context(), "7:", strconv.Itoa(namedCallsMax+9)), "a call remembered as ended: no wait")
	assert.Equal(t, namedCallsMax, len(o.calls), "nothing left behind")
}

// TestTheGatewayForgetsACallAnInputWaitedOn: a call forgotten while an input still waited on it
// (it ended, and namedCallsMax calls ended after it before the input was done) is forgotten all
// the same. Before, the waiting input kept it from being deleted, then left it in the gateway's
// memory for good.
func TestTheGatewayForgetsACallAnInputWaitedOn(t *testing.T) {
	var o inputOrder
	t.Cleanup(func() { testHookAwaitingCall = nil })
	testHookAwaitingCall = func(traposID, name string) {
		o.begin(traposID, name)()
		for i := range namedCallsMax {
			o.begin(traposID, strconv.Itoa(i))()
		}
	}
	assert.NoError(t, o.await(t.Context(), "7:", "waited"))
	assert.Equal(t, namedCallsMax, len(o.calls), "the newest ended calls only")
	_, kept := o.calls[callKey{"7:", "waited"}]
	assert.False(t, kept, "the call waited on, forgotten")
}

// TestAnInputAfterACallThatNeverComesGoesOnItsOwn: a call named in after that never reaches
// the gateway (its page's browser gave it up) holds the input back no longer than the arrival
// wait, and leaves nothing in the gateway's memory; an input whose own time runs out first is
// a timeout, nothing of it typed.
func TestAnInputAfterACallThatNeverComesGoesOnItsOwn(t *testing.T) {
	o := inputOrder{arrivalWithin: time.Millisecond}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a wait without end fails, not hangs
	defer cancel()
	assert.NoError(t, o.await(ctx, "7:", "never"), "went on its own once the arrival wait passed")
	assert.Empty(t, o.calls, "nothing remembered of a call that never came")

	o.arrivalWithin = time.Hour
	ended, end := context.WithCancel(t.Context())
	end()
	err := o.await(ended, "7:", "never")
	var perr *protocol.Error
	require.ErrorAs(t, err, &perr)
	assert.Equal(t, protocol.CodeTimeout, perr.Code)
	assert.Empty(t, o.calls)
}
