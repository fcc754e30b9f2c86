package computer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
)

// NotConnected is the not_connected error of a computer that no socket holds, on this replica
// or any other: the one wording of it. What the caller can do about it is added by Hint.
// It is marked Absent, which Hint and the MCP module read (never its words: a label holds any
// of them). A name longer than any computer's is named by its length (cctext.ShownName).
func NotConnected(traposID string) *protocol.Error {
	pe := protocol.Errorf(protocol.CodeNotConnected, "computer %s is not connected", cctext.ShownName(traposID))
	pe.Absent = true
	return pe
}

// ConnectedInSeveral is the not_connected of a traposId that several accounts (owners, two or
// more) have connected, none of them the caller's (or the caller's local, which does not
// win: account.Caller.OwnWins), to a caller that reaches them all (an admin): the one wording of it, on every route that names a computer (the requests, the
// files, the screen, a revocation). The accounts are in Accounts too, so that a client tells it
// from a computer that is away (asking again does not help); no route picks an account by
// name: one of those accounts' tokens does.
func ConnectedInSeveral(traposID string, owners []string) *protocol.Error {
	pe := protocol.Errorf(protocol.CodeNotConnected, "computer %s is connected in several accounts (%s): %s",
		cctext.ShowTraposID(traposID), strings.Join(owners, ", "), severalFix(owners))
	pe.Accounts = owners
	return pe
}

// severalFix is how to reach one of the computers of a traposId that the accounts owners
// (two or more) have connected. Local's, the shared SANDBOX_PASSWORD's, has no token of its
// own, and the gateway's own caller does not pick it over another account's
// (account.Caller.OwnWins): any computer with the password may say hello under that traposId.
func severalFix(owners []string) string {
	others := slices.DeleteFunc(slices.Clone(owners), func(id string) bool { return id == account.Local })
	const local = "no token reaches local's while another account has this traposId connected, since any computer with the shared password may say hello under it: " +
		"give that computer a label of its own in game (label set NAME), or link it (sandbox link)"
	if len(others) == len(owners) {
		return "use one of those accounts' tokens to reach it"
	}
	if len(others) == 1 {
		return "use " + others[0] + "'s token to reach " + others[0] + "'s; " + local
	}
	last := len(others) - 1
	return "use " + strings.Join(others[:last], "'s, ") + "'s or " + others[last] + "'s token to reach theirs; " + local
}

// LeftBeforeAnswer is the gateway's not_connected of a request whose computer went away (or
// was replaced by a newer socket: replaced) while it waited for the answer, marked Left,
// which a transfer (goneDuring) and a read (ReadAgain) read (never its words but those at its
// end, MayHaveDoneIt).
func LeftBeforeAnswer(traposID string, replaced bool) *protocol.Error {
	what := disconnectedBeforeAnswer
	if replaced {
		// The computer's newer socket (it rebooted, or its daemon reconnected) answers the
		// next request; this one may have run on the old one all the same.
		what = " was replaced by a newer connection before it answered"
	}
	pe := protocol.Errorf(protocol.CodeNotConnected, "computer %s%s%s", cctext.ShowTraposID(traposID), what, MayHaveDoneIt)
	pe.Left = true
	return pe
}

// disconnectedBeforeAnswer is what LeftBeforeAnswer says, after "computer <id>", of a request
// whose computer disconnected.
const disconnectedBeforeAnswer = " disconnected before it answered"

// MayHaveDoneIt ends the gateway's not_connected of a request whose computer went away, or was
// replaced by a newer socket, while it waited for the answer: the request may have reached it
// and run (a Lua run, a write) before it went, and a caller that asks again repeats what it
// did. A read's request, which cannot have changed anything, is worded as a read (ReadAgain).
const MayHaveDoneIt = "; it may have done what it was asked all the same: check before you ask again"

// readChangesNothing takes MayHaveDoneIt's place in the not_connected of a read's request
// whose computer went away (ReadAgain), before how the caller's user waits for it to come back.
const readChangesNothing = "; a read changes nothing: ask again once it is back"

