package computer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// Ping is ping's answer.
type Ping struct {
	// TraposID is the id the computer answered with.
	TraposID string
	// RoundTrip is how long the answer took.
	RoundTrip time.Duration
}

// Ping checks that a computer answers.
func (c *Client) Ping(ctx context.Context, traposID string, timeout time.Duration) (Ping, error) {
	var ans struct {
		TraposID string `json:"traposId"`
	}
	start := time.Now()
	if err := c.call(ctx, traposID, protocol.TypePing, struct{}{}, bound(timeout, DefaultTimeout), &ans); err != nil {
		return Ping{}, err
	}
	return Ping{TraposID: ans.TraposID, RoundTrip: time.Since(start)}, nil
}

// Peripheral is a peripheral attached to a computer.
type Peripheral struct {
	Name  string   `json:"name"`
	Types []string `json:"types"`
}

// Info is computer.info's answer (docs/capabilities.md), its strings as host text.
type Info struct {
	TraposID      string  `json:"traposId"`
	ID            int64   `json:"id"`
	Label         string  `json:"label,omitempty"`
	Host          string  `json:"host"`
	ClientVersion string  `json:"clientVersion"`
	Uptime        float64 `json:"uptime" jsonschema:"seconds since the computer started (os.clock)"`
	Day           int64   `json:"day" jsonschema:"the in-game day"`
	Time          float64 `json:"time" jsonschema:"the in-game time of day, 0 to 24"`
	// FreeSpace is bytes free on the root drive, or the string "unlimited".
	FreeSpace   any          `json:"freeSpace" jsonschema:"bytes free on the computer's drive, or \"unlimited\""`
	Colour      bool         `json:"colour" jsonschema:"whether the terminal shows colour"`
	Peripherals []Peripheral `json:"peripherals"`
	// Pocket, the screen's size and Allowed came in client 0.5.15: an older client's answer
	// has none of them, which reads as not reported (nil, 0), never as false or none.
	Pocket       *bool    `json:"pocket,omitempty" jsonschema:"whether it is a pocket computer (absent: its client is older than 0.5.15 and does not say)"`
	ScreenWidth  int      `json:"screenWidth,omitempty" jsonschema:"its screen's width in characters (51 on a computer, 26 on a pocket computer; absent: not reported)"`
	ScreenHeight int      `json:"screenHeight,omitempty" jsonschema:"its screen's height in characters (19 on a computer, 20 on a pocket computer; absent: not reported)"`
	Allowed      *Allowed `json:"allowed,omitempty" jsonschema:"what the computer's owner allows now (absent: its client is older than 0.5.15 and does not say)"`
	// NotUnderstood names each field of the answer of a type no client sends (a hostile or
	// altered client's "pocket":"yes"), with what it must be; the field is left out and the
	// rest shown. It is this client's, never the computer's: readInfo drops a field of its name.
	NotUnderstood []string `json:"notUnderstood,omitempty" jsonschema:"fields of the computer's answer of a type no TrapOS client sends, each with what it must be: they are left out, and a traposId other than the one asked is shown as asked (absent: every field was understood)"`
	// misread are the top-level fields NotUnderstood names (allowed for "allowed.files").
	misread []string
	// asked is the traposId Client.Info asked (the socket's), which Relabelled speaks of.
	asked string
}

// Allowed is what a computer's owner allows the host now, as the computer's one refusal
// check reads its settings (docs/capabilities.md): a hand-edited value it takes as none or
// false is none or false here.
type Allowed struct {
	Files  string `json:"files" jsonschema:"sandbox.allow_files as it applies: none, read or write"`
	Exec   bool   `json:"exec" jsonschema:"sandbox.allow_exec as it applies: whether Lua and programs may run"`
	Screen string `json:"screen" jsonschema:"sandbox.allow_screen as it applies: none, view or control"`
}

// The levels Allowed.Screen takes (libsandboxsettings'), and the lines the owner types in game
// to allow seeing and typing on the screen: the host-side views act on them (the CLI's screen
// view), and the agent is told them (internal/agent).
const (
	ScreenNone         = "none"
	ScreenView         = "view"
	ScreenControl      = "control"
	AllowScreenView    = allowScreen + ScreenView
	AllowScreenControl = allowScreen + ScreenControl
)

// The levels Allowed.Files takes (libsandboxsettings'), and the lines the owner types in game
// to allow more: Allows says them, and so does the agent's text (internal/agent).
const (
	FilesNone       = "none"
	FilesRead       = "read"
	FilesWrite      = "write"
	AllowFilesRead  = allowFiles + FilesRead
	AllowFilesWrite = allowFiles + FilesWrite
	AllowExec       = "set sandbox.allow_exec true"
)

const (
	allowFiles  = "set sandbox.allow_files "
	allowScreen = "set sandbox.allow_screen "
	notReported = "not reported (the computer's client is older than 0.5.15: a refused request names the setting it needs)"
)

