package cctext

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"trap-sandbox/internal/protocol"
)

// Paths take one escape more than text: \xNN (two hex digits) is the byte NN, so a name
// holding any byte can be typed, and ShowPath prints names in that form. A backslash never
// names a byte of a real path: CC: Tweaked turns every '\' of a path into '/'
// (FileSystem.sanitizePath, "Allow windowsy slashes"), so \xNN cannot clash with a name.

// PathToCC is a host path as CC bytes: \xNN is the byte NN, then the text rule (a byte that is
// not UTF-8 stands for itself; a character written decomposed is composed first, so e and
// U+0301 is é, the byte E9). A character above U+00FF is refused with bad_payload naming
// it, its place and the \xNN form of its UTF-8 bytes: replacing it with '?' would name
// another file (CC drops '?' from paths).
func PathToCC(p string) (string, error) {
	if isASCII(p) && !strings.Contains(p, `\x`) {
		return p, nil
	}
	p = composed(p)
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); {
		if b, ok := hexEscape(p[i:]); ok {
			out = append(out, b)
			i += 4
			continue
		}
		r, n := utf8.DecodeRuneInString(p[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, p[i])
		case r <= 0xFF:
			out = append(out, byte(r))
		default:
			return "", protocol.Errorf(protocol.CodeBadPayload,
				"%q (U+%04X) at character %d of the path %q is outside CC's character set, and a path cannot replace it "+
					"(CC drops '?' from paths); name its bytes with \\xNN, e.g. %s", string(r), r,
				utf8.RuneCountInString(p[:i])+1, p, hexEscapes(string(r)))
		}
		i += n
	}
	return string(out), nil
}

// PathWire is a host path as the wire string of its CC bytes.
func PathWire(p string) (string, error) {
	cc, err := PathToCC(p)
	if err != nil {
		return "", err
	}
	return protocol.WireOfBytes([]byte(cc)), nil
}

// ShowPath is CC path bytes as host text for a terminal: each byte its character, but control
// characters (C0, DEL, C1), '\', and the no-break space (A0) and soft hyphen (AD) as \xNN, the
// form PathToCC reads back. What `ls` prints is therefore a path every command accepts, and two
// names that differ never look alike (LooksLikeAnother, as ShowTraposID escapes them in a
// label): printed raw, a player's "startup.lua" and a soft hyphen listed as a second
// startup.lua, and a name of A0 and x (CC trims only ' ' from a name's start) as " x", which
// typed back named another file.
func ShowPath(cc []byte) string {
	var b strings.Builder
	for _, c := range cc {
		if isControl(rune(c)) || c == '\\' || LooksLikeAnother(rune(c)) {
			fmt.Fprintf(&b, `\x%02x`, c)
			continue
		}
		b.WriteRune(rune(c))
	}
	return b.String()
}

// ShowWirePath is ShowPath of a wire string (a name from fs.list); a code point above U+00FF,
// which no computer sends, is shown escaped as Show does.
func ShowWirePath(wire string) string {
	b, err := protocol.BytesOfWire(wire)
	if err != nil {
		return Show(wire, false)
	}
	return ShowPath(b)
}

// DroppedFromPaths are the characters CC's fs drops from a path before reading it
// (FileSystem.sanitizePath), with every byte below 32: "/new/?" is "/new", "/..?" is "/..".
// The one home of that rule (DropsFromPaths, PathName, DirectoryEnding).
const DroppedFromPaths = `"*:<>?|`

// DropsFromPaths reports whether CC's fs drops some of s's bytes from a path (a character of
// "*:<>?| or a control byte below 32), so that a message can say why a path reads otherwise.
func DropsFromPaths(s string) bool {
	return len(cleanPath(s)) != len(s)
}