// readChangesNothingStopped is readChangesNothing for a read cut because the gateway, or the
// replica holding the computer, stopped (ReadAgain): "it" there would read as the gateway or
// the replica, so it names the computer, which comes back with a gateway.
const readChangesNothingStopped = "; a read changes nothing: ask again once the computer is back"

// How each surface's user waits for a computer that went away to come back, which ReadAgain
// says in parentheses after readChangesNothing: "… ask again once it is back (ping with wait
// true waits for it)".
const (
	// MCPBackWait is MCP's: ping's wait.
	MCPBackWait = "ping with wait true waits for it"
	// CLIBackWait is the CLI's, which has no wait: its list of the connected computers.
	CLIBackWait = "trap-sandbox computers lists it then"
	// APIBackWait is the host HTTP API's (its GET routes', which are reads): its list. Its
	// clients (the CLI, the stdio MCP bridge) put their own in its place (ReadAgain).
	APIBackWait = "GET /trapos/computers lists it then"
)

// backWaits are the words ReadAgain recognises in place of MayHaveDoneIt, each a read's
// already, of the surface a caller is a client of: the CLI and the stdio bridge read the host
// API's.
var backWaits = []string{APIBackWait, CLIBackWait, MCPBackWait}

// IsRead reports whether typ is a request that changes nothing on the computer (ping,
// computer.info, fs.list, fs.read, screen.read, screen.watch: a watch's stream ends with the
// socket, and the screen module words a view's as a read too): whose not_connected of a
// computer that went away before it answered a caller words as a read (ReadAgain).
func IsRead(typ string) bool {
	switch typ {
	case protocol.TypePing, protocol.TypeComputerInfo, protocol.TypeFSList, protocol.TypeFSRead, protocol.TypeScreenRead,
		protocol.TypeScreenWatch:
		return true
	}
	return false
}

// ReadAgain is the one wording of a read's request whose computer went away (or was replaced
// by a newer socket) before it answered, every surface's: the gateway's not_connected (Left)
// ends with MayHaveDoneIt, "it may have done what it was asked all the same: check before you
// ask again", which is for a request that may have changed something; a read cannot have,
// and a caller told to check first had nothing to check. It says instead that a read changes
// nothing, to ask again once the computer is back, and how (wait: the surface's words,
// MCPBackWait, CLIBackWait, APIBackWait), before any hint ("computer 7:kitchen disconnected
// before it answered; a read changes nothing: ask again once it is back (ping with wait true
// waits for it)"). A read another surface worded so already (the host API's GET routes, of
// which the CLI and the stdio MCP bridge are clients) gets wait in place of that surface's
// words. Its WaitingMessage, for a caller that asks again by itself and says it waits (the web
// console's view), is the message without the word to ask again. Any other error (the
// computer's own, a transfer's, which says how far it got, a request that may have changed
// something) is returned as it is. It reads the error's fields and the gateway's own words
// at its end, never a label's.
//
// A read cut because the gateway stopped ("the gateway is shutting down"), or the replica
// holding the computer did ("computer 7:kitchen is not connected: replica b, which held its
// socket, has stopped"), ends with MayHaveDoneIt too, not Left: it is worded so as well,
// naming the computer ("…; a read changes nothing: ask again once the computer is back (…)"),
// its WaitingMessage the gateway's words before it. So is a read cut because the gateway was
// killed mid-request (a client's transport error: hostapi.DroppedGatewayError, whose "what was
// asked may have been done all the same" is for a request that may have changed something).
func ReadAgain(err error, wait string) error {
	if dropped, ok := errors.AsType[mayHaveRunError](err); ok {
		return reworded{error: err, message: dropped.WithoutMayHaveRun() + readChangesNothingStopped + " (" + wait + ")"}
	}
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || pe.Code != protocol.CodeNotConnected || pe.ByComputer {
		return err
	}
	if !pe.Left {
		said, _ := strings.CutSuffix(pe.Message, pe.Hint)
		stopped, found := cutMayHaveRun(said)
		if !found {
			return err
		}
		out := pe.WithMessage(stopped + readChangesNothingStopped + " (" + wait + ")" + pe.Hint)
		out.WaitingMessage = stopped + pe.Hint
		return out
	}
	// Left's message ends with MayHaveDoneIt (or a read's words), then any hint (a computer
	// of the same id).
	said, _ := strings.CutSuffix(pe.Message, pe.Hint)
	gone, found := cutMayHaveRun(said)
	if !found {
		return err
	}
	out := pe.WithMessage(gone + readAgainWords(wait) + pe.Hint)
	out.WaitingMessage = gone + pe.Hint
	return out
}