// Kind says what kind of computer it is and its screen's size: "a computer, its screen 51x19
// characters", "a pocket computer, its screen 26x20 characters", a basic one's with what it
// lacks, or not reported (not known when its answer's pocket was not understood).
func (i Info) Kind() string {
	if i.Pocket == nil {
		return i.unsaid(infoPocket)
	}
	kind := "a computer"
	if *i.Pocket {
		kind = "a pocket computer"
	}
	if !i.Colour && !slices.Contains(i.misread, infoColour) {
		// An agent planned paint, or a menu in red, on a screen of greys.
		kind = "a basic" + strings.TrimPrefix(kind, "a") + " (" + basicLacks + ")"
	}
	if i.ScreenWidth > 0 && i.ScreenHeight > 0 {
		kind += fmt.Sprintf(", its screen %dx%d characters", i.ScreenWidth, i.ScreenHeight)
	}
	return kind
}

// basicLacks is what a basic (not advanced) computer lacks, as CC: Tweaked's: colour (it draws
// colours as greys), the mouse, and the advanced programs (paint, multishell, bg, fg).
const basicLacks = "no colour: it draws colours as greys; no mouse, paint or multishell"

// Allows says what the owner allows, one line each for files, exec and the screen, each with
// what more needs and the line the owner types in game to allow it: "files: read (writes
// need: set sandbox.allow_files write)", then whose settings these are in an agent's words
// (OwnersSettings; MCP's computer_info). An older client's answer is one not-reported line.
func (i Info) Allows() []string { return i.allows(OwnersSettings) }

// AllowsForAPerson is Allows in a person's words (OwnersSettingsForAPerson; trap-sandbox
// info): the agent's order not to change the settings itself read oddly at the CLI.
func (i Info) AllowsForAPerson() []string { return i.allows(OwnersSettingsForAPerson) }

// allows is Allows with whose settings these are said as whose (one of the OwnersSettings).
func (i Info) allows(whose string) []string {
	a := i.Allowed
	if a == nil {
		return []string{i.unsaid(infoAllowed)}
	}
	var files string
	switch a.Files {
	case FilesWrite:
		files = "files: write"
		if !a.Exec {
			files += " (except the settings, the startup files and the sandbox's own, which need: " + AllowExec + ")"
		}
	case FilesRead:
		files = "files: read (writes need: " + AllowFilesWrite + ")"
	case FilesNone:
		files = "files: none (reads need: " + AllowFilesRead + "; writes: " + AllowFilesWrite + ")"
	default:
		files = "files: " + unknownLevel(a.Files, FilesNone+", "+FilesRead+" or "+FilesWrite)
	}
	exec := "exec: yes (Lua and programs may run)"
	if !a.Exec {
		exec = "exec: no (running Lua or programs needs: " + AllowExec + ")"
	}
	var screen string
	switch a.Screen {
	case ScreenControl:
		screen = "screen: control (it may be seen and typed on)"
	case ScreenView:
		screen = "screen: view (typing on it needs: " + AllowScreenControl + ")"
	case ScreenNone:
		screen = "screen: none (seeing it needs: " + AllowScreenView + "; typing: " + AllowScreenControl + ")"
	default:
		screen = "screen: " + unknownLevel(a.Screen, ScreenNone+", "+ScreenView+" or "+ScreenControl)
	}
	return []string{files, exec, screen, "(" + whose + ")"}
}

// ownersSettingsFact is whose the settings that allow the host's calls are, the fact every
// reader is told in its own words (OwnersSettings, OwnersSettingsForAPerson).
const ownersSettingsFact = "these are the owner's settings: only the owner changes them, in game"

// OwnersSettings is what an agent is told of the settings that allow its calls, wherever it
// reads them (computer_info's allows, the ai agent's system text, MCP's note after a forbidden
// answer): with sandbox.allow_exec true its own run_lua could settings.set them, and
// write_file rewrite /.settings, and with sandbox.allow_screen control its send_text could
// type the set line a refusal names at the shell (an agent did, and ran what had been
// refused), so it is told not to, and whom to ask instead.
const OwnersSettings = ownersSettingsFact + "; " +
	"never change them yourself, not by typing set at its shell, with settings.set in run_lua nor by writing /.settings: ask the player"

// OwnersSettingsForAPerson is the same fact for a person at the host (trap-sandbox info), who
// is told how the owner changes them rather than ordered, as a model is, to keep its hands off.
const OwnersSettingsForAPerson = ownersSettingsFact + ", with set at the computer's shell"

// shownLevelBytes bounds a level no client sends as Allows shows it.
const shownLevelBytes = 64

// unknownLevel words a level no client sends (its own check reads a hand-edited setting as
// none, and says none): a hostile or altered client's, shown by the text rule and cut, since
// the line goes to a terminal and to an agent; it is not believed either way.
func unknownLevel(level, levels string) string {
	return fmt.Sprintf(`not known ("%s" is not %s: the computer's own check decides)`,
		cctext.Show(cctext.Clip(level, shownLevelBytes), false), levels)
}

