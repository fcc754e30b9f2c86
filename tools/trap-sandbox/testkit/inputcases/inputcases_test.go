package inputcases_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"trap-sandbox/internal/computer"
	"trap-sandbox/testkit/inputcases"
)

// TestMain fails the package's tests when a goroutine they started outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestTheTableHasEveryEventType: every type screen.input takes is in the table, and a char
// text that takes more than one request, so the page's copies are held to the gateway's on
// each.
func TestTheTableHasEveryEventType(t *testing.T) {
	types := map[string]bool{}
	most := 0
	for _, c := range inputcases.Costs() {
		var e computer.InputEvent
		require.NoError(t, json.Unmarshal([]byte(c.Event), &e))
		types[e.Type] = true
		most = max(most, c.Cost)
	}
	assert.Equal(t, map[string]bool{computer.InputKey: true, computer.InputKeyUp: true, computer.InputChar: true, computer.InputPaste: true,
		computer.InputClick: true, computer.InputMouseClick: true, computer.InputDrag: true, computer.InputMouseUp: true,
		computer.InputScroll: true, computer.InputTerminate: true}, types)
	assert.Greater(t, most, 2*computer.MaxInputEvents, "a text of more than two requests")
}
