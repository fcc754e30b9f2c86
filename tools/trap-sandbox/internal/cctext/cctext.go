// Package cctext is the text rule between the host and a computer, in one place per direction
// (docs/protocol.md, "Text and bytes"). Host text is UTF-8; CC strings are bytes, and CC:
// Tweaked turns what a player types or pastes into them by mapping each character up to
// U+00FF to the byte of the same value (é U+00E9 is the byte E9) and anything else to '?'.
//
//   - Host → computer (ToCC, Wire, WireJSON): the same mapping. A character above U+00FF becomes
//     '?' and is reported as a Replacement, which every surface shows with the fix. A byte that
//     is not valid UTF-8 (a CLI argument, a local file, a percent-decoded URL path) stands for
//     itself.
//   - A paste event's text (PasteWire): the same mapping, but a character past U+FFFF is two
//     '?', as CC's paste reads a Java string (a surrogate pair is two chars).
//   - Request types (TypeWire): the same mapping, but a character above U+00FF is refused.
//   - Paths (PathToCC, PathWire): the same mapping plus the raw-byte escape \xNN. A character
//     above U+00FF is refused, not replaced: CC drops '?' from paths, so a replaced name would
//     be another file.
//   - Computer → host (FromCC, FromWire): byte N is the character U+00NN, as UTF-8, so a file a
//     player typed é into reads back as é. Show and ShowPath make text safe for a terminal:
//     control characters as \xNN, which is the form every path argument accepts back;
//     ShowDistinct also escapes what prints as another character or as none (a no-break
//     space, \xa0; a zero-width space, \u200b), for a name and a computer's message;
//     ShowJSON makes JSON so, with JSON's escapes (\u009b), its value unchanged.
//   - TraposIds (ShowTraposID, TraposID): every list of computers shows a traposId with what
//     would pass for another computer's escaped (a no-break space, a soft hyphen, a space at
//     the label's end, any character above U+00FF), and the host takes that form back.
//
// On the wire (protocol.WireOfBytes) byte N is the JSON code point U+00NN, so host text whose
// characters are all at most U+00FF already is the wire string of its CC bytes.
package cctext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"trap-sandbox/internal/protocol"
)

// Unmappable is what a character outside CC's charset becomes in text, as CC makes it.
const Unmappable = '?'

// Replacement reports one character of host text that CC's charset cannot hold and that was
// sent as '?'. Its JSON is the `warnings` entry of the HTTP API and of MCP results.
type Replacement struct {
	// Char is the character, CodePoint its "U+XXXX".
	Char      string `json:"char"`
	CodePoint string `json:"codePoint"`
	// Field names the text it was in ("code", "command", "content", "payload.x"); empty for
	// a text without a name.
	Field string `json:"field,omitempty"`
	// Line and Column (1-based; the column counts characters) place it in that text.
	Line   int `json:"line"`
	Column int `json:"column"`
	// Message says all of it in one line, with the fix.
	Message string `json:"message"`
	// More is set on the last entry of a report cut at MaxReplacements: how many further
	// characters were sent as '?' without an entry of their own. That entry's Char and
	// CodePoint are empty; Field, Line and Column place the first of them.
	More int `json:"more,omitempty"`
}

// MaxReplacements is how many replacements one report lists one by one; the rest are one
// entry counting them (Replacement.More). A binary file sent as text holds thousands (100 KB
// of random bytes: about 3,000), which would flood a terminal and fill an answer with their
// list.
const MaxReplacements = 10

// report gathers the replacements of one text or payload, listing at most MaxReplacements.
type report struct {
	reps  []Replacement
	more  int         // the characters past the cap
	first Replacement // the first of them (its field and place)
	// merged is set by WireJSON for the first two keys of one object that became the same
	// on the computer ("a€" and "a?" are both "a?"): one would overwrite the other.
	merged error
	// luaFile is set by FileToCC for a file whose path says it is Lua code, where a Lua escape
	// in a string writes bytes; in any other file it would be written as its own characters.
	luaFile bool
	// pasted is set by PasteWire for the text of a paste event, which CC reads as a Java
	// string: a character past U+FFFF is two chars there, each a '?'.
	pasted bool
}