// unsaid is what Kind and Allows say of a field the answer has not: not known when it came of
// a type no client sends (named in NotUnderstood), else not reported (an older client).
func (i Info) unsaid(field string) string {
	if slices.Contains(i.misread, field) {
		return "not known (the computer's " + field + " was not understood: " + notUnderstoodField + " says why)"
	}
	return notReported
}

// Relabelled says, when the computer's label is no longer the one its traposId (the one
// Client.Info asked, the socket's) was made of, what becomes of that id: its daemon looks for
// a new label every 15 s (CC fires no event for one), then says hello again under the new id
// (docs/protocol.md, bye's relabelled). "" when they agree. An agent that typed label set read
// traposId 8:door and label "gate" in one answer, with no word of which to use, and was
// answered not_connected asking by either one in turn. The answer's own traposId is the
// computer's word, never this note's: made of it, a computer answering as 3:vault had the
// gateway say that 3:vault was going away and to ask 3:pantry instead, another computer's id
// (the same computer id only, as gateway.RelabelledTo keeps a bye's).
func (i Info) Relabelled() string {
	session := cmp.Or(i.asked, i.TraposID)
	id, label, ok := strings.Cut(session, ":")
	if !ok || label == i.Label {
		return ""
	}
	if problem := cctext.TraposIDProblem(id + ":" + i.Label); problem != "" {
		// A label the gateway refuses in hello (a control character, too long): the computer
		// leaves its id and connects under none, and "ask it by the new id" would be wrong.
		return fmt.Sprintf("its label changed since it connected as %s, to one the gateway refuses: within %d s it says hello again under the new label "+
			"(its daemon looks for a new label every %d s), which is refused (its traposId %s), and from then on it is not connected at all "+
			"until its owner gives it another label (label set on the computer)",
			cctext.ShowTraposID(session), relabelCheckSeconds, relabelCheckSeconds, problem)
	}
	// ", so" and never ":" after the old id: an unlabelled computer's ends in ':' (5:), and
	// "connected as 5:: within" read as a typo.
	return fmt.Sprintf("its label changed since it connected as %s, so within %d s it connects again as %s (its daemon looks for a new label every %d s, "+
		"as CC has no event for one), and %s is not connected from then on: ask it by the new id then",
		cctext.ShowTraposID(session), relabelCheckSeconds, cctext.ShowTraposID(id+":"+i.Label), relabelCheckSeconds, cctext.ShowTraposID(session))
}

// RelabelledByRun says, after a run on computer traposID that did not turn it off (lua.exec,
// shell.run), whether the computer's label is no longer its traposId's (Info.Relabelled), or
// the new id of a computer that already said bye relabelled (its not_connected's words); ""
// when neither, or when it cannot be asked. A run's answer said nothing of a label it set
// (os.setComputerLabel, label set): an agent learnt it only from computer_info, or from its
// next call to the old id. CC fires no event for a label and the daemon looks for one every
// 15 s, so its bye comes after the run's answer: this asks computer.info, which every client
// answers whatever its owner allows. The one home of that note (MCP's run tools and typing
// tools, the CLI's exec and run). It waits at most RelabelCheckTimeout, and a computer that went is not looked
// for among the connected ones (the bare not_connected, as PingBare's): the run's answer waits
// for it.
func (c *Client) RelabelledByRun(ctx context.Context, traposID string) string {
	info, err := c.Info(context.WithValue(ctx, bareKey{}, true), traposID, RelabelCheckTimeout)
	if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.RelabelledTo != "" {
		return pe.Message
	}
	if err != nil {
		return ""
	}
	return info.Relabelled()
}

// RelabelCheckTimeout bounds RelabelledByRun's computer.info. Its note is optional and the
// run's answer waits for it: with the default 10 s, a computer slow to answer (busy with what
// the run left behind, or gone with its socket still open) held a finished run's answer up to
// 10 s more, for a note it then did not give. A computer that is there answers computer.info
// at once (it reads a few values); one that has not within this leaves the answer without the
// note, and nothing else of it.
const RelabelCheckTimeout = 2 * time.Second

// relabelCheckSeconds is how often a computer's daemon looks at its label
// (libsandboxdaemon's LABEL_CHECK_INTERVAL).
const relabelCheckSeconds = 15

// Names of computer.info's fields that Kind and Allows read, and of Info's own.
const (
	infoPocket         = "pocket"
	infoColour         = "colour"
	infoAllowed        = "allowed"
	notUnderstoodField = "notUnderstood"
)

// shownWhyBytes bounds each NotUnderstood line: a number of the wrong size is quoted in it as
// the computer wrote it, which may be 100 KiB of digits.
const shownWhyBytes = 160

