package console

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func key(code int) Event   { return Event{Name: "key", Key: code} }
func keyUp(code int) Event { return Event{Name: "key_up", Key: code} }
func char(s string) Event  { return Event{Name: "char", Text: s} }

// events flattens the events of every input.
func events(ins []Input) []Event {
	var out []Event
	for _, in := range ins {
		out = append(out, in.Events...)
	}
	return out
}

func TestDecoderKeys(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []Event
	}{
		{"lower-case letter", "a", []Event{key(65), char("a"), keyUp(65)}},
		{"upper-case letter is the same key", "A", []Event{key(65), char("A"), keyUp(65)}},
		{"digit", "7", []Event{key(55), char("7"), keyUp(55)}},
		{"shifted symbol is on its key", "+", []Event{key(61), char("+"), keyUp(61)}},
		{"space", " ", []Event{key(32), char(" "), keyUp(32)}},
		{"enter", "\r", []Event{key(KeyEnter), keyUp(KeyEnter)}},
		{"tab", "\t", []Event{key(KeyTab), keyUp(KeyTab)}},
		{"backspace", "\x7f", []Event{key(KeyBackspace), keyUp(KeyBackspace)}},
		{"arrows", "\x1b[A\x1b[D", []Event{key(KeyUp), keyUp(KeyUp), key(KeyLeft), keyUp(KeyLeft)}},
		{"application-mode arrow", "\x1bOC", []Event{key(KeyRight), keyUp(KeyRight)}},
		{"modified arrow", "\x1b[1;5B", []Event{key(KeyDown), keyUp(KeyDown)}},
		{"delete, page keys", "\x1b[3~\x1b[5~\x1b[6~", []Event{
			key(KeyDelete), keyUp(KeyDelete), key(KeyPageUp), keyUp(KeyPageUp), key(KeyPageDown), keyUp(KeyPageDown)}},
		{"home and end", "\x1b[H\x1b[4~", []Event{key(KeyHome), keyUp(KeyHome), key(KeyEnd), keyUp(KeyEnd)}},
		{"F1 and F12", "\x1bOP\x1b[24~", []Event{key(290), keyUp(290), key(301), keyUp(301)}},
		{"lone Esc is a Ctrl press", "\x1b", []Event{key(KeyLeftCtrl), keyUp(KeyLeftCtrl)}},
		{"Ctrl-Space is a Ctrl press", "\x00", []Event{key(KeyLeftCtrl), keyUp(KeyLeftCtrl)}},
		{"Ctrl+letter sends Ctrl and the letter's key, no char", "\x05", []Event{
			key(KeyLeftCtrl), key(69), keyUp(69), keyUp(KeyLeftCtrl)}},
		{"Alt+letter", "\x1bx", []Event{key(KeyLeftAlt), key(88), char("x"), keyUp(88), keyUp(KeyLeftAlt)}},
		{"Latin-1 character is one byte, no key", "é", []Event{char("\xe9")}},
		{"characters CC cannot show are dropped", "€", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var d Decoder
			assert.Equal(t, tc.want, events(d.Feed([]byte(tc.in))))
		})
	}
}

func TestDecoderShortcutsNeedAHold(t *testing.T) {
	ctrlS := []Event{key(KeyLeftCtrl), key(83), keyUp(83), keyUp(KeyLeftCtrl)}
	at := func() time.Time { return time.Unix(1000, 0) } // every key in the same instant
	d := Decoder{Now: at}
	assert.Equal(t, ctrlS, events(d.Feed([]byte("\x13"))), "one press is Ctrl+S's keys")
	assert.Equal(t, []Input{{Action: Shutdown}}, d.Feed([]byte("\x13")), "a second in a row: held")
	assert.Empty(t, d.Feed([]byte("\x13\x13")), "the hold acts once")

	e := Decoder{Now: at, KeepCtrlTDown: true}
	got := e.Feed([]byte("\x14a\x14\x14\x12\x12"))
	assert.Equal(t, []Input{
		ctrlTDown, ctrlTUp,
		press(65, "a"),
		ctrlTDown,
		{Action: Terminate},
		ctrlTUp,
		withModifier(KeyLeftCtrl, press(82, "")),
		{Action: Reboot},
	}, got, "typing between presses starts a new hold")
}

// Ctrl-T's keys going down, and up.
var (
	ctrlTDown = Input{Events: []Event{key(KeyLeftCtrl), key(84)}}
	ctrlTUp   = Input{Events: []Event{keyUp(84), keyUp(KeyLeftCtrl)}}
)

