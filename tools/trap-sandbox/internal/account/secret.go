package account

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"fmt"
	"strconv"
	"strings"
)

// Kind is what a secret opens; its prefix is in the secret itself, so a log scrubber or a
// secret scanner can find one and a secret given in the wrong place gets a clear answer.
type Kind string

// The kinds of secret.
const (
	KindToken      Kind = "tsa" // an API token: the host side, for an account
	KindCredential Kind = "tsc" // a computer's credential: its hello, for one computer
	KindEnrollment Kind = "tsk" // an enrollment key: links computers to an account (link.go)
	KindPass       Kind = "tsp" // the gateway's own pass for a caller it makes (Passes)
)

// A secret is <kind>_<selector>_<secret>: the selector finds the record, the secret is
// checked against its stored SHA-256. Both are lower-case base32 without padding, so they
// never contain the separator.
const (
	selectorBytes = 8  // 64 bits: only has to be unique, it is not secret
	secretBytes   = 20 // 160 bits from crypto/rand (RFC 8628 and the reference want ≥128)
)

var encoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// maxSelectorBytes bounds a selector a secret may name: this package issues 13 characters
// (selectorBytes, base32). A longer one is nobody's, and is refused as a wrong secret without a
// store read: one of 600 KB (an API token anyone may send, a relayed input's tokenId) made a
// NATS key past NATS's largest message, which read as the store failing (HTTP 500, the 600 KB
// logged at ERROR).
const maxSelectorBytes = 64

// plausibleSelector reports whether selector may name a record (maxSelectorBytes).
func plausibleSelector(selector string) bool {
	return selector != "" && len(selector) <= maxSelectorBytes
}

// beyondAnyID is the ErrNotFound of an id a caller names (a token, credential or enrollment
// key to revoke, an account to list or remove) that is longer than any record's
// (maxSelectorBytes; an account's name is at most 63 bytes, CheckName), or nil for one that may
// name a record. The caller answers it without a store read: a signed-in user's revocation of
// an id of 600 KB made a NATS key past NATS's largest message, the API's 500 and the 600 KB
// logged at ERROR, as a secret's selector did before plausibleSelector.
func beyondAnyID(what, id string) error {
	if len(id) <= maxSelectorBytes {
		return nil
	}
	return notFound(what, id)
}

// ShowID is id as a message names it: quoted, or, past the longest id a record has
// (maxSelectorBytes), its length, so an answer or a log line never carries a caller's 600 KB;
// and a whole secret given for its id (POST /trapos/tokens/tsa_…_…/revoke) by its kind and id
// alone: the answer to a revocation by another account's token echoed that token whole.
func ShowID(id string) string {
	if len(id) > maxSelectorBytes {
		return fmt.Sprintf("of an id of %d bytes (ids are at most %d)", len(id), maxSelectorBytes)
	}
	if kind, selector, ok := Identify(id); ok {
		return fmt.Sprintf("%s (a whole secret, shown without its secret part: its id is %s)",
			strconv.Quote(string(kind)+"_"+selector+"_…"), strconv.Quote(selector))
	}
	return strconv.Quote(id)
}

// newSecret returns a fresh secret of kind, its selector and the SHA-256 of its secret part.
func newSecret(kind Kind) (plain, selector string, hash []byte) {
	sel, sec := make([]byte, selectorBytes), make([]byte, secretBytes)
	rand.Read(sel) // crypto/rand.Read never fails (Go 1.24+)
	rand.Read(sec)
	selector = strings.ToLower(encoding.EncodeToString(sel))
	secret := strings.ToLower(encoding.EncodeToString(sec))
	h := sha256.Sum256([]byte(secret))
	return string(kind) + "_" + selector + "_" + secret, selector, h[:]
}

// parseSecret splits a secret of kind into its selector and secret parts.
func parseSecret(kind Kind, plain string) (selector, secret string, err error) {
	rest, ok := strings.CutPrefix(plain, string(kind)+"_")
	if !ok {
		return "", "", fmt.Errorf("not a %s (it starts with %s_)", kind.describe(), kind)
	}
	selector, secret, ok = strings.Cut(rest, "_")
	if !ok || !plausibleSelector(selector) || secret == "" || strings.Contains(secret, "_") {
		return "", "", fmt.Errorf("a malformed %s (%s_<selector>_<secret>)", kind.describe(), kind)
	}
	return selector, secret, nil
}

// hashMatches compares secret with a stored SHA-256 in constant time.
func hashMatches(secret string, hash []byte) bool {
	h := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(h[:], hash) == 1
}

// IsSecret reports whether s looks like one of the secrets this package issues (for
// example, a credential where a password was expected).
func IsSecret(s string) bool {
	for _, k := range []Kind{KindToken, KindCredential, KindEnrollment, KindPass} {
		if _, _, err := parseSecret(k, s); err == nil {
			return true
		}
	}
	return false
}

// Identify returns the kind and selector of s when it has the shape of a secret this package
// issues (the selector names its record and is no secret), so that a secret given in the
// wrong place (an API token as a computer's password) gets the fix, by its id.
func Identify(s string) (kind Kind, selector string, ok bool) {
	for _, k := range []Kind{KindToken, KindCredential, KindEnrollment, KindPass} {
		if sel, _, err := parseSecret(k, s); err == nil {
			return k, sel, true
		}
	}
	return "", "", false
}

func (k Kind) describe() string {
	switch k {
	case KindToken:
		return "trap-sandbox API token"
	case KindCredential:
		return "computer credential"
	case KindEnrollment:
		return "enrollment key"
	case KindPass:
		return "gateway pass"
	}
	return string(k)
}