// Info asks a computer for its identity and state. A field of the wrong type (a hostile or
// altered client's) is left out and named in NotUnderstood: the rest is shown.
func (c *Client) Info(ctx context.Context, traposID string, timeout time.Duration) (Info, error) {
	var fields map[string]json.RawMessage
	if err := c.call(ctx, traposID, protocol.TypeComputerInfo, struct{}{}, bound(timeout, DefaultTimeout), &fields); err != nil {
		return Info{}, err
	}
	out, err := readInfo(fields)
	if err != nil {
		e := protocol.Errorf(protocol.CodeInternal, "computer %s answered %s with a payload this client cannot read: %s", c.shownID(traposID), protocol.TypeComputerInfo, unreadable(err))
		e.Attributed = true // the gateway relayed the answer; this client could not read it
		return Info{}, e
	}
	if out.Peripherals == nil {
		out.Peripherals = []Peripheral{}
	}
	// Every client answers with the traposId of its socket, the one asked: another is a hostile
	// or altered client's word, which a list of the computer's fields showed as its id (an
	// operator or an agent then asked that computer). It is named with the fields not
	// understood, and the id shown is the one asked. The id asked is read in the form c's
	// callers give it: read as typed, MCP's 7:a\x41 (a label's own backslash) was 7:aA, and an
	// honest computer was named for answering as another, and every run on it said it had
	// been relabelled.
	out.asked = c.listedID(traposID)
	if got := cctext.ListedTraposID(out.TraposID); got != out.asked {
		out.NotUnderstood = append(out.NotUnderstood, cctext.Clip(fmt.Sprintf(`"traposId" must be the one it was asked by, %s (got "%s"): shown as asked`,
			cctext.ShowTraposID(out.asked), cctext.ShowTraposID(got)), shownWhyBytes))
		out.TraposID = out.asked
	}
	return out, nil
}

// readInfo decodes computer.info's answer field by field: a field of a type no client sends
// is left out and named in NotUnderstood, by its name and what it must be ("\"pocket\" must be
// true or false (got a string)"); one such field made the whole answer unreadable, so an
// operator and an agent saw none of the rest. A field of Info's NotUnderstood's own name is
// the computer's and dropped. Each round leaves out at least one field, so it ends.
func readInfo(fields map[string]json.RawMessage) (Info, error) {
	dropField(fields, notUnderstoodField)
	var notUnderstood, misread []string
	for {
		var out Info
		raw, err := json.Marshal(fields)
		if err != nil {
			return Info{}, err
		}
		err = json.Unmarshal(raw, &out)
		why, isFieldType := server.FieldTypeError(err)
		if err == nil || !isFieldType {
			out.NotUnderstood, out.misread = notUnderstood, misread
			return out, err
		}
		te, _ := errors.AsType[*json.UnmarshalTypeError](err) // FieldTypeError found one
		top, _, _ := strings.Cut(te.Field, ".")
		if !dropField(fields, top) {
			return Info{}, err
		}
		notUnderstood = append(notUnderstood, cctext.Clip(why, shownWhyBytes))
		misread = append(misread, top)
	}
}

// dropField deletes the fields named name as encoding/json matches them (in any case) and
// reports whether there was one.
func dropField(fields map[string]json.RawMessage, name string) bool {
	found := false
	for key := range fields {
		if strings.EqualFold(key, name) {
			delete(fields, key)
			found = true
		}
	}
	return found
}

// Entry is one directory entry; Name is host text (cctext.ShowPath makes it a path argument).
type Entry struct {
	Name  string `json:"name"`
	IsDir bool   `json:"isDir"`
	Size  int64  `json:"size"`
	// ReadsAs, for a name no path on the computer reaches (cctext.NamesItself: a file put on
	// its drive from outside CC, a\x01b.txt beside ab.txt), is the path its path reads
	// instead, another file or none (/d/ab.txt): the computer's IsDir and Size are that one's.
	ReadsAs string `json:"readsAs,omitempty" jsonschema:"set for a name no path on the computer reaches (one put on its drive from outside CC): the path its path reads instead, another file or none, whose isDir and size these are"`
}

// List lists the directory at path (a host path: cctext.PathToCC).
func (c *Client) List(ctx context.Context, traposID, path string, timeout time.Duration) ([]Entry, error) {
	return c.list(ctx, traposID, path, bound(timeout, DefaultTimeout))
}

func (c *Client) list(ctx context.Context, traposID, path string, timeout time.Duration) ([]Entry, error) {
	wire, err := cctext.PathWire(path)
	if err != nil {
		return nil, err
	}
	var ans struct {
		Entries []Entry `json:"entries"`
	}
	if err := c.call(ctx, traposID, protocol.TypeFSList, map[string]any{"path": wire}, timeout, &ans); err != nil {
		return nil, err
	}
	dir := cctext.StoredPath(path)
	for i, e := range ans.Entries {
		if ans.Entries[i].Name, err = cctext.FromWire(e.Name); err != nil {
			return nil, protocol.Errorf(protocol.CodeInternal, "fs.list of %s on %s: %v", path, traposID, err)
		}
		if cc, err := protocol.BytesOfWire(e.Name); err == nil && !cctext.NamesItself(string(cc)) {
			ans.Entries[i].ReadsAs = cctext.StoredPath(strings.TrimSuffix(dir, "/") + "/" + ans.Entries[i].Name)
		}
	}
	if ans.Entries == nil {
		ans.Entries = []Entry{}
	}
	return ans.Entries, nil
}

