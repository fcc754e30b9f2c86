package console

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDecoderMouse(t *testing.T) {
	ev := func(name string, button, x, y int) Event { return Event{Name: name, Button: button, X: x, Y: y} }
	cases := []struct {
		name string
		in   string
		want []Event
	}{
		{"left press and release", "\x1b[<0;10;1M\x1b[<0;10;1m", []Event{ev("mouse_click", 1, 10, 1), ev("mouse_up", 1, 10, 1)}},
		{"right and middle are CC's 2 and 3", "\x1b[<2;3;4M\x1b[<1;3;4M", []Event{ev("mouse_click", 2, 3, 4), ev("mouse_click", 3, 3, 4)}},
		{"modifier bits are ignored", "\x1b[<16;5;5M", []Event{ev("mouse_click", 1, 5, 5)}},
		{"drag with the left button", "\x1b[<32;7;8M", []Event{ev("mouse_drag", 1, 7, 8)}},
		{"motion with no button says nothing", "\x1b[<35;7;8M", nil},
		{"wheel up and down", "\x1b[<64;2;3M\x1b[<65;2;3M", []Event{ev("mouse_scroll", -1, 2, 3), ev("mouse_scroll", 1, 2, 3)}},
		{"a click off the computer's screen is dropped", "\x1b[<0;52;1M\x1b[<0;1;20M\x1b[<64;60;1M", nil},
		{"a drag or release off the screen holds to its edge", "\x1b[<32;80;30M\x1b[<0;80;30m", []Event{ev("mouse_drag", 1, 51, 19), ev("mouse_up", 1, 51, 19)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var d Decoder
			assert.Equal(t, tc.want, events(d.Feed([]byte(tc.in))))
		})
	}

	// A report cut between two reads is decoded once whole.
	var d Decoder
	assert.Empty(t, d.Feed([]byte("\x1b[<0;1")))
	assert.Equal(t, []Event{ev("mouse_click", 1, 1, 2)}, events(d.Feed([]byte(";2M"))))
}