// cutMayHaveRun is said, a not_connected's message without its hint, without what it says of
// the request it was: MayHaveDoneIt, or a read's words (ReadAgain) of any surface, a computer
// gone's or a gateway stopped's; found is false when it ends with neither.
func cutMayHaveRun(said string) (gone string, found bool) {
	if gone, found = strings.CutSuffix(said, MayHaveDoneIt); found {
		return gone, true
	}
	for _, wait := range backWaits {
		if gone, found = strings.CutSuffix(said, readAgainWords(wait)); found {
			return gone, true
		}
		if gone, found = strings.CutSuffix(said, readChangesNothingStopped+" ("+wait+")"); found {
			return gone, true
		}
	}
	return said, false
}

// MovesWait follows the not_connected of a computer whose socket went with a replica that
// stopped or went silent (ReplicaGone), with wait, how the caller's user waits for it
// (MCPBackWait, CLIBackWait): its daemon connects again by itself, through the load balancer
// to a replica still running, within the seconds a reboot's takes (docs/scale-out.md), where
// "not connected: replica a, which held its socket, has stopped" alone read as gone for good.
func MovesWait(wait string) string {
	return " (its daemon connects again by itself, to a replica still running, within seconds: " + wait + ")"
}

// ReplicaGoneWait is the one rule of which not_connected of a computer whose replica went
// (marked ReplicaGone, not Left) says that it connects again by itself: one the replica's end
// met before anything was sent gets MovesWait(wait) after the gateway's words, before any
// hint. One that may have run before the replica went (it ends with MayHaveDoneIt, which each
// surface follows with its own way to wait) or a read's worded so already (ReadAgain), or
// one that says it already, of any surface's words, is returned as it is, as is any other
// error. It reads the error's fields and the gateway's own words at its end, never a label's.
func ReplicaGoneWait(err error, wait string) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || pe.Code != protocol.CodeNotConnected || pe.ByComputer || pe.ReplicaGone == "" || pe.Left {
		return err
	}
	said, _ := strings.CutSuffix(pe.Message, pe.Hint)
	if _, found := cutMayHaveRun(said); found {
		return err
	}
	for _, w := range backWaits {
		if strings.HasSuffix(said, MovesWait(w)) {
			return err
		}
	}
	return pe.WithMessage(said + MovesWait(wait) + pe.Hint)
}

// readAgainWords are what ReadAgain puts in MayHaveDoneIt's place, with wait, how the
// caller's user waits for the computer to come back.
func readAgainWords(wait string) string { return readChangesNothing + " (" + wait + ")" }