// Delete deletes the file or directory (with all it holds) at path.
func (c *Client) Delete(ctx context.Context, traposID, path string, timeout time.Duration) error {
	return rootDeleteExplained(romExplained(c.delete(ctx, traposID, path, bound(timeout, DefaultTimeout)), romDeleteFix, path), path)
}

// rootDeleteExplained is err with why, and what to do, after CC's "/: Access denied" to a
// delete of the root: the root cannot be removed, but what it holds can. The bare refusal
// read as a permission the owner withheld, of an owner whose sandbox.allow_files write had
// let it through. Made on the host, as romExplained's, for every client version.
func rootDeleteExplained(err error, path string) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || !pe.ByComputer || pe.Code != protocol.CodeFSError || cctext.StoredPath(path) != "/" || pe.Message != "/: "+accessDenied {
		return err
	}
	return pe.WithHostWords("", " (the computer's root, /, cannot itself be deleted, whatever its owner allows: delete what it holds, each by its own path; /rom stays, the computer's read-only ROM)")
}

// accessDenied is CC's refusal to change a read-only place: /rom, the computer's ROM (or a
// read-only disk). It says no more, and reads as a permission the owner could give.
const accessDenied = "Access denied"

// What to do instead of changing /rom, as romExplained says it after why ("" for nothing).
const (
	romWriteFix  = "write the file outside /rom"
	romDeleteFix = ""
	romMkdirFix  = "make the directory outside /rom"
	romMoveFix   = "to change one of its files, read it and write the copy outside /rom"
)

// romExplained is err with why, and what to do (fix), after CC's "Access denied"
// (accessDenied) when one of paths, as the computer resolves it, is in /rom: CC's fs answers
// so for any change of the computer's ROM, and the owner's sandbox.allow_files write, which
// let the request through, is all a setting can give. The computer's own words stay in
// front, so that a caller comparing CC's words (the HTTP API's status) still finds them.
// Made on the host, so that every client version's answer says it.
func romExplained(err error, fix string, paths ...string) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || !pe.ByComputer || pe.Code != protocol.CodeFSError || !strings.HasSuffix(pe.Message, accessDenied) {
		return err
	}
	for _, p := range paths {
		if InROM(p) {
			why := " (/rom is the computer's read-only ROM, which nothing on the computer can change"
			if fix != "" {
				why += ": " + fix
			}
			return pe.WithHostWords("", why+")")
		}
	}
	return err
}

// fileInTheWayExplained is err with why after CC's refusal to make path (a file written, a
// directory made, a move's target) where a name on the way to it is a file. CC names the
// directory it could not make, not the file: "/door.lua: File exists" for /door.lua/x.lua,
// whose directory /door.lua is a file, read as a file already at the path asked for (which
// an agent may delete to make room), and "/door.lua/a: Access denied" for /door.lua/a/b.lua,
// a file further up, as a permission the owner withheld. A "File exists" of a directory on
// the way can only be so; an "Access denied" outside /rom is so unless the drive is read-only,
// and the words say both. Made on the host, as romExplained's, for every client version.
func fileInTheWayExplained(err error, path string) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || !pe.ByComputer || pe.Code != protocol.CodeFSError || InROM(path) {
		return err
	}
	target := cctext.StoredPath(path)
	if named, ok := strings.CutSuffix(pe.Message, ": File exists"); ok && named != "/" && strings.HasPrefix(target, named+"/") {
		return pe.WithHostWords("", " (it is a file, not a directory, so "+target+" cannot be made inside it)")
	}
	if named, ok := strings.CutSuffix(pe.Message, ": "+accessDenied); ok && (named == target || strings.HasPrefix(target, named+"/")) {
		return pe.WithHostWords("", " (outside /rom CC answers so when a name on the way to "+target+
			" is a file, not a directory, as nothing can be made inside a file, or when its drive is read-only)")
	}
	return err
}

// invalidPath is CC's refusal of a path that climbs above the computer's root with ".."
// ("/../x: Invalid Path"): the only path its fs refuses so, and it says nothing of why.
const invalidPath = "Invalid Path"

// aboveRootExplained is err with why after CC's "Invalid Path" (invalidPath): an agent or a
// player who typed "../x" or "/../.." read only that the path was wrong. The computer's
// words stay in front, as romExplained keeps them; made on the host (Client.send, the one
// path of every request), so that every tool and every client version says it.
func aboveRootExplained(err error) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || !pe.ByComputer || pe.Code != protocol.CodeFSError || !strings.HasSuffix(pe.Message, invalidPath) {
		return err
	}
	return pe.WithHostWords("", " (a path cannot go above the computer's root: each .. takes away the name before it, and / has none above it)")
}

