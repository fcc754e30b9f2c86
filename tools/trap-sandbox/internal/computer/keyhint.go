package computer

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CC's key names whose case a caller may miss (keys.getName's: camelCase); the letters,
// digits' words and f1-f25 are lower case already.
var ccKeyNames = []string{
	"space", "apostrophe", "comma", "minus", "period", "slash", "semicolon", "equals",
	"leftBracket", "backslash", "rightBracket", "grave", "enter", "tab", "backspace", "insert",
	"delete", "right", "left", "down", "up", "pageUp", "pageDown", "home", "end", "capsLock",
	"scrollLock", "numLock", "printScreen", "pause", "numPadDecimal", "numPadDivide",
	"numPadMultiply", "numPadSubtract", "numPadAdd", "numPadEnter", "numPadEqual", "leftShift",
	"leftCtrl", "leftAlt", "leftSuper", "rightShift", "rightCtrl", "rightAlt", "menu",
}

// keyAliases are other keyboards' names for CC's keys, lower case.
var keyAliases = map[string]string{
	"ctrl": "leftCtrl", "control": "leftCtrl", "shift": "leftShift", "alt": "leftAlt",
	"return": "enter", "del": "delete", "ins": "insert", "pgup": "pageUp", "pgdn": "pageDown",
	"arrowup": "up", "arrowdown": "down", "arrowleft": "left", "arrowright": "right",
	"bs": "backspace", " ": "space", "super": "leftSuper", "cmd": "leftSuper", "win": "leftSuper",
	"0": "zero", "1": "one", "2": "two", "3": "three", "4": "four", "5": "five", "6": "six",
	"7": "seven", "8": "eight", "9": "nine",
	// The characters a US keyboard's unshifted keys type, by the key's CC name (keys.getName).
	"/": "slash", "-": "minus", ".": "period", ",": "comma", ";": "semicolon", "=": "equals",
	"[": "leftBracket", "]": "rightBracket", "\\": "backslash", "`": "grave", "'": "apostrophe",
	"\t": "tab",
}

// KeyRefusalHint is what to say after a computer's refusal of a key name in a screen.input
// (libsandboxscreen's words for the event, after its place: `: unknown key name "ctrl" (…)…`):
// the CC name meant (`; did you mean "leftCtrl"?`), or that CC has no Escape key; "" when
// nothing fits, or words is no such refusal. Every surface that types keys by name says it
// alike: the HTTP API's …/input (placedIn) and MCP's send_keys.
func KeyRefusalHint(words string) string {
	q, ok := strings.CutPrefix(words, ": unknown key name ")
	if !ok {
		return ""
	}
	quoted, err := strconv.QuotedPrefix(q)
	if err != nil {
		return ""
	}
	name, err := strconv.Unquote(quoted)
	if err != nil {
		return ""
	}
	return keyHint(name)
}

// keyHint is what to say after the computer refused the key name: the CC name meant, or
// that CC has no Escape key; for a name that is one character, that a key types none (the
// key's event alone reaches the computer: an agent's send_keys ["ü"] or ["/"] meant to type
// it, and was told nothing or only the key's name); "" when nothing fits.
func keyHint(name string) string {
	hint := keyNameHint(name)
	if utf8.RuneCountInString(name) != 1 || strings.TrimSpace(name) == "" {
		return hint
	}
	if hint == "" {
		return fmt.Sprintf("; %s is a character, not a key's name: type it as text, %s", strconv.Quote(name), asText)
	}
	return fmt.Sprintf("%s (a key's press types no character: type %s as text, %s)", hint, strconv.Quote(name), asText)
}

// asText names how each surface that presses keys by name types a character instead.
const asText = "with MCP's send_text or the HTTP API's char event"

// keyNameHint is keyHint's CC name meant, or that CC has no Escape key; "" when nothing fits.
func keyNameHint(name string) string {
	lower := strings.ToLower(name)
	if lower == "esc" || lower == "escape" {
		return "; CC has no Escape key (Minecraft keeps it): edit's and paint's menu is leftCtrl"
	}
	meant := keyAliases[lower]
	for _, n := range ccKeyNames {
		if strings.ToLower(n) == lower {
			meant = n
		}
	}
	if len(lower) == 1 && lower[0] >= 'a' && lower[0] <= 'z' { // A
		meant = lower
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(lower, "f")); err == nil && lower[0] == 'f' && n >= 1 && n <= 25 { // F5
		meant = lower
	}
	if meant == "" || meant == name {
		return ""
	}
	return "; did you mean " + strconv.Quote(meant) + "?"
}