// add records the character r at a place of the text field, building its entry only while
// the list has room.
func (rp *report) add(field string, r rune, at position) {
	if len(rp.reps) < MaxReplacements {
		rp.reps = append(rp.reps, newReplacement(field, r, at, rp.luaFile))
		return
	}
	if rp.more == 0 {
		rp.first = Replacement{Field: field, Line: at.line, Column: at.column}
	}
	rp.more++
}

// merge records entries of another report (a summary entry counts its More).
func (rp *report) merge(reps []Replacement) {
	for _, r := range reps {
		if r.More == 0 && len(rp.reps) < MaxReplacements {
			rp.reps = append(rp.reps, r)
			continue
		}
		if rp.more == 0 {
			rp.first = Replacement{Field: r.Field, Line: r.Line, Column: r.Column}
		}
		rp.more += max(r.More, 1)
	}
}

// list is the report: the entries, then one counting the rest when there are more.
func (rp *report) list() []Replacement {
	if rp.more == 0 {
		return rp.reps
	}
	sum := rp.first
	sum.More = rp.more
	where := fmt.Sprintf("%d:%d", sum.Line, sum.Column)
	if sum.Field != "" {
		where = sum.Field + " " + where
	}
	sum.Message = fmt.Sprintf("… and %d more characters CC cannot hold"+wereSent+"%q (the first at %s)", sum.More, string(Unmappable), where)
	if sum.Field == contentField {
		sum.Message += "; if the file is not text, send it as bytes " + bytesSurfaces
	}
	return append(rp.reps, sum)
}

// Count is how many characters a report stands for: its entries and those counted by a
// summary entry.
func Count(reps []Replacement) int {
	n := 0
	for _, r := range reps {
		n += max(r.More, 1)
	}
	return n
}

// Join is the report of two texts sent together (a's entries first), cut at
// MaxReplacements as one report is.
func Join(a, b []Replacement) []Replacement {
	if len(b) == 0 {
		return a
	}
	var rp report
	rp.merge(a)
	rp.merge(b)
	return rp.list()
}

// What a replacement's message says of its character, and what Unsent puts in its place.
const (
	wasSent       = " was sent as "
	wereSent      = " were sent as "
	wouldHaveBeen = " would have been sent as "
)

// Unsent is the warnings an answer carries of text that err says reached no computer (a
// not_connected of a computer no socket holds, protocol.Error's Absent, or the host's own
// bad_payload, which refuses what it was asked to send before sending any of it: a file PUT
// to a path CC cannot hold): their messages say what the characters would have been sent as,
// not that they were. Every answer with warnings goes through it (the host API's answer
// writer, MCP's failed calls); reps is not changed.
func Unsent(reps []Replacement, err error) []Replacement {
	pe, ok := errors.AsType[*protocol.Error](err)
	if len(reps) == 0 || !ok || !(pe.Absent || (pe.Code == protocol.CodeBadPayload && !pe.ByComputer)) {
		return reps
	}
	out := make([]Replacement, len(reps))
	for i, r := range reps {
		r.Message = strings.Replace(strings.Replace(r.Message, wasSent, wouldHaveBeen, 1), wereSent, wouldHaveBeen, 1)
		out[i] = r
	}
	return out
}

// String is the replacement's message.
func (r Replacement) String() string { return r.Message }

// position is where a character stands in a text: its line and column, counted as people do.
type position struct{ line, column int }

func (p *position) advance(r rune) {
	if r == '\n' {
		p.line, p.column = p.line+1, 1
		return
	}
	p.column++
}

// contentField is the field name a file's contents are converted under (ToCC's field).
const contentField = "content"