// InROM reports whether path, as the computer resolves it (cctext.StoredPath), is /rom or in
// it: the computer's read-only ROM, which nothing on the computer can change.
func InROM(path string) bool {
	stored := cctext.StoredPath(path)
	return stored == "/rom" || strings.HasPrefix(stored, "/rom/")
}

func (c *Client) delete(ctx context.Context, traposID, path string, timeout time.Duration) error {
	wire, err := cctext.PathWire(path)
	if err != nil {
		return err
	}
	return c.call(ctx, traposID, protocol.TypeFSDelete, map[string]any{"path": wire}, timeout, nil)
}

// Move moves or renames from to to; to must not exist.
func (c *Client) Move(ctx context.Context, traposID, from, to string, timeout time.Duration) error {
	wireFrom, err := cctext.PathWire(from)
	if err != nil {
		return err
	}
	wireTo, err := cctext.PathWire(to)
	if err != nil {
		return err
	}
	// timeout bounds the move and, when it is refused, the look at what is at to.
	ctx, cancel := context.WithTimeout(ctx, bound(timeout, DefaultTimeout))
	defer cancel()
	err = c.call(ctx, traposID, protocol.TypeFSMove, map[string]any{"from": wireFrom, "to": wireTo}, remaining(ctx), nil)
	fix := "move it outside /rom"
	if InROM(from) {
		fix = romMoveFix
	}
	err = romExplained(fileInTheWayExplained(movePathNamed(err, from, to), to), fix, from, to)
	if err = c.intoDirectoryExplained(ctx, traposID, err, from, to); err != nil {
		return c.copiedExplained(ctx, traposID, err, from, to)
	}
	return nil
}

// copiedExplained is a move's err with what became of it after CC's "<from>: Access denied"
// when to is there now: CC moves across drives by copying, then deleting from, and refuses to
// delete a drive's mount point (a disk's /disk), so moving /disk to /backup made /backup, a
// whole copy, and kept /disk; an agent read only a refusal, and that nothing was moved. Any
// refusal before the copy (to already there, a read-only side) leaves to as it was, so to
// being there now says the copy was made. It looks at to (one fs.list) only after that
// refusal; a look that fails leaves err as it was.
func (c *Client) copiedExplained(ctx context.Context, traposID string, err error, from, to string) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || !pe.ByComputer || pe.Code != protocol.CodeFSError || InROM(from) {
		return err
	}
	refused := cctext.StoredPath(from) + ": " + accessDenied // CC's delete's refusal, of from alone
	if _, said, _ := pe.Said(); pe.Message != refused || said != refused {
		return err
	}
	kind, lookErr := c.kindOf(ctx, traposID, to, remaining(ctx))
	if lookErr != nil || kind == kindNothing {
		return err
	}
	return pe.WithHostWords("", " (CC moves to another drive by copying, then deleting what it moved, and "+cctext.StoredPath(from)+
		" could not be deleted: a drive's mount point, such as a disk's, never can be; the copy is at "+cctext.StoredPath(to)+
		", and "+cctext.StoredPath(from)+" is as it was)")
}

// intoDirectoryExplained is a move's err with what to do after CC's "File exists" when to is
// a directory: a move names the new path itself, but mv moves into a directory, and an agent
// that moved /door.lua to /programs read only "/programs: File exists", of a directory. It
// looks at what to names (one fs.list) only once the move was refused so; a look that fails
// leaves err as it was.
func (c *Client) intoDirectoryExplained(ctx context.Context, traposID string, err error, from, to string) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || !pe.ByComputer || pe.Code != protocol.CodeFSError || !strings.HasSuffix(pe.Message, ": File exists") {
		return err
	}
	if _, said, _ := pe.Said(); said != "File exists" { // CC's move's own refusal, which names no path
		return err
	}
	kind, lookErr := c.kindOf(ctx, traposID, to, remaining(ctx))
	if lookErr != nil || kind != kindDirectory {
		return err
	}
	dir := strings.TrimSuffix(cctext.StoredPath(to), "/")
	return pe.WithHostWords("", " (a directory: a move names the new path itself, not a directory to move into: to move it into "+
		cctext.StoredPath(to)+", name its path there, "+dir+"/"+path.Base(cctext.StoredPath(from))+")")
}

// movePathNamed names the path of fs.move's refusals that CC words without one (its
// FileSystem.move: "No such file", "File exists"), as every other fs error names it: a missing
// file can only be from, an existing one only to, each as the computer resolves it
// (cctext.StoredPath: "door.lua" is /door.lua, "" the root, as other fs errors say; "" read
// ": File exists"). A refusal that can be of either ("Access denied": from or to in /rom;
// "Can't move a directory inside itself") names the move ("moving /rom/x to /y: Access
// denied"): alone, it named nothing the caller could look at.
func movePathNamed(err error, from, to string) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || !pe.ByComputer || pe.Code != protocol.CodeFSError {
		return err
	}
	switch pe.Message {
	case "No such file":
		return pe.WithHostWords(cctext.StoredPath(from)+": ", "")
	case "File exists":
		return pe.WithHostWords(cctext.StoredPath(to)+": ", "")
	case accessDenied, "Can't move a directory inside itself":
		return pe.WithHostWords("moving "+cctext.StoredPath(from)+" to "+cctext.StoredPath(to)+": ", "")
	}
	return err
}