// The hints Hint adds (and sets as the error's Hint, which marks it hinted).
const (
	// hintMark starts the computers the caller probably meant.
	hintMark = "; did you mean "
	// ccLabelNote follows them when one is the name typed as CC holds it: its label had
	// characters past U+00FF (台所, set with a name tag), each of which CC holds as ?, and "did
	// you mean "7:??"?" alone read as a computer of another name.
	ccLabelNote = " (the name typed has characters past U+00FF, which CC has not: a label set with them, with a name tag, " +
		"reaches the gateway with ? for each, as that computer's did)"
	// ListedHint names where every surface lists the connected computers (the web console
	// puts its own way back to the list in its place, webconsole's listedElsewhere).
	ListedHint = "; trap-sandbox computers lists the connected ones (MCP: list_computers; HTTP: GET /trapos/computers)"
	// NoIDHint is for a name with no computer id (no ':', or none before it: "küche",
	// ":küche") that no connected computer's label is: no id reaches it, connected or not, and
	// the list's hint alone left an agent whose computer was away with no word of that. It
	// ends with ListedHint, which the web console puts its own way back to the list in place of.
	NoIDHint = "; a traposId is <id>:<label> (7:kitchen; 7: for a computer without a label), and this one names no id: " +
		"sandbox status on a computer in game says its own" + ListedHint
	// noneHint is for a caller that reaches every computer when none is connected: the fix is
	// in game.
	noneHint = "; no computer is connected at all" + inGameFix
	// noneOfAccountHint is noneHint for a caller whose token reaches one account's computers
	// (%s): other accounts' may be connected, and "at all" would send it looking in the wrong
	// place.
	noneOfAccountHint = "; no computer of account %s is connected (its token reaches that account's computers only)" + inGameFix
	// inGameFix ends both.
	inGameFix = ": run sandbox status on it in game to see why"
	// sinceStartHint and sinceStartOfAccountHint are noneHint and noneOfAccountHint in a
	// gateway's first ReconnectWindow (%s: how long it has run): its computers may still be
	// reconnecting, and the player's fix alone sent the host's person in game for a computer
	// back seconds later.
	// Each is followed by askAgainFix, or for the error's WaitingMessage by waitFix.
	sinceStartHint          = "; no computer is connected, and the gateway started %s ago"
	sinceStartOfAccountHint = "; no computer of account %s is connected, and the gateway started %s ago (its token reaches that account's computers only)"
	// askAgainFix tells a caller that asks once to ask again after the reconnect; waitFix is
	// it for a caller that asks again by itself and says it waits (the web console's view),
	// which a player told to ask again reloaded.
	askAgainFix = reconnectWithin + ", so ask again then" + unlessNone
	waitFix     = reconnectWithin + unlessNone
	// reconnectWithin and unlessNone make up both.
	reconnectWithin = ": after a restart they reconnect within about 6 s (a minute at most after restarts close together)"
	unlessNone      = "; if none does, run sandbox status on it in game to see why"
	// noneLinked and allRevoked are NoneLinked's words (%s: the account), which take the place
	// of noneOfAccountHint (and sinceStartOfAccountHint) for an account that holds no computer
	// credential that is not revoked (Linker): no computer of its can connect, and "they
	// reconnect within about 6 s" kept a player who had never linked one waiting for it.
	noneLinked = "account %s has no computer linked yet" + linkFix
	// allRevoked is for an account whose credentials were all revoked: "no computer linked
	// yet" told its holder, who had had computers linked, what was not so.
	allRevoked = "account %s has no computer credential that is not revoked" + linkFix
	// linkFix ends both.
	linkFix = " (its token reaches that account's computers only): " +
		"run sandbox link on the computer in game and approve its code with trap-sandbox link approve CODE " +
		"(docs/accounts.md, Linking a computer)"
	// ofAccountHint goes before ListedHint for a caller whose token reaches one account's
	// computers (%s): an agent given a computer of another account was told only that it is
	// not connected, and told its person so. It says nothing of other accounts' computers.
	ofAccountHint = "; this token reaches account %s's computers only"
)

// NoneLinked is what every surface says of an account (accountID) that holds no computer
// credential that is not revoked (holding: none ever, or only revoked ones), to a caller whose
// token reaches that account's computers only, where none is connected: how to link one
// (not_connected's hint, an empty list of the CLI's, of MCP's list_computers over /mcp and the
// stdio bridge, and the web console's). The CLI's and the stdio bridge's empty lists said
// "run sandbox status on it", of computers never linked.
func NoneLinked(accountID string, holding account.Holding) string {
	if holding == account.HoldsRevokedOnly {
		return fmt.Sprintf(allRevoked, accountID)
	}
	return fmt.Sprintf(noneLinked, accountID)
}

