package cctext

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

// A name the host keeps (an API token's, an account's) is told from another by a person
// reading a listing, so two names must not look alike by their letters either, beyond what
// LooksLikeAnother escapes: é written as U+00E9 and as e and U+0301 (the same text, as
// Unicode's canonical equivalence has it: NFC composes both into U+00E9), and Latin a beside
// Cyrillic а (U+0430), which Unicode's confusables table (UTS #39, Unicode Security
// Mechanisms) maps to one prototype. The rule, as RFC 8265 (PRECIS) and UTS #39 have it for
// identifiers: a name is kept in NFC, a word of it holds letters of one script (or of the
// scripts one language writes together: Japanese, Chinese, Korean, each with Latin), and two
// names are told apart by NameKey, the confusables skeleton. account checks names by it;
// ShowName shows by it a name kept before it was the rule.

// NameKey is what two names are compared by: they look alike when their keys are equal. It
// is UTS #39's skeleton (confusables.txt of Unicode 13: a, Cyrillic а and 𝐚 are one letter, as
// are l, I and 1, and e with U+0301 is é) of the name with a run of spaces as one and none at
// its ends, which a listing does not show either. Case stays: Laptop is not laptop. A key
// is for comparing only, never to be shown or kept as the name.
func NameKey(name string) string {
	return confusables.Skeleton(strings.Join(strings.Fields(name), " "))
}

// allowedTogether are the sets of scripts a word may mix (UTS #39's "highly restrictive"
// level): each a language's writing with Latin. Common and Inherited characters (digits,
// punctuation, combining accents) belong to every script.
var allowedTogether = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// MixedScripts reports the first word of name whose letters are of scripts no language
// writes together (Latin l, a, p with Cyrillic а in lаptop; Greek ο in gοod), and those
// scripts, by Unicode's names ("Latin", "Cyrillic"), in the order the word has them; "" and
// nil when each word is of one script or of a set allowedTogether. A word is a run of letters,
// marks and digits: "ноутбук Alice" and "π-calc" are of one script a word.
func MixedScripts(name string) (word string, scripts []string) {
	start := -1
	for i, r := range name + " " {
		if unicode.In(r, unicode.L, unicode.M, unicode.N) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			if s := wordScripts(name[start:i]); !oneWriting(s) {
				return name[start:i], s
			}
			start = -1
		}
	}
	return "", nil
}

// wordScripts is the scripts of word's characters, Common and Inherited left out, in the
// order word has them.
func wordScripts(word string) []string {
	var scripts []string
	for _, r := range word {
		if s := ScriptOf(r); s != "" && !slices.Contains(scripts, s) {
			scripts = append(scripts, s)
		}
	}
	return scripts
}

// ScriptOf is r's script by Unicode's name ("Latin", "Greek"), "" for Common and Inherited (and
// unassigned): the script MixedScripts counts r in.
func ScriptOf(r rune) string {
	switch {
	case r < utf8.RuneSelf:
		if unicode.IsLetter(r) {
			return "Latin"
		}
		return ""
	case unicode.In(r, unicode.Common, unicode.Inherited):
		return ""
	}
	for name, table := range unicode.Scripts {
		if unicode.Is(table, r) {
			return name
		}
	}
	return ""
}

// oneWriting reports whether scripts, a word's, are one language's writing.
func oneWriting(scripts []string) bool {
	if len(scripts) <= 1 {
		return true
	}
	for _, set := range allowedTogether {
		if !slices.ContainsFunc(scripts, func(s string) bool { return !slices.Contains(set, s) }) {
			return true
		}
	}
	return false
}

// KeptAsARule reports whether name is as the rule keeps names: in NFC, of one script a word
// (MixedScripts). A name kept before the rule (a store of an older trap-sandbox, or written
// by hand) may not be; ShowName spells it out.
func KeptAsARule(name string) bool {
	word, _ := MixedScripts(name)
	return word == "" && norm.NFC.IsNormalString(name)
}

// ShowName is how every listing and message shows a name the host keeps (a token's, an
// account's): ShowDistinct's (a backslash before x, u or U as \x5c, so that no name reads as
// another's escape, included), and a space at either end or after another as \x20, as
// ShowTraposID shows a label's (NameKey counts none of them: "laptop " lists as laptop\x20
// beside laptop); and spelled out, every character beyond ASCII as its escape
// (\u0430, \xe9), when spell is set (a listing's twins: two names whose NameKey is one) or
// the name is not as the rule keeps names (KeptAsARule): lаptop kept before the rule lists as
// l\u0430ptop beside laptop, e and U+0301 as e\u0301 beside é. Each escape is the character's
// code point, as ShowDistinct writes them.
func ShowName(name string, spell bool) string {
	spell = spell || (utf8.ValidString(name) && !KeptAsARule(name))
	var b strings.Builder
	for i := 0; i < len(name); {
		r, n := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			writeEscape(&b, rune(name[i]))
		case escaped(r, true), spell && r >= utf8.RuneSelf:
			writeEscape(&b, r)
		case StartsEscape(name, i):
			b.WriteString(`\x5c`)
		case r == ' ' && (i == 0 || i == len(name)-1 || name[i-1] == ' '):
			b.WriteString(`\x20`)
		default:
			b.WriteString(name[i : i+n])
		}
		i += n
	}
	return b.String()
}