// MakeDir makes a directory and its missing parents.
func (c *Client) MakeDir(ctx context.Context, traposID, path string, timeout time.Duration) error {
	wire, err := cctext.PathWire(path)
	if err != nil {
		return err
	}
	err = c.call(ctx, traposID, protocol.TypeFSMakeDir, map[string]any{"path": wire}, bound(timeout, DefaultTimeout), nil)
	return romExplained(fileInTheWayExplained(err, path), romMkdirFix, path)
}

// Exec is lua.exec's answer, its text as host text.
type Exec struct {
	// Returns are the chunk's return values, made JSON-safe by the computer.
	Returns []json.RawMessage `json:"returns"`
	// Output is what the chunk printed.
	Output string `json:"output"`
	// OutputTruncated is set when the chunk printed more than the computer keeps (16 KiB).
	OutputTruncated bool `json:"outputTruncated,omitempty"`
	// Error is set when the chunk raised: its message, with the position.
	Error string `json:"error,omitempty"`
	// PowerOff is set when the chunk called os.shutdown or os.reboot (PowerOffShutdown,
	// PowerOffReboot): it ran, and the computer answered as it turned off.
	PowerOff string `json:"powerOff,omitempty"`
	// Warnings are the characters of the code CC's charset could not hold (sent as '?').
	Warnings []cctext.Replacement `json:"warnings,omitempty"`
}

// OutputCutNote says where the computer cut a run's output (OutputTruncated: it keeps 16 KiB,
// docs/capabilities.md), which the output does not show: the rows before the cut and those
// after it read as one run of lines (line 1438, then line 2982). readWith is how the caller's
// surface reads a file back (MCP's read_file, the CLI's trap-sandbox get), so every surface
// says the same where it is cut.
func OutputCutNote(readWith string) string {
	return "output was cut: it holds the first rows that scrolled off the run's screen, then its final screen; " +
		"the rows printed between them are left out (a run keeps at most 16 KiB of what it prints): " +
		"print less, or write it to a file on the computer and read that with " + readWith
}

// A run's PowerOff: the code turned the computer off, or restarted it.
const (
	PowerOffShutdown = "shutdown"
	PowerOffReboot   = "reboot"
)

// shownPowerOffBytes bounds a powerOff no client sends, as PowerOffNote shows it.
const shownPowerOffBytes = 64

// PowerOffNote says what a run's powerOff means for whoever asked: the code ran, and where
// the computer is now. "" when the run left the computer on.
func PowerOffNote(traposID, powerOff string) string {
	id := cctext.ShowTraposID(traposID)
	switch powerOff {
	case "":
		return ""
	case PowerOffReboot:
		return "computer " + id + " is rebooting: the code called os.reboot(); it connects again by itself within seconds"
	case PowerOffShutdown:
		return "computer " + id + " is shutting down: the code called os.shutdown(); it stays off until a player turns it on in game"
	}
	// Another word is a newer or a hostile client's: shown as the computer's other strings are.
	return "computer " + id + " is turning off (" + cctext.Show(cctext.Clip(powerOff, shownPowerOffBytes), false) + ")"
}

// Exec runs a Lua chunk (host text) on a computer as its lua prompt would.
func (c *Client) Exec(ctx context.Context, traposID, code string, timeout time.Duration) (Exec, error) {
	wire, reps := cctext.Wire("code", code)
	var out Exec
	if err := c.run(ctx, traposID, protocol.TypeLuaExec, map[string]any{"code": wire}, timeout, &out); err != nil {
		return Exec{Warnings: reps}, err
	}
	var err error
	if out.Output, err = c.text(traposID, protocol.TypeLuaExec, out.Output); err == nil {
		out.Error, err = c.text(traposID, protocol.TypeLuaExec, out.Error)
	}
	if out.Returns == nil {
		out.Returns = []json.RawMessage{}
	}
	out.Warnings = reps
	return out, err
}

// Run is shell.run's answer, its text as host text.
type Run struct {
	Success bool   `json:"success"`
	Output  string `json:"output"`
	// OutputTruncated is set when the program printed more than the computer keeps (16 KiB).
	OutputTruncated bool `json:"outputTruncated,omitempty"`
	// PowerOff is set when the program called os.shutdown or os.reboot, as the shutdown and
	// reboot programs do (Exec's PowerOff); Success is false when it had not returned then.
	PowerOff string `json:"powerOff,omitempty"`
	// Warnings are the characters of the command CC's charset could not hold (sent as '?').
	Warnings []cctext.Replacement `json:"warnings,omitempty"`
}

