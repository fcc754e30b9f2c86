package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPrintableEscapesWhatATerminalWouldObey(t *testing.T) {
	for in, want := range map[string]string{
		"7:kitchen":              "7:kitchen",
		"3:été ☃":                "3:été ☃",
		"7:\x1b[2Jgone":          `7:\x1b[2Jgone`,
		"7:a\nFAKE LINE":         `7:a\x0aFAKE LINE`,
		"7:\u009b31mred":         `7:\u009b31mred`,
		"7:\xffbad":              `7:\xffbad`,
		"tab\there, del\x7f too": `tab\x09here, del\x7f too`,
	} {
		assert.Equal(t, want, printable(in), "%q", in)
	}
	assert.Equal(t, "{\n  \"a\": \"\\x1b\"\n}", printableLines("{\n  \"a\": \"\x1b\"\n}"))
}

func TestPrintableMessageIndentsTheLinesOfAScreen(t *testing.T) {
	assert.Equal(t, "timeout; its screen showed:\n  name?\n  \n  \\x1b[2Jrow 3",
		printableMessage("timeout; its screen showed:\nname?\n\n\x1b[2Jrow 3"))
	assert.Equal(t, "one line", printableMessage("one line"))
}
