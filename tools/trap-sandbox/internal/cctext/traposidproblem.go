package cctext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"trap-sandbox/internal/protocol"
)

// MaxTraposIDBytes caps a hello's traposId, in the computer's bytes (protocol.WireLen: its
// label's byte E9 is one, as the computer counts it, though "é" is two in Go). A label set by
// os.setComputerLabel has at most 32 characters, but a name tag sets any label, so the cap is
// generous; it keeps listings, logs and every frame that carries the id small.
const MaxTraposIDBytes = 256

// NoComputerHas reports whether id is longer than any computer's traposId can be (hello refuses
// one over MaxTraposIDBytes): a host's name for a computer that no socket holds, whatever it
// says. Such a name is never echoed (ShownName) nor sent.
func NoComputerHas(id string) bool {
	return len(id) > MaxTraposIDBytes && protocol.WireLen(id) > MaxTraposIDBytes
}

// ShownName is how the gateway's messages name a computer a host asked for: as the lists show
// it (ShowTraposID), but a name no computer has (NoComputerHas) by its length, which says why it
// is not there (echoed, a 600 KB name came back whole in the answer to it).
func ShownName(id string) string {
	if NoComputerHas(id) {
		return fmt.Sprintf("of a traposId of %d bytes (a computer's is at most %d)", len(id), MaxTraposIDBytes)
	}
	return ShowTraposID(id)
}

// maxProblemBytes bounds the traposId quoted in TraposIDProblem's words (as the gateway's log
// lines clip a peer's values).
const maxProblemBytes = 200

// TraposIDProblem says what is wrong with a hello's traposId ("" when nothing): it must be
// "<computer id>:<label>" (digits without a leading zero, a colon, any label), at most MaxTraposIDBytes, and free of
// control characters, bidirectional controls and line separators, which would forge lines in
// logs and terminals, and of other invisible formatting characters, which would make it list
// as another computer's. The gateway checks it at hello only (later frames are trusted, as
// the protocol says); a host that reads a new label (computer.Info.Relabelled) checks the id
// the computer will say hello with.
func TraposIDProblem(id string) string {
	if n := protocol.WireLen(id); n > MaxTraposIDBytes {
		return fmt.Sprintf("is %d bytes; the limit is %d (shorten the computer's label)", n, MaxTraposIDBytes)
	}
	digits := 0
	for digits < len(id) && id[digits] >= '0' && id[digits] <= '9' {
		digits++
	}
	if digits == 0 || digits >= len(id) || id[digits] != ':' {
		return fmt.Sprintf("%s must start with the computer id and a colon, like \"7:label\"", strconv.Quote(Clip(id, maxProblemBytes)))
	}
	// Nor an id written with a leading zero: a computer's id is os.getComputerID's number, so
	// 07 is no computer's, and 07:kitchen sorts beside 7:kitchen (CompareTraposIDs reads ids as
	// numbers) and reads as that computer listed twice.
	if digits > 1 && id[0] == '0' {
		plain := strings.TrimLeft(id[:digits-1], "0") + id[digits-1:]
		return fmt.Sprintf("%s writes its computer id with a leading zero, as no computer's id is written: it would list beside %s as that computer; "+
			"say hello with the id as os.getComputerID gives it", strconv.Quote(Clip(id, maxProblemBytes)), strconv.Quote(Clip(plain, maxProblemBytes)))
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return "contains a control character; remove it from the computer's label"
		}
		// No CC label holds these (its labels are bytes), and a terminal that shows one
		// reorders or breaks the line around it: 7:kit\u202echen would read as another id.
		if BreaksLine(r) {
			return fmt.Sprintf("contains %U, a bidirectional control or line separator; remove it from the computer's label", r)
		}
		// Nor these: invisible, they make another id list as this one (7:kitchen\u200b beside
		// 7:kitchen) in the CLI, the web console and logs. A label's own bytes (U+00AD, the
		// soft hyphen, is byte AD, a glyph on CC's screen) are not judged by it.
		if r > 0xff && unicode.Is(unicode.Cf, r) {
			return fmt.Sprintf("contains %U, an invisible formatting character; remove it from the computer's label", r)
		}
	}
	// Nor is a label's text written decomposed (u and U+0308 for ü): it would list as the
	// composed id, another computer's, and the host, which reads a typed id composed, would
	// reach that one by its name, never this.
	if c := Composed(id); c != id {
		return fmt.Sprintf("%s is not written composed (Unicode NFC): it would list as %s; say hello with the composed traposId",
			strconv.QuoteToASCII(Clip(id, maxProblemBytes)), strconv.QuoteToASCII(Clip(c, maxProblemBytes)))
	}
	return ""
}