// Run runs a shell command line (host text) on a computer.
func (c *Client) Run(ctx context.Context, traposID, command string, timeout time.Duration) (Run, error) {
	wire, reps := cctext.Wire("command", command)
	var out Run
	if err := c.run(ctx, traposID, protocol.TypeShellRun, map[string]any{"command": wire}, timeout, &out); err != nil {
		return Run{Warnings: reps}, err
	}
	var err error
	out.Output, err = c.text(traposID, protocol.TypeShellRun, out.Output)
	out.Warnings = reps
	return out, err
}

// run sends lua.exec or shell.run with the run's own bound in the payload: the computer
// stops the run RunSlack before the call's end, so its timeout answer comes first.
//
// When the call's own time runs out instead, the computer did not stop the run at its time
// either, which is what a chunk that never yields does (CC alone ends it, after about 7 s):
// the error says so, since a bare "did not answer" reads as a lost computer.
func (c *Client) run(ctx context.Context, traposID, typ string, payload map[string]any, timeout time.Duration, out any) error {
	defaulted := timeout <= 0
	timeout = bound(timeout, DefaultTimeout)
	runMs := RunTime(timeout).Milliseconds()
	payload["timeoutMs"] = runMs
	err := c.call(ctx, traposID, typ, payload, timeout, out)
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Code == protocol.CodeTimeout && pe.ByComputer {
		// The computer names the limit it was sent, not the call's timeout the caller gave:
		// the gateway's words first say where its number came from. The computer's stay whole.
		return pe.WithHostWords(fmt.Sprintf("the run was stopped on the computer at %s: ", runLimit(timeout, defaulted)), "")
	}
	if errors.As(err, &pe) && pe.Code == protocol.CodeTimeout {
		// The code may be an earlier call's: an agent whose loop timed out sent return 1 next,
		// was told its code never yields, and looked for the fault in return 1. When the
		// gateway named the earlier request the computer still owes (HeldLead), that is said
		// after why, in its words; it was said before, between "in time" and ": nor did it
		// stop the run", with the guess at an earlier run after it again.
		didNotAnswer, held, isHeld := strings.Cut(pe.Message, HeldLead)
		which := "; that code may be this run's, or an earlier run's that still holds the computer (nothing else runs there meanwhile: call again once CC has ended it)"
		if isHeld {
			which = HeldLead + held
		}
		return protocol.Errorf(protocol.CodeTimeout, "%s: nor did it stop the run at %s, as happens to code that never yields "+
			"(a loop with no sleep, os.pullEvent or coroutine.yield), which only CC ends, after about 7 s%s",
			didNotAnswer, runLimit(timeout, defaulted), which)
	}
	if errors.As(err, &pe) && pe.Code == protocol.CodeBadPayload && !pe.ByComputer && pe.Message == protocol.FrameTooLargeMessage {
		what := "code"
		if typ == protocol.TypeShellRun {
			what = "command line"
		}
		// The frame's own fix, "send a smaller payload", goes: the way round it is this one.
		return protocol.Errorf(protocol.CodeBadPayload, "%s: %s that long does not fit one request; write it to a file on the computer and run that file instead",
			strings.TrimSuffix(pe.Message, protocol.FrameTooLargeFix), what)
	}
	return err
}

// HeldLead starts what the gateway adds to a request's timeout ("computer 7: did not answer
// ping in time; it has not answered a lua.exec sent 3s before it yet, which may hold it …")
// when the computer still owes the answer to a host request sent before it: run finds it
// there, in-process or through the HTTP API, which carry the message alone.
const HeldLead = "; it has not answered a "

// RunTime is how long a run may last on the computer within a call of timeout: RunSlack
// less, but at least half of it, and at least the 1 ms the computer takes (it refuses 0).
func RunTime(timeout time.Duration) time.Duration {
	return max(timeout-RunSlack, timeout/2, time.Millisecond)
}

// runLimit names a run's limit on the computer (RunTime) and how it came from the call's
// timeout (defaulted: the caller gave none), which is the number the caller knows: "its
// limit of 1500 ms (half of this call's timeout of 3000 ms, so that its answer comes within
// the call)".
func runLimit(timeout time.Duration, defaulted bool) string {
	run := RunTime(timeout)
	call := fmt.Sprintf("this call's timeout of %d ms", timeout.Milliseconds())
	if defaulted {
		call = fmt.Sprintf("this call's default timeout of %d ms", timeout.Milliseconds())
	}
	var how string
	switch run {
	case timeout - RunSlack:
		how = fmt.Sprintf("%s less %d ms", call, RunSlack.Milliseconds())
	case timeout / 2:
		how = "half of " + call
	default:
		how = "the least the computer takes, within " + call
	}
	return fmt.Sprintf("its limit of %d ms (%s, so that its answer comes within the call)", run.Milliseconds(), how)
}

// text checks a computer's wire text and returns it as host text.
func (c *Client) text(traposID, typ, wire string) (string, error) {
	s, err := cctext.FromWire(wire)
	if err != nil {
		return "", protocol.Errorf(protocol.CodeInternal, "computer %s answered %s with text that is not bytes: %v", c.shownID(traposID), typ, err)
	}
	return s, nil
}
