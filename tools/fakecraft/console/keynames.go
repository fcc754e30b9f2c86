package console

// KeyName is CC's name (keys.getName) of a key code the Decoder sends, for a computer reached
// by name rather than by code (the sandbox's screen.input: codes differ between Minecraft
// versions, names do not); false for a code the Decoder never sends.
func KeyName(code int) (string, bool) {
	switch {
	case code >= 'A' && code <= 'Z':
		return string(rune(code - 'A' + 'a')), true
	case code >= '0' && code <= '9':
		return digitNames[code-'0'], true
	case code >= KeyF1 && code < KeyF1+12:
		return "f" + digitsOf(code-KeyF1+1), true
	}
	name, ok := keyNames[code]
	return name, ok
}

var digitNames = [10]string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}

// keyNames are the names of the other codes the Decoder sends.
var keyNames = map[int]string{
	KeySpace: "space", '\'': "apostrophe", ',': "comma", '-': "minus", '.': "period", '/': "slash",
	';': "semicolon", '=': "equals", '[': "leftBracket", '\\': "backslash", ']': "rightBracket", '`': "grave",
	KeyEnter: "enter", KeyTab: "tab", KeyBackspace: "backspace", KeyInsert: "insert", KeyDelete: "delete",
	KeyRight: "right", KeyLeft: "left", KeyDown: "down", KeyUp: "up", KeyPageUp: "pageUp", KeyPageDown: "pageDown",
	KeyHome: "home", KeyEnd: "end", KeyLeftCtrl: "leftCtrl", KeyLeftAlt: "leftAlt",
}

func digitsOf(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return "1" + string(rune('0'+n-10))
}