// ReconnectWindow is how long after a gateway starts its computers may still be reconnecting:
// each daemon tries again 5 to 6 s after its socket closed, and one whose socket lasted under
// a minute waits twice as long each time, up to a minute (tools/trap-sandbox/README.md).
const ReconnectWindow = time.Minute

// Uptimer is a Transport that knows how long its gateway has run (the gateway in this
// process): a not_connected with no computer connected in its first ReconnectWindow says they
// may still be reconnecting (Hint).
type Uptimer interface {
	GatewayUptime() time.Duration
}

// Linker is a Transport that knows what an account holds of computer credentials (linked or
// issued; revoked or not): a not_connected of an account that holds none that is not revoked,
// with none of its computers connected, says how to link one (Hint), not to wait for a
// reconnect.
type Linker interface {
	ComputerCredentials(ctx context.Context, accountID string) (account.Holding, error)
}

// JustStarted reports whether a gateway that has run for up (0: not known) may still have
// computers reconnecting: it started less than ReconnectWindow ago.
func JustStarted(up time.Duration) bool { return up > 0 && up < ReconnectWindow }

// SinceStart is how long ago a gateway that has run for up started, as the hints say it
// ("3s").
func SinceStart(up time.Duration) string { return sinceStart(up) }

// sinceStart is how long ago a gateway that has run for up started, as the hint says it.
func sinceStart(up time.Duration) string {
	return max(up.Truncate(time.Second), time.Second).String()
}

// Hint adds to pe, a not_connected error of the gateway's for traposID, what caller can do,
// given the connected computers it reaches (listed: whether that list could be had) and how
// long the gateway has run (up; 0 when not known), and what the caller's account holds of
// computer credentials (holding: Linker).
// When some of them have the same computer id ("0" for "0:", "0:door" for "0:Door"), or for
// a name without a ':' the same label ("7:kitchen" for "kitchen"), it asks whether one of
// those was meant. A bare NotConnected of a name with no id says what a traposId is
// (NoIDHint). Otherwise the bare NotConnected, and only it (a computer that disconnected
// mid-request, or a replica that could not be asked, says what happened itself), gets where
// the connected computers are listed (and, for a caller that reaches one account's, that its
// token reaches that account's only), or that none is connected at all (of its account, for a
// caller that reaches one account's; or, for an unlinked account, how to link one). A hint that tells the caller to ask again later (the
// gateway's first ReconnectWindow) comes with the error's WaitingMessage too, and the one
// that says how to link a computer marks the error Unlinked.
func Hint(pe *protocol.Error, traposID string, connected []Computer, listed bool, caller account.Caller, up time.Duration, holding account.Holding) *protocol.Error {
	if pe.Hint != "" || pe.RelabelledTo != "" { // a relabel's names the computer's new id
		return pe
	}
	id, _, hasID := strings.Cut(traposID, ":")
	id = strings.TrimSpace(id)
	// The name as CC holds it: a label set with characters past U+00FF (a name tag's 台所)
	// says hello with ? for each (7:??), which the name typed as the player sees it is not.
	asCC, replaced := cctext.ToCC("traposId", traposID)
	labelAsCC, _ := cctext.ToCC("label", id)
	var meant []string
	ccForm := false // a computer meant is the name typed as CC holds it
	for _, cp := range connected {
		cpID, cpLabel, _ := strings.Cut(cp.TraposID, ":")
		// The same id; or, for a name without a ':', the label alone ("kitchen", or 台所 for ??).
		// Named once: several accounts may have connected it, and "did you mean "7:" or "7:"?"
		// offers no choice (asking for it names the accounts).
		shown := cctext.ShowTraposID(cp.TraposID) // as every list shows it
		if (cpID == id || !hasID && cpLabel != "" && (cpLabel == id || cpLabel == labelAsCC)) && cp.TraposID != traposID && !slices.Contains(meant, shown) {
			meant = append(meant, shown)
			ccForm = ccForm || len(replaced) > 0 && (cp.TraposID == asCC || !hasID && cpLabel == labelAsCC)
		}
	}
	hint, waitingHint, linkFirst := "", "", false
	switch {
	case len(meant) > 0:
		quoted := make([]string, len(meant))
		for i, m := range meant {
			quoted[i] = inQuotes(m)
		}
		hint = hintMark + strings.Join(quoted, " or ") + "?"
		if ccForm {
			hint += ccLabelNote
		}
	case !pe.Absent:
		return pe
	case NamesNoID(traposID) && !namesBareID(traposID):
		hint = NoIDHint
	case listed && len(connected) == 0 && reachesOneAccount(caller) && holding.Unlinked():
		hint, linkFirst = "; "+NoneLinked(caller.Account, holding), true
	case listed && len(connected) == 0 && reachesOneAccount(caller):
		hint = fmt.Sprintf(noneOfAccountHint, caller.Account)
		if JustStarted(up) {
			since := fmt.Sprintf(sinceStartOfAccountHint, caller.Account, sinceStart(up))
			hint, waitingHint = since+askAgainFix, since+waitFix
		}
	case listed && len(connected) == 0:
		hint = noneHint
		if JustStarted(up) {
			since := fmt.Sprintf(sinceStartHint, sinceStart(up))
			hint, waitingHint = since+askAgainFix, since+waitFix
		}
	case reachesOneAccount(caller):
		hint = fmt.Sprintf(ofAccountHint, caller.Account) + ListedHint
	default:
		hint = ListedHint
	}
	out := *pe // its Accounts too
	if waitingHint != "" {
		out.WaitingMessage = out.Message + waitingHint
	}
	out.Unlinked = linkFirst
	out.Message += hint
	out.Hint, out.Meant = hint, meant
	return &out
}

