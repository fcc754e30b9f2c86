package cluster

import (
	"fmt"
	"strconv"
	"strings"

	"trap-sandbox/internal/gateway"
)

// Subjects. Everything a replica answers is under its own prefix, trapos.replica.<replica>
// (one subscription, trapos.replica.<replica>.>):
//
//   - trapos.replica.<replica>.computer.<account>.<traposId>: a routed request for a computer
//     whose socket the replica holds (by its claim);
//   - trapos.replica.<replica>.reply.<id>: the answer to a routed request the replica sent;
//   - trapos.replica.<replica>.alive: answered at once while the replica is on NATS; "no
//     responders" there means it is gone;
//   - trapos.replica.<replica>.cancel: the asker of a routed request the replica answers gave
//     up (its caller cancelled); the body is the request's reply subject;
//   - trapos.replica.<replica>.relay.<module>.<account>.<traposId>: a module's message from
//     another replica about a computer (relay.go), answered as a routed request is.
//
// A request goes to the holder's own subject, so only the holder is asked, and an answer comes
// back on the asker's own subject. Every subject the replicas use for this is under trapos.>,
// which the NATS account fences (docs/scale-out.md, Security).
const (
	// subjectRoot is the first token of every subject of the replicas.
	subjectRoot = "trapos"
	// replicaPrefix starts a replica's own subjects: trapos.replica.<replica>.
	replicaPrefix = subjectRoot + ".replica."
	// Kinds of a replica's subjects: the token after trapos.replica.<replica>.
	kindComputer = "computer"
	kindReply    = "reply"
	kindAlive    = "alive"
	kindCancel   = "cancel"
	kindRelay    = "relay"
)

// escapeToken makes s one NATS subject token (and one key-value key token): ASCII letters,
// digits and '-' stay, every other byte becomes _XX (upper-case hex), and "" becomes "_". The
// mapping is one-to-one, so two computers never share a subject, and any label is allowed: a
// traposId is bytes, and '.', '*', '>' and spaces would otherwise split or widen a subject.
func escapeToken(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "_%02X", c)
	}
	return b.String()
}

// unescapeToken reverses escapeToken.
func unescapeToken(tok string) (string, error) {
	if tok == "_" {
		return "", nil
	}
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		if tok[i] != '_' {
			b.WriteByte(tok[i])
			continue
		}
		if i+2 >= len(tok) {
			return "", fmt.Errorf("token %q: escape at %d is cut short", tok, i)
		}
		c, err := strconv.ParseUint(tok[i+1:i+3], 16, 8)
		if err != nil {
			return "", fmt.Errorf("token %q: bad escape at %d", tok, i)
		}
		b.WriteByte(byte(c))
		i += 2
	}
	return b.String(), nil
}

// claimKey is a computer's key in the claims bucket: <account>.<traposId>, both escaped.
func claimKey(k gateway.Key) string {
	return escapeToken(k.AccountID) + "." + escapeToken(k.TraposID)
}

// parseClaimKey reverses claimKey.
func parseClaimKey(s string) (gateway.Key, error) {
	account, trapos, ok := strings.Cut(s, ".")
	if !ok {
		return gateway.Key{}, fmt.Errorf("claim key %q has no '.'", s)
	}
	a, err := unescapeToken(account)
	if err != nil {
		return gateway.Key{}, err
	}
	t, err := unescapeToken(trapos)
	if err != nil {
		return gateway.Key{}, err
	}
	return gateway.Key{AccountID: a, TraposID: t}, nil
}

// replicaSubjects is the prefix of every subject replica answers, dot included.
func replicaSubjects(replica string) string { return replicaPrefix + escapeToken(replica) + "." }

// computerSubject is where replica, holding k's socket, answers routed requests for it.
func computerSubject(replica string, k gateway.Key) string {
	return replicaSubjects(replica) + kindComputer + "." + claimKey(k)
}

// replySubject is where replica waits for the answer to its routed request id.
func replySubject(replica string, id uint64) string {
	return replicaSubjects(replica) + kindReply + "." + strconv.FormatUint(id, 10)
}

// cancelSubject is where replica hears that a routed request it answers was given up.
func cancelSubject(replica string) string { return replicaSubjects(replica) + kindCancel }

// aliveSubject is where replica answers while it is on NATS.
func aliveSubject(replica string) string { return replicaSubjects(replica) + kindAlive }
