package jsonscan_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"trap-sandbox/internal/jsonscan"
)

// samples are JSON texts, valid and not, that the gateway meets or that sit on an edge of the
// grammar. Each, and every mutation of each, must get encoding/json's answer.
var samples = []string{
	`{"event":"computer_response","traposSenderId":"bench-00012","messageId":"2c5e0b7a-0d5f-4c1e-9a3e-0f6b1d2c3e4f","type":"ping","ok":true,"payload":{"traposId":"bench-00012"}}`,
	`{"type":"ping","payload":{},"timeoutMs":10000}`,
	`{"event":"computer_response","messageId":"m1","ok":false,"error":{"code":"lua_error","message":"bad \"arg\" \\ \/ \b\f\n\r\t \u00e9 \uD83D\uDE00"}}`,
	` { "a" : [ 1 , -2.5e+10 , 0.0 , -0 , 1E-3 , true , false , null , "" , { } , [ ] ] } `,
	`[]`, `{}`, `""`, `0`, `-0`, `1.5`, `1e9`, `1E+9`, `1e-9`, `true`, `false`, `null`,
	"\"\xff\xfe invalid UTF-8 is still valid JSON\"",
	"\"caf\xc3\xa9\"",
	``, ` `, `{`, `}`, `[`, `]`, `{]`, `[}`, `{"a"}`, `{"a":}`, `{"a" 1}`, `{a:1}`, `{"a":1,}`, `[1,]`, `[,1]`,
	`01`, `1.`, `.5`, `-`, `+1`, `1e`, `1e+`, `--1`, `0x10`, `1.5.5`, `NaN`, `Infinity`, `tru`, `nul`, `truex`,
	`"\x"`, `"\u12"`, `"\u12g4"`, `"unterminated`, "\"tab\tinside\"", "\"nul\x00inside\"", `"\`,
	`{"a":1}{"b":2}`, `[1] [2]`, `1 2`, "\v1", "1\x00", "\xef\xbb\xbf{}",
	`{"a":{"b":{"c":[[[{"d":null}]]]}}}`,
}

func TestValidAnswersAsEncodingJSON(t *testing.T) {
	for _, s := range samples {
		if got, want := jsonscan.Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", s, got, want)
		}
	}
}

// TestValidAnswersAsEncodingJSONOnMutations changes each sample a byte at a time (replaced by
// a byte JSON gives meaning to or any other, removed, doubled) and cuts it at every length:
// a validator that accepted a broken frame, or refused a good one, differs here.
func TestValidAnswersAsEncodingJSONOnMutations(t *testing.T) {
	const grammar = "{}[]\":,\\ \t\n\r0123456789-+.eEtfnrulsaubx/"
	rng := rand.New(rand.NewPCG(25, 1))
	check := func(b []byte) {
		t.Helper()
		if got, want := jsonscan.Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
	}
	for _, s := range samples {
		for i := range len(s) {
			check([]byte(s[:i]))
			check([]byte(s[:i] + s[i+1:]))
			check([]byte(s[:i] + s[i:i+1] + s[i:]))
			for _, c := range []byte(grammar) {
				check([]byte(s[:i] + string(c) + s[i+1:]))
			}
			check([]byte(s[:i] + string(rune(rng.IntN(256))) + s[i+1:]))
			b := []byte(s)
			b[i] = byte(rng.IntN(256))
			check(b)
		}
	}
}

func TestValidNestsAsDeepAsEncodingJSON(t *testing.T) {
	for _, depth := range []int{63, 64, 65, 127, 128, 129, jsonscan.MaxDepth, jsonscan.MaxDepth + 1} {
		arrays := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		// Objects and arrays by turns, so that a stack that lost a level beyond its first
		// 64 would close one with the other's bracket.
		var open, close strings.Builder
		for d := range depth {
			if d%3 == 0 {
				open.WriteString(`{"k":`)
			} else {
				open.WriteString(`[`)
			}
		}
		for d := depth - 1; d >= 0; d-- {
			if d%3 == 0 {
				close.WriteString(`}`)
			} else {
				close.WriteString(`]`)
			}
		}
		mixed := open.String() + "1" + close.String()
		for _, s := range []string{arrays, mixed} {
			if got, want := jsonscan.Valid([]byte(s)), json.Valid([]byte(s)); got != want {
				t.Errorf("depth %d: Valid = %v, encoding/json says %v", depth, got, want)
			}
		}
		// The same, with one closing bracket swapped for the other kind deep inside.
		swapped := []byte(mixed)
		j := len(swapped) - depth + 70%depth
		if swapped[j] == '}' {
			swapped[j] = ']'
		} else {
			swapped[j] = '}'
		}
		if got, want := jsonscan.Valid(swapped), json.Valid(swapped); got != want {
			t.Errorf("depth %d with a swapped bracket: Valid = %v, encoding/json says %v", depth, got, want)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := jsonscan.Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

// BenchmarkValid checks a computer's answer to a ping, the frame the gateway checks most.
func BenchmarkValid(b *testing.B) {
	frame := []byte(samples[0])
	b.Run("jsonscan", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		for b.Loop() {
			jsonscan.Valid(frame)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		for b.Loop() {
			json.Valid(frame)
		}
	})
}
