package cctext

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
)

func TestToCCMapsTextAsCCMapsTypedCharacters(t *testing.T) {
	for _, tc := range []struct {
		name, text, cc string
		replaced       []string // codePoint@line:column
	}{
		{"ascii", "print('hi')\n", "print('hi')\n", nil},
		{"latin-1 é is one byte", "é", "\xe9", nil},
		{"every Latin-1 character", "ÿ\u0080 ", "\xff\x80 ", nil},
		{"em dash becomes ?", "a — b", "a ? b", []string{"U+2014@1:3"}},
		{"emoji on a later line", "x\n-- 🙂!", "x\n-- ?!", []string{"U+1F642@2:4"}},
		{"invalid UTF-8 stands for itself", "\xe92.txt", "\xe92.txt", nil},
		{"mixed", "é\xff—", "\xe9\xff?", []string{"U+2014@1:3"}},
		{"é written decomposed is é", "cafe\u0301 \u212b", "caf\xe9 \xc5", nil},
		{"a decomposed character CC cannot hold is one ?", "e\u0304—", "??", []string{"U+0113@1:1", "U+2014@1:2"}},
		{"a raw byte beside a decomposed é stays", "\xe9e\u0301", "\xe9\xe9", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc, reps := ToCC("code", tc.text)
			assert.Equal(t, tc.cc, cc)
			var got []string
			for _, r := range reps {
				got = append(got, r.CodePoint+"@"+itoa(r.Line)+":"+itoa(r.Column))
				assert.Equal(t, "code", r.Field)
			}
			assert.Equal(t, tc.replaced, got)
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestReplacementNamesTheCharacterThePlaceAndTheFix(t *testing.T) {
	_, reps := ToCC("code", "-- a — b")
	require.Len(t, reps, 1)
	r := reps[0]
	assert.Equal(t, "—", r.Char)
	assert.Equal(t, "U+2014", r.CodePoint)
	assert.Equal(t, `"—" (U+2014) at code 1:6 is outside CC's character set and was sent as "?"; `+
		`write it as bytes with a Lua escape such as "\226\128\148"`, r.Message, "code has no bytes form but Lua's escapes")
	data, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"char":"—","codePoint":"U+2014","field":"code","line":1,"column":6,"message":`+mustJSON(r.Message)+`}`, string(data))
}

// TestReplacementInAFileNamesItsBytesForms: a Lua escape means something only inside Lua
// code, so a text file's warning names what its writer can do (send its bytes, or a character
// CC holds), and only a program's names the escape too. A program is a file CC runs as Lua
// (LuaFile): one named .lua, one whose name has no extension (startup, programs/door: the
// shell finds a program by its name with or without .lua), any file in /startup/.
func TestReplacementInAFileNamesItsBytesForms(t *testing.T) {
	for _, path := range []string{"/notes.txt", "/data/door.json", "programs/help.md", "/.hidden", "/docs/startup/notes.txt"} {
		_, reps := FileToCC(path, "a ☃ b")
		require.Len(t, reps, 1, path)
		assert.Equal(t, `"☃" (U+2603) at content 1:3 is outside CC's character set and was sent as "?"; `+
			`to store its UTF-8 bytes (E2 98 83), send the file as bytes `+
			`(MCP contentBase64, CLI --binary, HTTP Content-Type: application/octet-stream), `+
			`or write a character up to U+00FF instead`, reps[0].Message, path)
		assert.Equal(t, "content", reps[0].Field, path)
	}
	for _, path := range []string{"/door.lua", "/programs/Door.LUA", "/startup", "startup", "/programs/door", "door", "/startup/01-ui.txt", "/disk/startup", "/disk2/startup/ui.txt"} {
		_, reps := FileToCC(path, "print(\"☃\")")
		require.Len(t, reps, 1, path)
		assert.Equal(t, `"☃" (U+2603) at content 1:8 is outside CC's character set and was sent as "?"; `+
			`in a Lua string a Lua escape such as "\226\152\131" writes its bytes, or send the file as bytes `+
			`(MCP contentBase64, CLI --binary, HTTP Content-Type: application/octet-stream)`, reps[0].Message, path)
	}
}

