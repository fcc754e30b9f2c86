package mcp

import (
	"errors"
	"strings"

	"trap-sandbox/internal/computer"
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

// awayHint adds awayWait, before its hint, to a not_connected of the gateway's for a computer
// no socket holds (Absent) that computer.Hint hinted with where the connected ones are listed
// or that none is. One whose hint names the computers probably meant (Meant) or says that
// the name has no id (computer.NoIDHint: no wait brings a computer back by it), one of an
// account that has no computer linked (Unlinked: none of its computers can be rebooting, and
// the hint says how to link one), a computer that went during the call (Left), a relabel's,
// and one reworded since it was hinted (ping's wait, which has waited: its message no longer
// ends with its Hint) are left as they are.
// It reads the error's fields, never its words: a label may hold any of them.
//
// A call whose computer went away during it (Left) and may have done it, "check before you ask
// again", is told how to wait for it to come back (a read's says so already: readAgain): an
// agent whose run_lua "os.reboot()" answered so had no word of how to check.
func awayHint(err error) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || pe.Code != protocol.CodeNotConnected || pe.ByComputer {
		return err
	}
	said, hinted := strings.CutSuffix(pe.Message, pe.Hint)
	switch {
	case pe.Left && strings.HasSuffix(said, computer.MayHaveDoneIt):
		return pe.WithMessage(said + backWait + pe.Hint)
	case pe.ReplicaGone != "" && !pe.Left:
		return replicaGoneWait(pe, said)
	case !pe.Absent || len(pe.Meant) > 0 || pe.Hint == "" || !hinted || pe.Hint == computer.NoIDHint || pe.Unlinked:
		return err // a name with no id (NoIDHint) does not reach the computer when it is back
	}
	return pe.WithMessage(said + awayWait + pe.Hint)
}

// replicaGoneWait is awayHint's for pe, a not_connected marked ReplicaGone (said: its message
// without its hint): one that may have run before the replica went (it ends with
// MayHaveDoneIt) gets backWait after it, as a computer that left does; one worded already
// (a read's, computer.ReadAgain's, or a wait's, leftWhileWatched's, which marks it Left) is
// left as it is; any other, a call the replica's end met before anything was sent, says that
// the computer connects again by itself and that ping's wait waits for it (the rule's one home,
// computer.ReplicaGoneWait, with MCP's words, computer.MCPBackWait).
func replicaGoneWait(pe *protocol.Error, said string) error {
	switch {
	case strings.HasSuffix(said, computer.MayHaveDoneIt):
		return pe.WithMessage(said + backWait + pe.Hint)
	case strings.HasSuffix(said, backWait):
		return pe
	}
	return computer.ReplicaGoneWait(pe, computer.MCPBackWait)
}

// backWait follows computer.MayHaveDoneIt in a tool's not_connected of a computer that went
// away during the call.
const backWait = "; ping with wait true waits for it to come back"

// transferBack adds backWait to read_file's and write_file's not_connected of a computer that
// went away during the transfer, which says how far it got and to do it "again once it is
// back" (computer.Read and Write: the request under way went, Left, or the computer was gone
// by the next one, Absent with no hint), with no word of how an agent hears that it is back:
// it asked again at once and was answered not_connected. Any other error (a relabel's, one of
// a computer no socket held from the start, which awayHint words) is returned as it is. It
// reads the error's fields, never its words, but that a Left one ends with MayHaveDoneIt
// (awayHint's, which adds backWait itself) or not.
func transferBack(err error) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || pe.Code != protocol.CodeNotConnected || pe.ByComputer || pe.RelabelledTo != "" || len(pe.Accounts) > 0 || len(pe.Meant) > 0 {
		return err
	}
	switch {
	case pe.Left && !strings.HasSuffix(strings.TrimSuffix(pe.Message, pe.Hint), computer.MayHaveDoneIt),
		!pe.Left && pe.Absent && pe.Hint == "":
		return pe.WithMessage(pe.Message + backWait)
	}
	return err
}