// cleanPath is CC path bytes without those CC's fs drops (bytes, not runes: a CC string
// need not be UTF-8).
func cleanPath(cc string) string {
	var b strings.Builder
	for i := 0; i < len(cc); i++ {
		if c := cc[i]; c >= 32 && strings.IndexByte(DroppedFromPaths, c) < 0 {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// NamesItself reports whether cc, one name (CC's bytes) of a directory, is the name CC's fs
// reads it as (ccName): nothing dropped ("*:<>?| and control bytes), no space around it
// trimmed, not cut at maxNameBytes, no separator ('/' or '\'), not "." or dots alone. A name
// that is not may still be on a drive (a file put there from outside CC: fs.list lists it),
// but no path reaches it: its path reads another file, or none. The one rule of a name that
// a copy between a computer and the host keeps (get -r, put -r).
func NamesItself(cc string) bool {
	return !strings.ContainsAny(cc, `/\`) && ccName(cc) == cc && strings.Trim(cc, ".") != ""
}

// ReadsAnother is the path that p, a host path, reads instead of the one it names (StoredPath)
// when one of its names is not one CC's fs reads as it is (NamesItself; "." and "..", which
// it resolves, aside): a read of /d/a\x01b.txt reads /d/ab.txt, whatever a listing of /d
// lists. ok is false for a path each of whose names names itself.
func ReadsAnother(p string) (stored string, ok bool) {
	cc, err := PathToCC(p)
	if err != nil {
		return "", false
	}
	for _, name := range strings.Split(cc, "/") {
		if name != "" && name != "." && name != ".." && !NamesItself(name) {
			return StoredPath(p), true
		}
	}
	return "", false
}

// Unreachable says, for a message about a name that is not NamesItself's, what it means and
// what to do: the one fix, said where the name is listed (ls, list_files, get -r) or read.
const Unreachable = "no program on the computer can open this one (rename it on the drive, outside CC)"

// NameRules says, for a message, what NamesItself's rule takes from a name.
const NameRules = "CC's fs drops control characters and " + DroppedFromPaths + " from a path and trims the spaces around a name"

// maxNameBytes is where CC's fs cuts a longer name (its spaces then trimmed again).
const maxNameBytes = 255

// ccName is one part of a CC path (between slashes) as CC's fs reads it: without the
// characters it drops, spaces around it trimmed (only ' ': CC's bytes 0x85 and 0xA0 are no
// spaces to it), cut at maxNameBytes.
func ccName(part string) string {
	name := strings.Trim(cleanPath(part), " ")
	if len(name) >= maxNameBytes {
		name = strings.Trim(name[:maxNameBytes], " ")
	}
	return name
}

// ResolvePath is a CC path as CC's fs resolves it (FileSystem.sanitizePath): its names from
// the root, in order. '\' is a slash too; the characters "*:<>?| and bytes below 32 are
// dropped; a name is read with the spaces around it trimmed; "", "." and names of three dots
// or more ("...") name nothing, and ".." takes the name before it. A path that climbs above
// the root keeps its leading ".." names, as CC does before it refuses the path ("Invalid
// Path"). The one home of CC's path resolution (PathName; the test computer's fs).
func ResolvePath(cc string) []string {
	var names []string
	for _, part := range strings.Split(strings.ReplaceAll(cc, `\`, "/"), "/") {
		switch name := ccName(part); {
		case name == ".." && len(names) > 0 && names[len(names)-1] != "..":
			names = names[:len(names)-1]
		case name != ".." && strings.Trim(name, ".") == "":
		default:
			names = append(names, name)
		}
	}
	return names
}

// StoredPath is a host path (PathToCC's text) as the computer stores a file there, as host
// text (ShowPath), the path to read it back by: CC's fs drops "*:<>?| from names, trims and
// cuts them, and resolves "." and ".." ("/we:ird*name?.lua" is "/weirdname.lua"). A path
// PathToCC refuses is returned as it is (no file can be stored there).
func StoredPath(p string) string {
	cc, err := PathToCC(p)
	if err != nil {
		return p
	}
	return ShowPath([]byte("/" + strings.Join(ResolvePath(cc), "/")))
}

// PathName is the name of what a CC path reaches, as ResolvePath resolves it, and so the name
// the computer gives that file. It is "" for the root and for a path that climbs above it.
func PathName(cc string) string {
	names := ResolvePath(cc)
	if len(names) == 0 || names[0] == ".." {
		return "" // the root, or above it: CC refuses such a path ("Invalid Path")
	}
	return names[len(names)-1]
}

// DirectoryEnding reports how a CC path below the root ends when it can only name a
// directory, whatever the drive holds: in a slash ('\' is one), or in a name PathName
// passes over (".", "...", or what is nothing once CC dropped its characters: "?") or that
// climbs ("..", "..?"); the ending is returned as typed, spaces around it trimmed. It is the
// one rule of such paths: the file routes refuse to write one (it names no file) and the
// CLI's put writes into it, as cp does. The root itself ("", "/", "/?") is not reported: it
// names a directory that is always there.
func DirectoryEnding(cc string) (string, bool) {
	if strings.Trim(cleanPath(cc), `/\ `) == "" {
		return "", false
	}
	i := strings.LastIndexAny(cc, `/\`)
	typed := strings.Trim(cc[i+1:], " ")
	switch last := ccName(typed); {
	case last == "" && typed == "" && i >= 0:
		return cc[i : i+1], true
	case strings.Trim(last, ".") == "":
		return typed, true
	}
	return "", false
}

// hexEscape reads \xNN at the start of s.
func hexEscape(s string) (byte, bool) {
	if len(s) < 4 || s[0] != '\\' || (s[1] != 'x' && s[1] != 'X') {
		return 0, false
	}
	return HexByte(s[2:])
}

// HexByte reads the byte that two hex digits (either case) at the start of s write: the NN
// of a path's \xNN and of a URI's %NN.
func HexByte(s string) (byte, bool) {
	if len(s) < 2 {
		return 0, false
	}
	hi, ok1 := hexDigit(s[0])
	lo, ok2 := hexDigit(s[1])
	return hi<<4 | lo, ok1 && ok2
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// hexEscapes is s's bytes in the \xNN form.
func hexEscapes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\x%02X`, s[i])
	}
	return b.String()
}