// reachesOneAccount is whether caller's token reaches one account's computers, every one of
// them (not an admin, not limited to one computer).
func reachesOneAccount(caller account.Caller) bool {
	return !caller.Admin && caller.Only == "" && caller.Account != ""
}

// NamesNoID is whether traposID names no computer id: no ':' ("küche", "7") or none before it
// (":küche"). No computer ever connects by such a name, so no wait brings one back by it.
func NamesNoID(traposID string) bool {
	id, _, hasID := strings.Cut(traposID, ":")
	return !hasID || strings.TrimSpace(id) == ""
}

// namesBareID is whether traposID is a computer id alone ("8"): it names no computer, as
// every traposId has its ':', but it does name an id, so NoIDHint ("this one names no id")
// would tell the caller what is not so; it gets the hint a traposId of that id gets (whose
// computers the token reaches, where they are listed).
func namesBareID(traposID string) bool {
	id := strings.TrimSpace(traposID)
	return id != "" && strings.Trim(id, "0123456789") == ""
}

// inQuotes is a traposId as shown (cctext.ShowTraposID) between double quotes, a '"' of its
// label as \x22, which names the same byte: a label's own quote ended the quotes, and what
// followed it (`7:x"? The gateway: ...`) read as the gateway's words, not the label's. The
// form still reads back as the traposId (cctext.TraposID).
func inQuotes(shown string) string {
	return `"` + strings.ReplaceAll(shown, `"`, `\x22`) + `"`
}

// QuotedID is traposID as a sentence of the gateway's names it where the label, its owner's
// words, must not read as the gateway's (MCP's data notes): shown, in quotes (inQuotes).
func QuotedID(traposID string) string { return inQuotes(cctext.ShowTraposID(traposID)) }

// QuotedPath is a path (host text, as a caller gave it) as QuotedID quotes a traposId: a
// file's name is its computer's owner's words too. Control characters are \xNN (cctext.Show)
// and a '"' is \x22, which the path rule reads back as those bytes (cctext.PathToCC).
func QuotedPath(path string) string { return inQuotes(cctext.Show(path, false)) }