// TestAByteOrderMarkIsNamedWithItsFix: a file that begins with a byte order mark (an editor
// such as Notepad writes one) has it sent as "?", which a Lua file then fails to load on
// ("Unexpected character"): the warning says what it is and to save the file without it. It
// offered a Lua escape or --binary, and either puts the mark's bytes before the code just the
// same.
func TestAByteOrderMarkIsNamedWithItsFix(t *testing.T) {
	for _, path := range []string{"/door.lua", "/notes.txt"} {
		_, reps := FileToCC(path, "\ufeffprint(1)\n")
		require.Len(t, reps, 1, path)
		assert.Equal(t, `"\ufeff" (U+FEFF) at content 1:1 is outside CC's character set and was sent as "?"; `+
			`it is a byte order mark, which an editor wrote before the file's text and CC reads as part of it `+
			`(a program that begins with it fails to load: Unexpected character): save the file as UTF-8 without a BOM`, reps[0].Message, path)
	}
	_, reps := FileToCC("/door.lua", "print(1) -- \ufeff")
	require.Len(t, reps, 1)
	assert.Contains(t, reps[0].Message, "a Lua escape", "a U+FEFF further on is only a character CC cannot hold")
}

func TestReplacementInACommandLineNamesLuaAsTheWayToItsBytes(t *testing.T) {
	_, reps := Wire("command", "echo ✓")
	require.Len(t, reps, 1)
	assert.Equal(t, `"✓" (U+2713) at command 1:6 is outside CC's character set and was sent as "?"; `+
		`a command line has no escapes: run it from Lua code (MCP run_lua, CLI exec) as shell.run("..."), `+
		`where a Lua escape such as "\226\156\147" writes its bytes`, reps[0].Message,
		"CC's shell knows no escapes, so a command line cannot take a Lua escape itself")
}