// commandField is the field name a shell command line is converted under (Wire's field).
const commandField = "command"

// newReplacement is the report of r at a place of field; luaFile says a file's contents
// (field "content") are Lua code.
func newReplacement(field string, r rune, at position, luaFile bool) Replacement {
	rep := Replacement{Char: string(r), CodePoint: fmt.Sprintf("U+%04X", r), Field: field, Line: at.line, Column: at.column}
	where := fmt.Sprintf("%d:%d", at.line, at.column)
	if field != "" {
		where = field + " " + where
	}
	rep.Message = fmt.Sprintf("%q (%s) at %s is outside CC's character set and"+wasSent+"%q; ",
		rep.Char, rep.CodePoint, where, string(Unmappable))
	if field == commandField {
		// CC's shell splits a command line at spaces and quotes and knows no escapes, so
		// the only way to hand a program these bytes is to call it from Lua.
		rep.Message += fmt.Sprintf("a command line has no escapes: run it from Lua code (MCP run_lua, CLI exec) as "+
			"shell.run(\"...\"), where a Lua escape such as \"%s\" writes its bytes", luaEscape(rep.Char))
		return rep
	}
	if typedField(field) {
		// Typed text reaches a program as char events, one byte each: no escape makes a key
		// type bytes, and a program reading keys gets only what a player could type.
		rep.Message += "typing cannot give it (a computer's keyboard types characters up to U+00FF only); " +
			"to put its bytes in a file, write the file instead (MCP write_file, CLI put)"
		return rep
	}
	if field == contentField && r == byteOrderMark && at == (position{1, 1}) {
		// Not text the writer meant: an escape or the file's bytes put the mark before the
		// code all the same, and CC reads no mark.
		rep.Message += "it is a byte order mark, which an editor wrote before the file's text and CC reads as part of it " +
			"(a program that begins with it fails to load: Unexpected character): save the file as UTF-8 without a BOM"
		return rep
	}
	if field == contentField {
		// Only a file's contents have a bytes form on every surface; a Lua escape is bytes
		// only inside a Lua file's strings (in a text file it is its own eleven characters).
		if luaFile {
			rep.Message += fmt.Sprintf("in a Lua string a Lua escape such as \"%s\" writes its bytes, or send the file as bytes %s",
				luaEscape(rep.Char), bytesSurfaces)
			return rep
		}
		rep.Message += fmt.Sprintf("to store its UTF-8 bytes (% X), send the file as bytes %s, or write a character up to U+00FF instead",
			rep.Char, bytesSurfaces)
		return rep
	}
	rep.Message += fmt.Sprintf("write it as bytes with a Lua escape such as \"%s\"", luaEscape(rep.Char))
	if strings.HasPrefix(field, "payload.") && field != "payload.code" {
		// A raw request's field is a JSON string, where a Lua escape is only backslashes:
		// its bytes are named as the characters U+0000-U+00FF (the byte rule).
		rep.Message += fmt.Sprintf(" in Lua code, or in this JSON as the characters of its bytes, \"%s\"", jsonByteEscape(rep.Char))
	}
	return rep
}

// byteOrderMark is U+FEFF, which some editors (Notepad) write at the start of a UTF-8 file.
const byteOrderMark = '\uFEFF'

// bytesSurfaces names how each surface sends a file as bytes, not text.
const bytesSurfaces = "(MCP contentBase64, CLI --binary, HTTP Content-Type: application/octet-stream)"

// typedField reports whether field is text typed on the computer's screen: MCP send_text's
// text, or a screen.input event's (events[0].text, payload.events[0].text in a raw request).
func typedField(field string) bool {
	rest := strings.TrimPrefix(field, "payload.")
	return field == TypedTextField || (strings.HasPrefix(rest, "events[") && strings.HasSuffix(rest, "].text"))
}

// TypedTextField is the field name MCP's send_text converts its text under.
const TypedTextField = "text"

