// Package inputcases is the one table of screen.input events on which the web console's copies
// of the gateway's input rules are held to the gateway's own: the page's inputCost to
// computer.InputCost (how the page fills a call), its typedPart and charactersIn to the requests
// the gateway sends for an input (computer.InputRequests: the text rule, then SplitInput's cuts;
// what the page says was typed, and not, when a request after the first failed). The answers here are the gateway's functions' own; tests/e2e asks the page's
// functions in a browser and compares.
package inputcases

import (
	"encoding/json"
	"fmt"
	"strings"

	"trap-sandbox/internal/computer"
)

// events is the table: each event as JSON, as the page sends it (a key's held, a text a browser
// holds), one of every type and each edge of their count. The JSON escapes keep the table
// readable; "\ud83d" alone is half of a character, which a browser's string can hold (a
// character to the page, U+FFFD to the gateway: one either way).
var events = []string{
	`{"type":"key","name":"a","held":false}`,
	`{"type":"key","name":"enter","held":true}`,
	`{"type":"key_up","name":"leftCtrl"}`,
	`{"type":"char","text":"a"}`,
	`{"type":"char","text":""}`,
	`{"type":"char"}`,
	`{"type":"char","text":"\n"}`,
	`{"type":"char","text":"\n\n"}`,
	`{"type":"char","text":"a\nb\n"}`,
	`{"type":"char","text":"\r\n"}`,
	`{"type":"char","text":"\r"}`,
	`{"type":"char","text":"\t"}`,
	`{"type":"char","text":"é"}`,
	`{"type":"char","text":"e\u0301"}`,
	`{"type":"char","text":"日本"}`,
	`{"type":"char","text":"😀"}`,
	`{"type":"char","text":"a\ud83d"}`,
	`{"type":"char","text":"` + strings.Repeat("x", computer.MaxInputEvents+1) + `"}`,
	`{"type":"char","text":"` + strings.Repeat(`é\n`, computer.MaxInputEvents) + `"}`,
	`{"type":"paste","text":"one line"}`,
	`{"type":"paste","text":"` + strings.Repeat("p", 512) + `"}`,
	`{"type":"click","button":1,"x":1,"y":1}`,
	`{"type":"click","button":3,"x":51,"y":19}`,
	`{"type":"mouse_click","button":1,"x":2,"y":1}`,
	`{"type":"drag","button":1,"x":2,"y":1}`,
	`{"type":"mouse_up","button":1,"x":3,"y":1}`,
	`{"type":"scroll","direction":-1,"x":2,"y":3}`,
	`{"type":"terminate"}`,
}

// Cost is an event and what it costs the computer's queue.
type Cost struct {
	Event string // JSON
	Cost  int    // computer.InputCost
}

// Costs is the table with computer.InputCost's answers.
func Costs() []Cost {
	var out []Cost
	for _, js := range events {
		out = append(out, Cost{Event: js, Cost: computer.InputCost(decode[computer.InputEvent](js))})
	}
	return out
}

// Split is a list of events and the requests it goes in.
type Split struct {
	What   string
	Events string // JSON, as the gateway writes them (no field at its zero value)
	Parts  string // JSON: computer.InputRequests' lists, their texts CC's bytes
}

// Splits is lists of the table's events and the requests the gateway sends for them
// (computer.InputRequests): each event alone,
// the table in order, and a text that fills requests with line breaks at their edges (what the
// Type field sends for a text with a line break every 50 characters: each character its key,
// its char and its key_up; each line break Enter pressed, or the char a line break is), and a
// text whose character written decomposed (e and U+0301) ends the first request, composed.
func Splits() []Split {
	var all []computer.InputEvent
	var out []Split
	add := func(what string, evs []computer.InputEvent) {
		parts := computer.InputRequests(evs)
		if parts == nil {
			parts = [][]computer.InputEvent{} // none: a char without text
		}
		out = append(out, Split{What: what, Events: encode(evs), Parts: encode(parts)})
	}
	for _, js := range events {
		e := decode[computer.InputEvent](js)
		all = append(all, e)
		add(js+" alone", []computer.InputEvent{e})
	}
	add("the table in order", all)
	add("the table twice over", append(append([]computer.InputEvent{}, all...), all...))
	var typed, breaks []computer.InputEvent
	for i := range 1000 {
		if i%50 == 49 {
			typed = append(typed, computer.KeyPress("enter")...)
			breaks = append(breaks, computer.InputEvent{Type: computer.InputChar, Text: "\n"})
			continue
		}
		ch := string(rune('a' + i%26))
		typed = append(typed, computer.InputEvent{Type: computer.InputKey, Name: ch}, computer.InputEvent{Type: computer.InputChar, Text: ch},
			computer.InputEvent{Type: computer.InputKeyUp, Name: ch})
		breaks = append(breaks, computer.InputEvent{Type: computer.InputChar, Text: ch})
	}
	add("1000 characters typed, Enter every 50th", typed)
	add("1000 characters as chars, a line break every 50th", breaks)
	add("é written decomposed where the first request ends", []computer.InputEvent{
		{Type: computer.InputChar, Text: strings.Repeat("x", computer.MaxInputEvents-1) + "e\u0301y"}})
	return out
}

func decode[T any](js string) T {
	var v T
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		panic(fmt.Sprintf("inputcases: %s: %v", js, err))
	}
	return v
}

func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("inputcases: %v", err))
	}
	return string(b)
}
