package cctext

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A traposId's label is a player's choice, and a player on the same Minecraft server may name
// a computer to pass for another's in the host's lists: 7:kitchen followed by a no-break space
// (U+00A0) or a soft hyphen (U+00AD), which CC labels may hold (a name tag sets any byte) and
// which print as nothing or as a space, or by an ordinary space at the label's end. So every
// surface that lists or names a computer (the CLI, the web console, MCP's list_computers)
// shows its traposId by ShowTraposID, the one rule, and a host takes that form back as the
// traposId itself (TraposID): what a list shows can be typed.

// ShowTraposID is a traposId (its wire string: one code point per CC byte) as the host's lists
// show it: two traposIds that differ never look alike. Escaped, in the \xNN form of a byte
// (\uXXXX above U+00FF):
//   - control characters (C0, DEL, C1) and bytes that are not UTF-8;
//   - U+00A0 (no-break space) and U+00AD (soft hyphen), which print as a space or as nothing;
//   - a space that starts or ends the label, or follows another space (a list shows one);
//   - every code point above U+00FF: no CC label holds one (its labels are bytes), so only a
//     client other than CC's sends it, and 7:kitchen with a Cyrillic с would read as 7:kitchen;
//   - a backslash that would start an escape (\x, \u, \U), so that the form reads back as one
//     traposId.
//
// Everything else (letters, é, CC's drawing characters' neighbours above U+00A0) passes.
func ShowTraposID(id string) string {
	_, label, _ := strings.Cut(id, ":")
	labelStart := len(id) - len(label)
	if !idNeedsEscape(id, labelStart) {
		return id
	}
	var b strings.Builder
	for i := 0; i < len(id); {
		r, n := utf8.DecodeRuneInString(id[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, id[i])
		case idEscaped(id, i, r, labelStart):
			writeEscape(&b, r)
		default:
			b.WriteString(id[i : i+n])
		}
		i += n
	}
	return b.String()
}

func idNeedsEscape(id string, labelStart int) bool {
	for i := 0; i < len(id); {
		r, n := utf8.DecodeRuneInString(id[i:])
		if (r == utf8.RuneError && n == 1) || idEscaped(id, i, r, labelStart) {
			return true
		}
		i += n
	}
	return false
}

// idEscaped reports whether ShowTraposID escapes r, at byte i of id whose label starts at
// labelStart.
func idEscaped(id string, i int, r rune, labelStart int) bool {
	switch {
	case isControl(r), LooksLikeAnother(r), r > 0xff:
		return true
	case r == ' ':
		return i == labelStart || i == len(id)-1 || (i > labelStart && id[i-1] == ' ')
	case r == '\\':
		return StartsEscape(id, i)
	}
	return false
}

func writeEscape(b *strings.Builder, r rune) {
	switch {
	case r <= 0xff:
		fmt.Fprintf(b, `\x%02x`, r)
	case r <= 0xffff:
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		fmt.Fprintf(b, `\U%08x`, r)
	}
}

// idEscape reads an escape ShowTraposID writes at the start of s (\xNN, \uXXXX, \UXXXXXXXX):
// the code point and the escape's length.
func idEscape(s string) (rune, int, bool) {
	if b, ok := hexEscape(s); ok {
		return rune(b), 4, true
	}
	if len(s) < 2 || s[0] != '\\' {
		return 0, 0, false
	}
	digits := map[byte]int{'u': 4, 'U': 8}[s[1]]
	if digits == 0 || len(s) < 2+digits {
		return 0, 0, false
	}
	v, err := strconv.ParseUint(s[2:2+digits], 16, 32)
	if err != nil || v > utf8.MaxRune {
		return 0, 0, false
	}
	return rune(v), 2 + digits, true
}

// unescapeID reads ShowTraposID's escapes in id back as the code points they name.
func unescapeID(id string) string {
	if !strings.Contains(id, `\`) {
		return id
	}
	var b strings.Builder
	for i := 0; i < len(id); {
		if r, n, ok := idEscape(id[i:]); ok {
			b.WriteRune(r)
			i += n
			continue
		}
		b.WriteByte(id[i])
		i++
	}
	return b.String()
}

// CompareTraposIDs orders two traposIds as a person reads a list of computers: by the
// computer's id as a number (7:kitchen before 10:shed, which text order puts first), then by
// the whole traposId. An id that is not a number (only an altered client sends one) comes
// after every numbered one, in text order.
func CompareTraposIDs(a, b string) int {
	idA, _, _ := strings.Cut(a, ":")
	idB, _, _ := strings.Cut(b, ":")
	numA, numB := isDigits(idA), isDigits(idB)
	switch {
	case numA && numB:
		// Digits compared without parsing, so no id is too long for it: the shorter is the
		// smaller once leading zeros are gone (CC writes none; an altered client may).
		idA, idB = strings.TrimLeft(idA, "0"), strings.TrimLeft(idB, "0")
		if c := cmp.Or(cmp.Compare(len(idA), len(idB)), strings.Compare(idA, idB)); c != 0 {
			return c
		}
	case numA:
		return -1
	case numB:
		return 1
	}
	return strings.Compare(a, b)
}

// isDigits is whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