// jsonByteEscape is s's UTF-8 bytes as JSON escapes of the characters U+0000-U+00FF
// ("\u00e2\u0080\u0094" for U+2014), which the byte rule sends as those bytes.
func jsonByteEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\u%04x`, s[i])
	}
	return b.String()
}

// luaEscape is s's UTF-8 bytes as Lua decimal escapes ("\226\128\148" for U+2014).
func luaEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\%d`, s[i])
	}
	return b.String()
}

// ToCC is host text as CC bytes: each character up to U+00FF is that byte, a byte that is not
// UTF-8 stands for itself, any other character is '?' and is reported (field names the text
// in the reports, at most MaxReplacements of them one by one).
func ToCC(field, text string) (string, []Replacement) {
	var rp report
	cc := toCC(field, text, &rp)
	return cc, rp.list()
}

// FileToCC is ToCC of a file's contents about to be written at path (field "content"): its
// reports' fix names the Lua escape only when LuaFile(path), the one sign the gateway has that
// the text is Lua code.
func FileToCC(path, text string) (string, []Replacement) {
	rp := report{luaFile: LuaFile(path)}
	cc := toCC(contentField, text, &rp)
	return cc, rp.list()
}

// LuaFile reports whether CC runs the file at path as a program, so that its contents are Lua
// code, where an escape in a string writes bytes: its name ends in ".lua" (any case), or has
// no extension at all, since CC's shell finds a program by its name with or without ".lua"
// (startup, programs/door, a pastebin get's door); or it is in a startup directory at the
// root or a disk's root (/startup/, /disk/startup/), every file of which CC runs at boot
// whatever its name. Any other extension (.txt, .json, .settings) names data, where an
// escape stays its own characters. A file run by name anyway (shell.run("notes.txt")) is
// beyond what a name tells; its warning still names the bytes form, which works for both.
func LuaFile(p string) bool {
	p = path.Clean("/" + p)
	dir, name := path.Split(p)
	if startupDir.MatchString(strings.TrimSuffix(dir, "/")) {
		return true
	}
	ext := strings.ToLower(path.Ext(name))
	return ext == "" || ext == ".lua"
}

// startupDir matches the directories whose every file CC runs at boot: /startup, and a disk's
// (CC mounts a drive's disk at /disk, /disk2, …), not one of that name further down
// (/docs/startup holds data).
var startupDir = regexp.MustCompile(`^(/disk[0-9]*)?/startup$`)

// toCC is ToCC adding its replacements to rp.
func toCC(field, text string, rp *report) string {
	if isASCII(text) {
		return text
	}
	text = composed(text)
	out := make([]byte, 0, len(text))
	at := position{1, 1}
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, text[i])
		case r <= 0xFF:
			out = append(out, byte(r))
		case r > 0xFFFF && rp.pasted:
			out = append(out, Unmappable, Unmappable)
			rp.add(field, r, at)
		default:
			out = append(out, Unmappable)
			rp.add(field, r, at)
		}
		at.advance(r)
		i += n
	}
	return string(out)
}

// Wire is host text as the wire string of its CC bytes (ToCC, then one code point per byte).
func Wire(field, text string) (string, []Replacement) {
	var rp report
	w := wire(field, text, &rp)
	return w, rp.list()
}

// PasteWire is Wire for the text of a paste event (screen.input's paste): as CC pastes it, a
// character past U+FFFF (an emoji) is two '?', reported once. CC's paste maps its clipboard
// char by char of the Java string Minecraft gives it (StringUtil.normaliseClipboardString),
// where such a character is a surrogate pair, each half one it cannot show: "a😀b" pastes as
// "a??b", and counts 4 of the 512 a paste holds, as its bytes on the computer do. A typed
// character past U+00FF is not a paste: CC's keyboard (TerminalWidget.charTyped) types none,
// and Wire sends it as one '?' that every surface names (docs/protocol.md, Text and bytes).
func PasteWire(field, text string) (string, []Replacement) {
	rp := report{pasted: true}
	w := wire(field, text, &rp)
	return w, rp.list()
}

