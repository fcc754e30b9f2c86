package cluster

import (
	"fmt"
	"strconv"
	"strings"

	"trap-sandbox/internal/gateway"
)

// subjectPrefix starts every computer's request subject: trapos.computer.<account>.<traposId>.
const subjectPrefix = "trapos.computer."

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

// computerSubject is where the replica holding k's socket answers routed requests.
func computerSubject(k gateway.Key) string { return subjectPrefix + claimKey(k) }