// TestReplacementInTypedTextSaysNoKeyTypesIt: text typed on the screen (MCP send_text, a
// screen.input event) becomes key presses, where no Lua escape applies and no key types a
// character past U+00FF: the fix is a file written instead.
func TestReplacementInTypedTextSaysNoKeyTypesIt(t *testing.T) {
	for _, field := range []string{"text", "events[2].text", "payload.events[0].text"} {
		_, reps := Wire(field, "echo ✓")
		require.Len(t, reps, 1)
		assert.Equal(t, `"✓" (U+2713) at `+field+` 1:6 is outside CC's character set and was sent as "?"; `+
			`typing cannot give it (a computer's keyboard types characters up to U+00FF only); `+
			`to put its bytes in a file, write the file instead (MCP write_file, CLI put)`, reps[0].Message, field)
	}
	_, reps := Wire("payload.events.note", "✓")
	require.Len(t, reps, 1)
	assert.Contains(t, reps[0].Message, "Lua escape", "a field that is not an event's text keeps its fix")
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestTextRoundTripsEveryByte(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	text := FromCC(all)
	back, reps := ToCC("", text)
	assert.Empty(t, reps)
	assert.Equal(t, all, []byte(back))
	wire, _ := Wire("", text)
	assert.Equal(t, protocol.WireOfBytes(all), wire, "host text up to U+00FF is the wire string")
	fromWire, err := FromWire(wire)
	require.NoError(t, err)
	assert.Equal(t, text, fromWire)
	assert.Equal(t, "é", FromCC([]byte{0xe9}), "a player's é reads back as é")
	_, err = FromWire("a\u2014")
	assert.Error(t, err)
}

func TestWireJSONReplacesInEveryStringAndKey(t *testing.T) {
	raw := json.RawMessage(`{"code":"print(\"—\")","list":["ok","\ud83d\ude42"],"n":1.50,"k\u2603":true}`)
	out, reps, err := WireJSON("payload", raw)
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":"print(\"?\")","list":["ok","?"],"n":1.50,"k?":true}`, string(out))
	var fields []string
	for _, r := range reps {
		fields = append(fields, r.Field)
	}
	assert.Equal(t, []string{"payload.code", "payload.k☃ (a key)", "payload.list[1]"}, fields)
	assert.True(t, strings.HasSuffix(reps[0].Message, `write it as bytes with a Lua escape such as "\226\128\148"`), "payload.code is Lua: %s", reps[0].Message)
	assert.True(t, strings.HasSuffix(reps[2].Message, `write it as bytes with a Lua escape such as "\240\159\153\130" in Lua code, `+
		`or in this JSON as the characters of its bytes, "\u00f0\u009f\u0099\u0082"`), "in a JSON string a Lua escape is only backslashes: %s", reps[2].Message)

	plain := json.RawMessage(`{"code":"é \u00e9 \\u2014"}`)
	out, reps, err = WireJSON("payload", plain)
	require.NoError(t, err)
	assert.Equal(t, string(plain), string(out), "nothing to replace: the payload passes byte for byte")
	assert.Empty(t, reps)

	_, _, err = WireJSON("payload", json.RawMessage(`{"a":"—"`))
	assert.Error(t, err)
}

// TestWireJSONRefusesKeysThatBecomeOne: "a€" and "a?" are both "a?" on the computer; sent, one
// would overwrite the other, so the payload is refused, naming both.
func TestWireJSONRefusesKeysThatBecomeOne(t *testing.T) {
	_, _, err := WireJSON("payload", json.RawMessage(`{"x":{"a€":1,"a?":2}}`))
	require.Error(t, err)
	assert.Equal(t, `the keys "a?" and "a€" of payload.x are the same on the computer, "a?": CC's character set cannot hold what tells them apart; rename one`, err.Error())
	_, _, err = WireJSON("payload", json.RawMessage(`{"a€":1,"b€":2}`))
	assert.NoError(t, err, "keys that stay apart")
}

// TestWireJSONTakesAByteThatIsNotUTF8AsItself: a JSON argument typed in a Latin-1 terminal
// (the CLI's request) holds the byte FC for ü; it is the byte FC on the computer, as in every
// other text of the rule, and the answer is UTF-8 (a frame that is not closes the socket).
func TestWireJSONTakesAByteThatIsNotUTF8AsItself(t *testing.T) {
	out, reps, err := WireJSON("payload", json.RawMessage("{\"content\":\"k\xfcche\",\"k\xe9y\":1}"))
	require.NoError(t, err)
	assert.Equal(t, `{"content":"küche","kéy":1}`, string(out))
	assert.Empty(t, reps)

	out, reps, err = WireJSON("payload", json.RawMessage("{\"content\":\"\xfc—\"}"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"content":"ü?"}`, string(out))
	require.Len(t, reps, 1)
	assert.Equal(t, "U+2014", reps[0].CodePoint)
}

// TestAReportListsTenCharactersThenCountsTheRest: a text with thousands of characters CC
// cannot hold (a binary file sent as text) is reported as MaxReplacements entries and one
// counting the rest, placed at the first of them; a payload's strings share one report, and
// so do texts joined.
func TestAReportListsTenCharactersThenCountsTheRest(t *testing.T) {
	text := strings.Repeat("—", 3000) + "\n🙂"
	cc, reps := ToCC("content", text)
	assert.Equal(t, strings.Repeat("?", 3000)+"\n?", cc, "every character is still sent as ?")
	require.Len(t, reps, MaxReplacements+1)
	for _, r := range reps[:MaxReplacements] {
		assert.Equal(t, "U+2014", r.CodePoint)
		assert.Zero(t, r.More)
	}
	last := reps[MaxReplacements]
	assert.Equal(t, 3001-MaxReplacements, last.More)
	assert.Equal(t, Replacement{Field: "content", Line: 1, Column: MaxReplacements + 1, More: 3001 - MaxReplacements,
		Message: `… and 2991 more characters CC cannot hold were sent as "?" (the first at content 1:11); ` +
			`if the file is not text, send it as bytes (MCP contentBase64, CLI --binary, HTTP Content-Type: application/octet-stream)`}, last)
	data, err := json.Marshal(last)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"more":2991`)

	_, reps = ToCC("code", strings.Repeat("—", MaxReplacements))
	assert.Len(t, reps, MaxReplacements, "ten are listed, none counted")

	_, reps, err = WireJSON("payload", json.RawMessage(`{"a":"`+strings.Repeat("—", 8)+`","b":"`+strings.Repeat("—", 8)+`"}`))
	require.NoError(t, err)
	require.Len(t, reps, MaxReplacements+1, "a payload's strings share one report")
	assert.Equal(t, Replacement{Field: "payload.b", Line: 1, Column: 3, More: 6,
		Message: `… and 6 more characters CC cannot hold were sent as "?" (the first at payload.b 1:3)`}, reps[MaxReplacements])

	_, a := ToCC("text", strings.Repeat("—", 8))
	_, b := ToCC("text", strings.Repeat("—", 30))
	joined := Join(a, b)
	require.Len(t, joined, MaxReplacements+1)
	assert.Equal(t, 28, joined[MaxReplacements].More, "the second text's own count carries over")
	assert.Equal(t, a, Join(a, nil))
}

func TestPathToCC(t *testing.T) {
	for _, tc := range []struct{ name, path, cc string }{
		{"ascii", "/door.lua", "/door.lua"},
		{"é is the byte E9", "/é2.txt", "/\xe92.txt"},
		{"\\xNN is a raw byte", `/\xe92.txt`, "/\xe92.txt"},
		{"upper-case hex", `/\XC3\xA9`, "/\xc3\xa9"},
		{"a backslash without two hex digits stays", `/a\xg\`, `/a\xg\`},
		{"invalid UTF-8 stands for itself", "/\xff", "/\xff"},
		{"é written decomposed is the byte E9", "/cafe\u0301.lua", "/caf\xe9.lua"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc, err := PathToCC(tc.path)
			require.NoError(t, err)
			assert.Equal(t, tc.cc, cc)
		})
	}
	_, err := PathToCC("/notes—draft.txt")
	require.Error(t, err)
	assert.Equal(t, protocol.CodeBadPayload, protocol.CodeOf(err))
	assert.Contains(t, err.Error(), `"—" (U+2014) at character 7 of the path "/notes—draft.txt"`)
	assert.Contains(t, err.Error(), `\xE2\x80\x94`, "the message names the \\xNN form")
}

func TestPathNameIsWhatCCResolvesThePathTo(t *testing.T) {
	for path, name := range map[string]string{
		"/door.lua": "door.lua", "door.lua": "door.lua", "/a/door.lua/": "door.lua", "/door.lua/.": "door.lua",
		"/door.lua/ . ": "door.lua", "/door.lua/...": "door.lua", `\a\door.lua`: "door.lua", "/a/b/..": "a",
		"/a/b/ .. /.": "a", "/\xe9 x ": "\xe9 x",
		"": "", "/": "", "/.": "", "/a/..": "", "/..": "", "/../a": "",
		// CC drops "*:<>?| and bytes below 32 first, then trims the spaces around each name.
		"/do\"or?.lua": "door.lua", "/door.lua/?": "door.lua", "/a/b/..?": "a", "/a/b/.\x01.": "a", "/door.lua ": "door.lua",
		"/ door.lua\t": "door.lua", "/x\xa0": "x\xa0", "/?": "", "/*/..": "",
		"/" + strings.Repeat("a", 254) + " b": strings.Repeat("a", 254), // cut at 255 bytes, then trimmed
	} {
		assert.Equal(t, name, PathName(path), "%q", path)
	}
}

func TestDirectoryEndingIsWhereNoNameIsLeft(t *testing.T) {
	for path, end := range map[string]string{
		"/new/": "/", `/new\`: `\`, "new/": "/", "/new/.": ".", "/new/..": "..", "/new/ .. ": "..", "/new/...": "...", "/f.txt/.": ".",
		"/new": "", "/new.": "", "/a.b": "", "/..a": "", "": "", "/": "", " / ": "",
		// What CC drops first: "/new/?" is "/new/", "/new/..?" is "/new/..".
		"/new/?": "?", "/new/ ?| ": "?|", "/new/..?": "..?", "/new/\x01": "\x01", "/new/?.": "?.",
		"/new/a?": "", "/?": "", "?": "", "/:/": "",
	} {
		got, ok := DirectoryEnding(path)
		assert.Equal(t, end, got, "%q", path)
		assert.Equal(t, end != "", ok, "%q", path)
	}
}

func TestShowPathIsWhatPathToCCReadsBack(t *testing.T) {
	for _, cc := range []string{"/\xe92.txt", "/a\x1b[2Jb", "/c1\x9b", "/tab\there", "/ok.lua", "/back\\slash", "/\xa0x", "/startup.lua\xad"} {
		shown := ShowPath([]byte(cc))
		assert.NotContains(t, shown, "\x1b")
		back, err := PathToCC(shown)
		require.NoError(t, err)
		assert.Equal(t, cc, back, "shown as %q", shown)
	}
	assert.Equal(t, "/é2.txt", ShowPath([]byte("/\xe92.txt")), "a player's é name shows as typed")
	assert.Equal(t, `/x\x9b`, ShowPath([]byte("/x\x9b")), "C1 as \\x9b")
	assert.Equal(t, `/\xa0x`, ShowPath([]byte("/\xa0x")), "a no-break space, which prints as a space, as ShowTraposID shows it")
	assert.Equal(t, `/startup.lua\xad`, ShowPath([]byte("/startup.lua\xad")), "a soft hyphen, which prints as nothing")
	assert.Equal(t, "/é", ShowWirePath("/é"))
}

func TestShowEscapesControlsForTheTerminal(t *testing.T) {
	assert.Equal(t, "plain é ☃", Show("plain é ☃", false))
	assert.Equal(t, `a\x1b[31mred\x0ab`, Show("a\x1b[31mred\nb", false))
	assert.Equal(t, "line\n\tx\\x1b", Show("line\n\tx\x1b", true), "output keeps \\n and \\t")
	assert.Equal(t, `\x9b \xff \x7f \x0d`, Show("\u009b \xff \x7f \r", true), "C1, DEL, invalid bytes and CR escaped")
	assert.Equal(t, "a\r\nb\\x0dc\r\n", Show("a\r\nb\rc\r\n", true), "a file's CRLF line breaks are kept, a lone CR is not")
	assert.Equal(t, `a\x0d\x0ab`, Show("a\r\nb", false), "nor in a one-line text")
}

// A hostile client's text (a clientVersion, an error message) may hold what no CC string can:
// a bidirectional control reorders the rest of the terminal's line (a table row reads as
// another), a line or paragraph separator breaks it. Shown escaped, as in a traposId.
func TestShowEscapesBidiControlsAndLineSeparators(t *testing.T) {
	for in, want := range map[string]string{
		"0.9\u202eX":           `0.9\u202eX`,
		"a\u2066b\u2069c":      `a\u2066b\u2069c`,
		"l\u200ft \u061c":      `l\u200ft \u061c`,
		"one\u2028two\u2029th": `one\u2028two\u2029th`,
	} {
		assert.Equal(t, want, Show(in, false), "%q", in)
		assert.Equal(t, want, Show(in, true), "%q, keeping lines", in)
	}
	assert.Equal(t, "שלום ☃", Show("שלום ☃", false), "right-to-left letters are text")
}

// TestShowDistinctTellsAnEscapeFromItsText: a text holding what reads as an escape ShowDistinct
// writes (\u200b, \xa0, \U0001f373) is shown with its backslash as \x5c, so that a label or a
// name holding the six characters \u200b does not read as one holding a zero-width space (they
// showed alike); any other backslash, and a text without one, shows as before. ShowComposed,
// for a row or a message made of parts shown already, leaves every backslash.
func TestShowDistinctTellsAnEscapeFromItsText(t *testing.T) {
	for in, want := range map[string]string{
		`\u200b`:            `\x5cu200b`,
		`\u200b and \u200b`: `\x5cu200b and \x5cu200b`,
		`7:kitchen\xa0`:     `7:kitchen\x5cxa0`,
		`\U0001f373 \Ux`:    `\x5cU0001f373 \x5cUx`,
		`C:\dir\n\\share`:   `C:\dir\n\\share`,
		`a\`:                `a\`,
		"kitchen":           "kitchen",
		"Alice's phone (x)": "Alice's phone (x)",
	} {
		assert.Equal(t, want, ShowDistinct(in, false), "%q", in)
		assert.Equal(t, in, ShowComposed(in, false), "%q: ShowComposed leaves a backslash", in)
	}
	assert.Equal(t, `\x5cu200b beside \u200b`, ShowDistinct(`\u200b beside `+"\u200b", false), "the text beside the character")
	assert.Equal(t, `\x5cu200b`, ShowName(`\u200b`, false), "ShowName's rule is ShowDistinct's")
	assert.Equal(t, `7:\x5cu200b`, ShowTraposID(`7:\u200b`), "and ShowTraposID's")
}

// TestShowDistinctTellsLookAlikesApart: a token's name, an account's or a computer's message,
// shown, never looks like another text: what prints as a space, as a hyphen or as nothing is
// escaped (as a file's name is in ls, and a label in a list), and everything else is as Show
// shows it, so that a name in any script reads as written.
func TestShowDistinctTellsLookAlikesApart(t *testing.T) {
	for in, want := range map[string]string{
		"a\u200bb":                `a\u200bb`, // zero-width space
		"a\u200cb\u200db":         `a\u200cb\u200db`,
		"a\u2060b\ufeff":          `a\u2060b\ufeff`,
		"a\u00a0b":                `a\xa0b`, // no-break space, as ls shows it
		"start\u00adup":           `start\xadup`,
		"a\u2009b \u3000c":        `a\u2009b \u3000c`, // a thin space, an ideographic one
		"a\u3164b\u034fc":         `a\u3164b\u034fc`,  // Hangul filler, grapheme joiner
		"x\u202eroot":             `x\u202eroot`,
		"a\x1b[2J":                `a\x1b[2J`,
		"台所 é ☃ שלום":             "台所 é ☃ שלום",
		"\u0600١٢":                "\u0600١٢",     // an Arabic number sign is drawn
		"\u2764\ufe0f":            "\u2764\ufe0f", // a variation selector makes no other text look alike
		"Alice's phone (ünïcode)": "Alice's phone (ünïcode)",
	} {
		assert.Equal(t, want, ShowDistinct(in, false), "%q", in)
		assert.Equal(t, want, ShowComposed(in, false), "%q: ShowComposed escapes the same characters", in)
		assert.Equal(t, want, ShowComposed(want, false), "%q shown, then composed into a row or a message, is the same", in)
	}
	assert.Equal(t, "/a\\xa0b: No such file\n  at line 2\tx", ShowDistinct("/a\u00a0b: No such file\n  at line 2\tx", true), "keepLines is Show's")
	assert.Equal(t, `a\xa0b\x0ac`, ShowDistinct("a\u00a0b\nc", false))
	assert.Equal(t, "a\u00a0b", Show("a\u00a0b", false), "Show leaves them: a file's text or a program's output is the computer's")

	for b := 0; b <= 0xff; b++ {
		assert.Equal(t, b == 0xa0 || b == 0xad, LooksLikeAnother(rune(b)), "byte %#x: of CC's characters, only the no-break space and the soft hyphen", b)
	}
}

// JSON cannot hold Show's \x9b: ShowJSON writes what Go's encoder leaves raw (DEL, C1, the
// bidirectional controls) as JSON's own escapes, so the JSON decodes to the same text.
func TestShowJSONEscapesWhatGosEncoderLeavesRaw(t *testing.T) {
	text := "a\x1b]0;x\x07 \u009b2J \x7f \u202e \u2066é☃ שלום"
	data, err := json.Marshal(map[string]string{"label": text})
	require.NoError(t, err)
	shown := ShowJSON(data)
	assert.Equal(t, `{"label":"a\u001b]0;x\u0007 \u009b2J \u007f \u202e \u2066é☃ שלום"}`, string(shown))
	var back map[string]string
	require.NoError(t, json.Unmarshal(shown, &back))
	assert.Equal(t, text, back["label"], "the same JSON value")
	plain := []byte(`{"a":"é ☃"}`)
	assert.Equal(t, plain, ShowJSON(plain))
}

func TestIsText(t *testing.T) {
	assert.True(t, IsText([]byte("print('é')\r\n\tx\xe9")))
	assert.False(t, IsText([]byte{0, 1, 2}))
	assert.False(t, IsText([]byte("a\x9bb")), "a C1 byte is a control byte")
}

func TestTraposIDsRawByteStandsForItself(t *testing.T) {
	for in, want := range map[string]string{
		"7:k\xfcche":    "7:küche", // a Latin-1 terminal's byte FC
		"7:küche":       "7:küche",
		"7:":            "7:",
		"7:a—b":         "7:a—b",   // not "7:a?b", which could be another computer
		"7:\xfc—":       "7:\xfc—", // as written: it names no computer
		"7:ku\u0308che": "7:küche", // ü written decomposed
	} {
		assert.Equal(t, want, TraposID(in), "%q", in)
	}
}

// TestTypeWire: a type is CC's bytes by the text rule; one CC cannot hold is refused, naming
// the character, rather than sent as '?' or as mojibake.
func TestTypeWire(t *testing.T) {
	for in, want := range map[string]string{
		"door.open":     "door.open",
		"küche.open":    "küche.open", // ü is U+00FC on the wire: the program's byte FC
		"k\xfcche.open": "küche.open", // a Latin-1 terminal's byte FC
	} {
		got, err := TypeWire(in)
		require.NoError(t, err, "%q", in)
		assert.Equal(t, want, got, "%q", in)
	}
	_, err := TypeWire("日本.open")
	assert.Equal(t, protocol.CodeBadPayload, protocol.CodeOf(err))
	assert.EqualError(t, err, `bad_payload: "日" (U+65E5) in the type "日本.open" is outside CC's character set: a type is CC's bytes, so no program on a computer can serve it`)
}

// TestClip: a text within the bound is kept; a longer one is cut at a rune boundary (never in
// the middle of é's two bytes) and says how long it was.
func TestClip(t *testing.T) {
	assert.Equal(t, "küche", Clip("küche", 6))
	assert.Equal(t, "k…(cut, 6 bytes)", Clip("küche", 2), "ü's second byte is not a place to cut")
	assert.Equal(t, "kü…(cut, 6 bytes)", Clip("küche", 3))
	assert.Equal(t, "…(cut, 3 bytes)", Clip("abc", 0))
}

// FuzzWireJSONLeavesOnlyCCBytes: whatever JSON a host gives, WireJSON's answer is JSON whose
// every string and key is CC's bytes (no code point above U+00FF), with one replacement
// counted for each character that was not, and the value unchanged when none was.
func FuzzWireJSONLeavesOnlyCCBytes(f *testing.F) {
	for _, seed := range []string{"{\"content\":\"k\xfcche\"}", `{"code":"print(\"—\")"}`, `["é","\u2603",{"k\ud83d\ude42":[1,"x"]}]`, `"plain"`, `{"a":{"b":["c",null,true,1e3]}}`, `1E1000`, `{"x":{"a€":1,"a?":2}}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		out, reps, err := WireJSON("payload", json.RawMessage(raw))
		if err != nil && strings.Contains(err.Error(), "are the same on the computer") {
			return // refused, naming the keys (TestWireJSONRefusesKeysThatBecomeOne)
		}
		require.NoError(t, err)
		require.True(t, json.Valid(out), "%q became %q", raw, out)
		require.True(t, utf8.Valid(out), "%q became %q, which is no text frame", raw, out)
		if !utf8.ValidString(raw) {
			raw = string(bytesAsThemselves([]byte(raw))) // what it stands for
		}
		in, got := decodeNumbers(t, []byte(raw)), decodeNumbers(t, out) // 1E1000 is JSON too
		above := 0
		walkStrings(in, func(s string) {
			for _, r := range s {
				if r > 0xFF {
					above++
				}
			}
		})
		walkStrings(got, func(s string) {
			for _, r := range s {
				require.LessOrEqual(t, r, rune(0xFF), "%q became %q", raw, out)
			}
		})
		require.Equal(t, above, Count(reps), "%q: %v", raw, reps)
		require.Equal(t, countKeys(in), countKeys(got), "%q became %q: no key is lost", raw, out)
		if above == 0 {
			require.Equal(t, in, got)
		}
	})
}

// countKeys counts the keys of every object in a decoded JSON value.
func countKeys(v any) int {
	n := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			n += countKeys(e)
		}
	case map[string]any:
		n += len(x)
		for _, e := range x {
			n += countKeys(e)
		}
	}
	return n
}

func decodeNumbers(t *testing.T, data []byte) any {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

// walkStrings calls fn with every string of a decoded JSON value, its keys included.
func walkStrings(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for _, e := range x {
			walkStrings(e, fn)
		}
	case map[string]any:
		for k, e := range x {
			fn(k)
			walkStrings(e, fn)
		}
	}
}

// TestShowTraposIDTellsLookAlikesApart: a player naming a computer to pass for another's in the
// host's lists (a no-break space, a soft hyphen, a space at the end, a Cyrillic letter) is seen,
// and what a list shows reads back as that traposId.
func TestShowTraposIDTellsLookAlikesApart(t *testing.T) {
	for id, want := range map[string]string{
		"7:kitchen":            "7:kitchen",
		"7:":                   "7:",
		"7:my kitchen":         "7:my kitchen",
		"7:küche é":            "7:küche é",
		"7:a\\b":               "7:a\\b", // a backslash that starts no escape
		"7:kitchen\u00a0":      `7:kitchen\xa0`,
		"7:kit\u00adchen":      `7:kit\xadchen`,
		"7:kitchen ":           `7:kitchen\x20`,
		"7: kitchen":           `7:\x20kitchen`,
		"7:my  kitchen":        `7:my \x20kitchen`,
		"7: ":                  `7:\x20`,
		"7:kit\u0441hen":       `7:kit\u0441hen`, // Cyrillic с
		"7:a\U0001F600":        `7:a\U0001f600`,
		"7:kit\u200bchen":      `7:kit\u200bchen`,
		"7:a\u0085b\x1b":       `7:a\x85b\x1b`,
		"7:kitchen\\xa0":       `7:kitchen\x5cxa0`, // the literal text, not the byte
		"7:\\u0441":            `7:\x5cu0441`,
		"7:\u00a1\u00ac\u00ae": "7:\u00a1\u00ac\u00ae", // CC's label characters beside the two
		// An escape names the code point it writes, composed with nothing: the host's text is
		// composed (NFC) before its escapes are read, or these named 7:café and 7:Å, others.
		"7:cafe\u0301": `7:cafe\u0301`,
		"7:\u212b":     `7:\u212b`, // the Angstrom sign, whose NFC is Å
	} {
		shown := ShowTraposID(id)
		assert.Equal(t, want, shown, "%q", id)
		assert.Equal(t, id, TraposID(shown), "%q reads back as %q", shown, id)
	}
}

func TestTraposIDReadsEscapesBack(t *testing.T) {
	for in, want := range map[string]string{
		`7:kitchen\xa0`:  "7:kitchen\u00a0",
		`7:kitchen\XA0`:  "7:kitchen\u00a0",
		`7:kit\u0441hen`: "7:kit\u0441hen",
		`7:\x5c`:         `7:\`,
		`7:a\xzz`:        `7:a\xzz`, // no escape: as written
		`7:a\u12`:        `7:a\u12`,
		`7:a\`:           `7:a\`,
		"7:k\xfc\\x20":   "7:kü ",
	} {
		assert.Equal(t, want, TraposID(in), "%q", in)
	}
}

// A traposId of ASCII, as nearly every host request's path names one, is read as it is with
// no allocation: norm's NFC check of it allocated for every request, for text that is NFC by
// being ASCII. One that is not ASCII is still composed.
func TestAnASCIITraposIDIsReadWithoutAnAllocation(t *testing.T) {
	assert.Equal(t, "7:kitchen", TraposID("7:kitchen"))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = TraposID("7:kitchen") }))
	assert.Equal(t, "7:caf\u00e9", TraposID("7:cafe\u0301"), "composed")
}

// TestCompareTraposIDsReadsTheIDAsANumber: the order of the host's lists, whatever an
// altered client sends (digits past any integer, leading zeros, an id that is no number).
func TestCompareTraposIDsReadsTheIDAsANumber(t *testing.T) {
	ids := []string{"x:odd", "10:shed", "007:bond", "7:kitchen", "99999999999999999999999:big", "2:door", ":none", "7:attic"}
	slices.SortFunc(ids, CompareTraposIDs)
	assert.Equal(t, []string{"2:door", "007:bond", "7:attic", "7:kitchen", "10:shed", "99999999999999999999999:big", ":none", "x:odd"}, ids)
	assert.Zero(t, CompareTraposIDs("7:kitchen", "7:kitchen"))
}

// TestNamesItself: a name is one a path reaches only when CC's fs reads it as it is: a
// control byte, one of "*:<>?|, a space around it, a separator, a cut past 255 bytes or dots
// alone make its path read another name (get -r and put -r leave such a name out).
func TestNamesItself(t *testing.T) {
	for _, name := range []string{"ab.txt", "gr\xfc\xdfe.txt", "a b", ".settings", "x.", strings.Repeat("n", 254)} {
		assert.True(t, NamesItself(name), "%q", name)
	}
	for _, name := range []string{"a\x01b.txt", "t\tx", "a?b", `a"b`, " ab", "ab ", "a/b", `a\b`, ".", "..", "...", "", strings.Repeat("n", 256)} {
		assert.False(t, NamesItself(name), "%q", name)
	}
}

// TestReadsAnother: a host path one of whose names CC's fs reads as another reads the path
// it resolves to; "." and ".." are resolved, not another name.
func TestReadsAnother(t *testing.T) {
	for p, want := range map[string]string{`/d/a\x01b.txt`: "/d/ab.txt", "/d/a\x01b.txt": "/d/ab.txt", "/door?.log": "/door.log",
		"/d/ ab.txt": "/d/ab.txt", `/sub\x01/x`: "/sub/x", `a\b`: "/a/b", "/d/...": "/d"} {
		got, ok := ReadsAnother(p)
		assert.True(t, ok, "%q", p)
		assert.Equal(t, want, got, "%q", p)
	}
	for _, p := range []string{"/d/ab.txt", "door.lua", "/d/./x/../y", "/", "", "/gr\u00fc\u00dfe.txt", "/d/"} {
		_, ok := ReadsAnother(p)
		assert.False(t, ok, "%q", p)
	}
}