// wire is Wire adding its replacements to rp.
func wire(field, text string, rp *report) string {
	return protocol.WireOfBytes([]byte(toCC(field, text, rp)))
}

// TraposID is a traposId the host gave (a CLI argument, a percent-decoded URL path) as the
// gateway keys computers: the wire string of its CC bytes (Wire), so a byte that is not UTF-8
// stands for itself and a Latin-1 terminal's 0:k\xFCche names 0:küche. One holding a character
// above U+00FF stays as written, not '?': a computer's label is CC's bytes, so no traposId holds
// such a character, and "?" would name another computer; it meets not_connected and its hint.
// The escapes ShowTraposID writes (\xNN, \uXXXX) are read back first: a traposId as a list
// shows it names that computer; a character written decomposed is composed (0:cafe and U+0301
// names 0:café), before the escapes are read: 0:cafe\u0301, as a list shows an altered
// client's id, names that one, not 0:café.
func TraposID(id string) string {
	id = unescapeID(ListedTraposID(id))
	if utf8.ValidString(id) {
		return id // Wire changes only what is past U+00FF, which stays
	}
	w, reps := Wire("traposId", id)
	if len(reps) > 0 {
		return id
	}
	return w
}

// ListedTraposID is a traposId the host gave as the lists give it, with no escapes to read
// (MCP's traposId argument and its file URIs: a label's own "\x41" is those four characters),
// as the gateway keys computers: composed (Unicode NFC), the one rule by which every host
// surface compares a name it was given (TraposID reads the typed form by it too). 7:ku\u0308che,
// ü written as u and U+0308 (a macOS file name, some input methods), names 7:küche.
// It confuses no two computers: a hello's traposId must be composed already
// (TraposIDProblem), and two different composed traposIds never compose alike, so a name
// names at most one connected computer, the one whose traposId it composes to.
func ListedTraposID(id string) string { return composed(id) }

// TypeWire is a request type the host gave as the wire string of its CC bytes (Wire): a type
// is CC's bytes as a payload's strings are, so küche.open reaches the program serving
// "k\252che.open", and a byte that is not UTF-8 stands for itself. A character above U+00FF is
// refused with bad_payload, not replaced: '?' would name another type, and a computer's answer
// naming the type as it came would read as mojibake.
func TypeWire(typ string) (string, error) {
	if isASCII(typ) {
		return typ, nil
	}
	var rp report
	w := wire("type", typ, &rp)
	if reps := rp.list(); len(reps) > 0 {
		return "", protocol.Errorf(protocol.CodeBadPayload,
			"%q (%s) in the type %q is outside CC's character set: a type is CC's bytes, so no program on a computer can serve it",
			reps[0].Char, reps[0].CodePoint, typ)
	}
	return w, nil
}

// FromCC is CC bytes as host text: byte N is the character U+00NN.
func FromCC(cc []byte) string {
	if isASCII(string(cc)) {
		return string(cc)
	}
	var b strings.Builder
	b.Grow(len(cc) * 2)
	for _, c := range cc {
		b.WriteRune(rune(c))
	}
	return b.String()
}

// FromWire is a wire string from a computer as host text. They are the same characters (byte
// N is U+00NN in both); a code point above U+00FF stands for no byte, so it is an error.
func FromWire(wire string) (string, error) {
	for i, r := range wire {
		if r > 0xFF {
			return "", fmt.Errorf("U+%04X at byte %d is not a byte (code points U+0000 to U+00FF only)", r, i)
		}
	}
	return wire, nil
}

