package protocol

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The byte rule (docs/protocol.md): CC strings are bytes, and on the wire a byte string is a
// JSON string whose code points are those bytes, U+0000 to U+00FF. CC's serializeJSON writes
// each byte >= 0x7F as its own \u00XX, so a computer's bytes arrive as those code points; the
// computer maps code points <= U+00FF back to single bytes. WireOfBytes and BytesOfWire are
// the Go side's one place for it.

// WireOfBytes is the wire string standing for b: one code point per byte.
func WireOfBytes(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b) * 2)
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

// WireLen is how many bytes a wire string stands for: its code points, so "é" (U+00E9, two
// bytes of UTF-8 in Go) is one. A limit in CC bytes is checked with it, never with len().
func WireLen(s string) int { return utf8.RuneCountInString(s) }

// BytesOfWire is the bytes a wire string stands for. A code point above U+00FF stands for no
// byte and is an error naming it.
func BytesOfWire(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for i, r := range s {
		if r > 0xFF {
			return nil, fmt.Errorf("U+%04X at byte %d is not a byte (code points U+0000 to U+00FF only)", r, i)
		}
		out = append(out, byte(r))
	}
	return out, nil
}