// TestDecoderHeldCtrlTKeysGoUpAfterTerminate: as in CC, a program sees a held Ctrl-T's
// keys go down, its terminate, then the keys go up when the player lets go, which a
// terminal tells only by its repeats stopping (LetGo) or by other input.
func TestDecoderHeldCtrlTKeysGoUpAfterTerminate(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	d := Decoder{Now: clock.now, KeepCtrlTDown: true}
	assert.Equal(t, []Input{ctrlTDown}, d.Feed([]byte("\x14")), "a first press: the keys go down")
	at, ok := d.HeldUntil()
	assert.True(t, ok)
	assert.Equal(t, clock.t.Add(FirstRepeatWait), at, "held until a terminal's first repeat is past due")
	clock.advance(600 * time.Millisecond) // a terminal's delay before it repeats
	assert.Empty(t, d.LetGo(), "still held")
	assert.Equal(t, []Input{{Action: Terminate}}, d.Feed([]byte("\x14")), "its first repeat: held, the keys still down")
	for range 20 { // the hold goes on, repeated every 30 ms
		clock.advance(30 * time.Millisecond)
		assert.Empty(t, d.Feed([]byte("\x14")))
		assert.Empty(t, d.LetGo(), "while the repeats come the keys stay down")
	}
	at, _ = d.HeldUntil()
	assert.Equal(t, clock.t.Add(RepeatGap), at, "held until a repeat is past due")
	clock.advance(RepeatGap)
	assert.Equal(t, []Input{ctrlTUp}, d.LetGo(), "the repeats stopped: let go, after the terminate")
	assert.Empty(t, d.LetGo(), "once")
	_, ok = d.HeldUntil()
	assert.False(t, ok, "no key down")

	clock.advance(time.Second)
	got := d.Feed([]byte("\x14\x14x"))
	assert.Equal(t, []Input{ctrlTDown, {Action: Terminate}, ctrlTUp, press(88, "x")}, got,
		"a new hold, ended by a key: the keys go up before it")

	clock.advance(time.Second)
	assert.Equal(t, []Input{ctrlTDown}, d.Feed([]byte("\x14")), "a tap")
	clock.advance(FirstRepeatWait)
	assert.Equal(t, []Input{ctrlTUp}, d.LetGo(), "not repeated in time: it was let go")
	clock.advance(2 * time.Second)
	assert.Equal(t, []Input{ctrlTDown, {Action: Terminate}}, d.Feed([]byte("\x14")),
		"the late second of the pair is a press held: the keys go down again, then the terminate")
	assert.Equal(t, []Input{ctrlTUp}, d.Close(), "the input ended: let go")
	assert.Empty(t, d.Close())

	e := Decoder{Now: clock.now, KeepCtrlTDown: true}
	assert.Equal(t, []Input{ctrlTDown, ctrlTUp, withModifier(KeyLeftCtrl, press(83, ""))}, e.Feed([]byte("\x14\x13")),
		"another shortcut ends the hold")

	var plain Decoder // a reader that never lets go: the keys go up at once
	assert.Equal(t, []Input{withModifier(KeyLeftCtrl, press(84, "")), {Action: Terminate}}, plain.Feed([]byte("\x14\x14")))
	_, ok = plain.HeldUntil()
	assert.False(t, ok)
}

// TestDecoderHeldRebootAndShutdownKeysGoUpAfterTheirAction: in CC a held Ctrl-R or Ctrl-S
// reboots or turns off the computer while the player still holds the keys
// (TerminalWidget.update, after 0.5 s), and their key_up comes only as the player lets go
// (keyReleased), to the computer rebooted, or to none once it is off: the program the hold
// stops sees the keys go down, never up. With KeepPowerKeysDown the keys go up when the hold
// ends, after the action.
func TestDecoderHeldRebootAndShutdownKeysGoUpAfterTheirAction(t *testing.T) {
	for _, tc := range []struct {
		b      byte
		action Action
	}{{0x12, Reboot}, {0x13, Shutdown}} {
		t.Run(string(rune('A'+tc.b-1)), func(t *testing.T) {
			letter := int('A' + tc.b - 1)
			down := Input{Events: []Event{key(KeyLeftCtrl), key(letter)}}
			up := Input{Events: []Event{keyUp(letter), keyUp(KeyLeftCtrl)}}
			clock := &fakeClock{t: time.Unix(1000, 0)}
			d := Decoder{Now: clock.now, KeepPowerKeysDown: true}
			assert.Equal(t, []Input{down}, d.Feed([]byte{tc.b}), "a first press: the keys go down")
			clock.advance(600 * time.Millisecond) // a terminal's delay before it repeats
			assert.Empty(t, d.LetGo(), "still held")
			assert.Equal(t, []Input{{Action: tc.action}}, d.Feed([]byte{tc.b}), "its first repeat: held, no key_up before it acts")
			clock.advance(30 * time.Millisecond)
			assert.Empty(t, d.Feed([]byte{tc.b}), "a repeat")
			clock.advance(RepeatGap)
			assert.Equal(t, []Input{up}, d.LetGo(), "the repeats stopped: let go, after the action")

			clock.advance(2 * time.Second)
			assert.Equal(t, []Input{down}, d.Feed([]byte{tc.b}), "a tap")
			clock.advance(FirstRepeatWait)
			assert.Equal(t, []Input{up}, d.LetGo(), "not repeated in time: it was let go, nothing done")
		})
	}
}

