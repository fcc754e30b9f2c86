package mcp

import (
	"errors"
	"strings"

	"trap-sandbox/internal/protocol"
)

// awayWait follows "computer <id> is not connected" in a tool's not_connected: a computer
// that reboots (an agent's own run_lua "os.reboot()") is away for the seconds its boot takes,
// and the hint after it sent the agent to list_computers, where it is not either, or, with no
// other computer connected, to have its player run sandbox status in game: the agent told its
// person the computer was gone while it was booting. ping's wait is the one way an agent
// has to wait for it.
const awayWait = " (if it is rebooting, it is back within seconds: ping with wait true waits for it)"

// waitedAlready is what ping with wait adds to the not_connected of a computer that did not
// come within its wait (pingOnceConnected): it waited, and says how to wait longer.
const waitedAlready = "; it did not connect within "

// awayHint adds awayWait to a not_connected of the gateway's for a computer it does not hold
// (computer.Hint's bare form, with where the connected ones are listed or that none is); one
// that names the computer probably meant ("did you mean"), a relabel's, a computer that went
// during the call (its own words) and ping's wait are left as they are.
func awayHint(err error) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || pe.Code != protocol.CodeNotConnected || pe.ByComputer || pe.RelabelledTo != "" || strings.Contains(pe.Message, waitedAlready) {
		return err
	}
	computer, hint, found := strings.Cut(pe.Message, " is not connected")
	if !found || !strings.HasPrefix(computer, "computer ") || strings.Contains(hint, "did you mean") {
		return err
	}
	return pe.WithMessage(computer + " is not connected" + awayWait + hint)
}
