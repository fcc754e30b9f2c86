package console

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEveryKeyTheDecoderSendsHasItsName: each printable ASCII character, control key,
// function key and modifier the Decoder turns into a key event has CC's name for it.
func TestEveryKeyTheDecoderSendsHasItsName(t *testing.T) {
	var d Decoder
	var input []byte
	for c := byte(0x20); c < 0x7f; c++ {
		input = append(input, c)
	}
	input = append(input, "\r\t\x7f\x1b[A\x1b[B\x1b[C\x1b[D\x1b[H\x1b[F\x1b[2~\x1b[3~\x1b[5~\x1b[6~\x1bOP\x1b[24~\x01"...)
	for _, in := range d.Feed(input) {
		for _, ev := range in.Events {
			if ev.Name == "key" || ev.Name == "key_up" {
				name, ok := KeyName(ev.Key)
				assert.True(t, ok, "key code %d has no name", ev.Key)
				assert.NotEmpty(t, name)
			}
		}
	}
	for code, want := range map[int]string{'A': "a", '7': "seven", KeyF1: "f1", KeyF1 + 11: "f12", KeyEnter: "enter",
		KeyLeftCtrl: "leftCtrl", '[': "leftBracket", KeyPageDown: "pageDown"} {
		got, ok := KeyName(code)
		assert.True(t, ok)
		assert.Equal(t, want, got, "code %d", code)
	}
	_, ok := KeyName(999)
	assert.False(t, ok)
}