// WireJSON applies Wire to every string of a JSON value (keys too), for payloads a host gives
// as JSON. The replacements name each string by its place ("payload.code", "payload.items[2]").
// A byte that is not UTF-8 (a CLI argument typed in a Latin-1 terminal) stands for itself, as
// in Wire: it could only be in a string, and sent as it is it would make the frame no UTF-8
// text, which a computer answers by closing its socket (1007). A value without such a byte or
// character comes back as it was, byte for byte.
func WireJSON(field string, raw json.RawMessage) (json.RawMessage, []Replacement, error) {
	if !utf8.Valid(raw) {
		raw = bytesAsThemselves(raw)
	}
	if !hasNonLatin1(raw) {
		return raw, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, fmt.Errorf("the payload is not valid JSON: %w", err)
	}
	var rp report
	v = wireValue(field, v, &rp)
	if rp.merged != nil {
		return nil, nil, rp.merged
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, nil, fmt.Errorf("encode the payload: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), rp.list(), nil
}

// wireValue is v with Wire applied to its strings and keys (keys that become one: rp.merged).
func wireValue(field string, v any, rp *report) any {
	switch x := v.(type) {
	case string:
		return wire(field, x, rp)
	case []any:
		for i := range x {
			x[i] = wireValue(field+"["+strconv.Itoa(i)+"]", x[i], rp)
		}
		return x
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the reports come in a stable order
		out := make(map[string]any, len(x))
		from := make(map[string]string, len(x)) // each key sent, by the key it was given as
		for _, k := range keys {
			name := k
			if field != "" {
				name = field + "." + k
			}
			wk := wire(name+" (a key)", k, rp)
			if other, taken := from[wk]; taken && rp.merged == nil {
				rp.merged = fmt.Errorf("the keys %q and %q of %s are the same on the computer, %q: CC's character set cannot hold what tells them apart; rename one",
					other, k, field, wk)
			}
			from[wk] = k
			out[wk] = wireValue(name, x[k], rp)
		}
		return out
	}
	return v
}

// bytesAsThemselves is text with each byte that is not UTF-8 made the character of its value
// (0xFC: ü, U+00FC), the rest as it was.
func bytesAsThemselves(text []byte) []byte {
	out := make([]byte, 0, len(text)+len(text)/2)
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRune(text[i:])
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, rune(text[i]))
		} else {
			out = append(out, text[i:i+n]...)
		}
		i += n
	}
	return out
}

// hasNonLatin1 reports whether JSON text may hold a character above U+00FF: raw, or as a
// \u escape other than \u00XX.
func hasNonLatin1(raw []byte) bool {
	for i := 0; i < len(raw); {
		r, n := utf8.DecodeRune(raw[i:])
		if r > 0xFF && r != utf8.RuneError {
			return true
		}
		if raw[i] == '\\' && i+1 < len(raw) && raw[i+1] == 'u' && !bytes.HasPrefix(raw[i+2:], []byte("00")) {
			return true
		}
		if raw[i] == '\\' {
			n = 2 // an escaped quote or backslash is not the start of another escape
		}
		i += n
	}
	return false
}

// composed is host text with each character written decomposed composed, as Unicode's NFC
// composes it, before the mapping reads it a character at a time: é written as e and U+0301
// (as macOS gives file names, and some keyboards and pastes give text) is é, U+00E9, the byte
// E9, where it was "e?" with a warning, and a path holding it was refused with the UTF-8
// bytes of U+0301 as its \xNN fix. Text whose characters are all up to U+00FF is NFC already
// (no two of them compose), so only text holding a character CC cannot hold can change; a
// byte that is not UTF-8 stays as it is.
func composed(text string) string {
	// ASCII is NFC; norm's check of it costs an allocation, and every host request's traposId
	// (TraposID) comes this way.
	if isASCII(text) || norm.NFC.IsNormalString(text) {
		return text
	}
	return norm.NFC.String(text)
}

// Composed is text as every host surface reads it (composed): a computer's traposId that
// it changes lists as another one, and is reached by no name the host can type.
func Composed(text string) string { return composed(text) }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
