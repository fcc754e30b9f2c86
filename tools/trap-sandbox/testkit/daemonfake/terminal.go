package daemonfake

import (
	"fmt"
	"strings"
	"sync"

	"trap-sandbox/internal/protocol"
)

// Terminal is a stand-in of the daemon's screen types (screen.read, screen.input) on a tiny
// shell: a "> " prompt, typed characters echoed, Enter running the line ("ls" lists "rom
// startup.lua", anything else answers "No such program"). Set Daemon.Exec to its Exec.
type Terminal struct {
	mu     sync.Mutex
	rows   []string
	fg, bg []string
	x, y   int
	line   string
	events []map[string]any
	queued []int // the os events each screen.input queued
	// Busy makes the next Busy reads each find the screen changed, as a program still
	// drawing would (a counter in the last row).
	Busy  int
	drawn int
}

// Terminal size, as a computer's.
const (
	TermWidth  = 51
	TermHeight = 19
)

// NewTerminal returns a Terminal showing its prompt.
func NewTerminal() *Terminal {
	t := &Terminal{x: 1, y: 1}
	for range TermHeight {
		t.rows = append(t.rows, strings.Repeat(" ", TermWidth))
		t.fg = append(t.fg, strings.Repeat("0", TermWidth))
		t.bg = append(t.bg, strings.Repeat("f", TermWidth))
	}
	t.write("> ", '4')
	return t
}

// Events are the input events received, in order, as sent.
func (t *Terminal) Events() []map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]map[string]any(nil), t.events...)
}

// Requests is how many os events each screen.input queued, in order.
func (t *Terminal) Requests() []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]int(nil), t.queued...)
}

// maxInputEvents is the daemon's MAX_INPUT_EVENTS: the most os events one screen.input queues.
const maxInputEvents = 128

// Exec answers screen.read and screen.input (nil for any other type), for Daemon.Exec.
func (t *Terminal) Exec(typ string, p map[string]any) (any, *Error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch typ {
	case protocol.TypeScreenRead:
		if t.Busy > 0 {
			t.Busy--
			t.drawn++
			t.put(TermHeight, fmt.Sprintf("frame %d", t.drawn), '0')
		}
		return t.screen(), nil
	case protocol.TypeScreenInput:
		evs, _ := p["events"].([]any)
		queued := 0
		for _, e := range evs {
			ev := e.(map[string]any)
			switch ev["type"] {
			case "char":
				b, _ := protocol.BytesOfWire(ev["text"].(string))
				queued += len(b) + strings.Count(string(b), "\n") // a line break is key enter and key_up enter
			case "click":
				queued += 2
			case "key", "key_up", "paste", "mouse_click", "drag", "mouse_up", "scroll", "terminate":
				queued++
			default:
				return nil, &Error{Code: string(protocol.CodeBadPayload), Message: fmt.Sprintf("events: %v is not an input event type", ev["type"])}
			}
		}
		if queued > maxInputEvents {
			return nil, &Error{Code: string(protocol.CodeBadPayload), Message: fmt.Sprintf("screen.input queues %d events at most per request; send the rest in another; nothing was queued", maxInputEvents)}
		}
		t.queued = append(t.queued, queued)
		for _, e := range evs {
			t.input(e.(map[string]any))
		}
		return map[string]any{"queued": len(evs)}, nil
	}
	return nil, nil
}

func (t *Terminal) screen() map[string]any {
	rows := make([]map[string]any, TermHeight)
	for i := range rows {
		rows[i] = map[string]any{"text": protocol.WireOfBytes([]byte(t.rows[i])), "fg": t.fg[i], "bg": t.bg[i]}
	}
	palette := make([]string, 16)
	for i := range palette {
		palette[i] = fmt.Sprintf("#%02x%02x%02x", i*16, i*16, i*16)
	}
	return map[string]any{"width": TermWidth, "height": TermHeight, "colour": true,
		"cursor": map[string]any{"x": t.x, "y": t.y, "blink": true}, "fg": 1, "bg": 32768, "rows": rows, "palette": palette}
}

func (t *Terminal) input(ev map[string]any) {
	t.events = append(t.events, ev)
	switch ev["type"] {
	case "char":
		b, _ := protocol.BytesOfWire(ev["text"].(string))
		for _, c := range b {
			if c == '\n' {
				t.enter()
			} else {
				t.line += string([]byte{c})
				t.write(string([]byte{c}), '0')
			}
		}
	case "key":
		if ev["name"] == "enter" {
			t.enter()
		}
	}
}

func (t *Terminal) enter() {
	t.newline()
	switch t.line {
	case "":
	case "ls":
		t.write("rom  startup.lua", '0')
		t.newline()
	default:
		t.write("No such program", 'e')
		t.newline()
	}
	t.line = ""
	t.write("> ", '4')
}

func (t *Terminal) newline() {
	t.x = 1
	if t.y < TermHeight-1 { // the last row is the Busy counter's
		t.y++
		return
	}
	copy(t.rows[:TermHeight-2], t.rows[1:TermHeight-1])
	copy(t.fg[:TermHeight-2], t.fg[1:TermHeight-1])
	t.rows[TermHeight-2], t.fg[TermHeight-2] = strings.Repeat(" ", TermWidth), strings.Repeat("0", TermWidth)
}

// write draws s at the cursor in colour fg and moves the cursor.
func (t *Terminal) write(s string, fg byte) {
	t.put(t.y, s, fg)
	t.x += len(s)
}

func (t *Terminal) put(y int, s string, fg byte) {
	x := 1
	if y == t.y {
		x = t.x
	}
	for i := 0; i < len(s) && x+i <= TermWidth; i++ {
		t.rows[y-1] = t.rows[y-1][:x+i-1] + s[i:i+1] + t.rows[y-1][x+i:]
		t.fg[y-1] = t.fg[y-1][:x+i-1] + string(fg) + t.fg[y-1][x+i:]
	}
}