// fakeClock is a Decoder's clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time           { return c.t }
func (c *fakeClock) advance(by time.Duration) { c.t = c.t.Add(by) }

// TestDecoderShortcutsActOncePerHold: a terminal's repeats of a held Ctrl-T (R, S) come
// within RepeatGap of each other and act once; after a longer pause the next two presses
// are a new hold and act again, with nothing typed between the holds.
func TestDecoderShortcutsActOncePerHold(t *testing.T) {
	for b, action := range shortcuts {
		t.Run(string(rune('A'+b-1)), func(t *testing.T) {
			ctrl := []Input{withModifier(KeyLeftCtrl, press(int('A'+b-1), ""))}
			if b == 0x14 {
				ctrl = []Input{ctrlTDown} // and the keys go up at LetGo
			}
			// letGo: the keys a hold keeps down go up as its repeats stop.
			letGo := func(d *Decoder) {
				if b == 0x14 {
					assert.Equal(t, []Input{ctrlTUp}, d.LetGo())
				}
			}
			clock := &fakeClock{t: time.Unix(1000, 0)}
			d := &Decoder{Now: clock.now, KeepCtrlTDown: true}
			assert.Equal(t, ctrl, d.Feed([]byte{b}), "a first press is the Ctrl+letter")
			clock.advance(600 * time.Millisecond) // a terminal's delay before it repeats
			assert.Equal(t, []Input{{Action: action}}, d.Feed([]byte{b}), "its first repeat: held")
			for range 20 { // the hold goes on, repeated every 30 ms
				clock.advance(30 * time.Millisecond)
				assert.Empty(t, d.Feed([]byte{b}), "a repeat of the same hold does nothing")
			}
			assert.Empty(t, d.Feed([]byte{b, b, b}), "nor does a burst of repeats")

			clock.advance(RepeatGap + time.Millisecond) // let go, then a new pair
			letGo(d)
			assert.Equal(t, ctrl, d.Feed([]byte{b}), "after a pause a press is new")
			clock.advance(time.Second)
			assert.Equal(t, []Input{{Action: action}}, d.Feed([]byte{b}), "and its second acts again")

			clock.advance(3 * time.Second) // as tmux send-keys C-t C-t, seconds later
			letGo(d)
			assert.Equal(t, append(ctrl, Input{Action: action}), d.Feed([]byte{b, b}))
		})
	}
}

func TestDecoderSequenceSplitAcrossReads(t *testing.T) {
	var d Decoder
	assert.Empty(t, d.Feed([]byte("\x1b[")))
	assert.Equal(t, []Event{key(KeyUp), keyUp(KeyUp)}, events(d.Feed([]byte("A"))))
	assert.Empty(t, d.Feed([]byte{0xc3}))
	assert.Equal(t, []Event{char("\xe9")}, events(d.Feed([]byte{0xa9})))
}

func TestDecoderPaste(t *testing.T) {
	var d Decoder
	got := events(d.Feed([]byte("\x1b[200~héllo wörld€\nsecond line\x1b[201~x")))
	assert.Equal(t, []Event{
		{Name: "paste", Text: "h\xe9llo w\xf6rld?"},
		key(88), char("x"), keyUp(88),
	}, got)
}

func TestDecoderPasteAcrossReads(t *testing.T) {
	var d Decoder
	assert.Empty(t, d.Feed([]byte("\x1b[200~abc")))
	assert.Empty(t, d.Feed([]byte("def\x1b[20")))
	assert.Equal(t, []Event{{Name: "paste", Text: "abcdef"}}, events(d.Feed([]byte("1~"))))
}

func TestDecoderPasteIsCutToCCsLimit(t *testing.T) {
	var d Decoder
	long := make([]byte, 600)
	for i := range long {
		long[i] = 'x'
	}
	got := events(d.Feed(append(append([]byte("\x1b[200~"), long...), "\x1b[201~"...)))
	assert.Len(t, got, 1)
	assert.Len(t, got[0].Text, MaxPaste)
}
