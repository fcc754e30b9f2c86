package gateway

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sync"

	hostcomputer "trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
)

// clientVersions remembers which computers were already told to upgrade, so an older client is
// logged once per computer, not at every reconnect.
type clientVersions struct {
	mu     sync.Mutex
	warned map[Key]bool
}

// maxWarnedClients bounds clientVersions: past it the gateway forgets whom it told (each may be
// told once more), so a computer saying hello under ever new labels cannot grow it for the
// gateway's life. Far more computers than a Minecraft server runs.
const maxWarnedClients = 1 << 14

// first records key and says whether it is new.
func (v *clientVersions) first(key Key) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.warned[key] {
		return false
	}
	if v.warned == nil || len(v.warned) >= maxWarnedClients {
		v.warned = map[Key]bool{}
	}
	v.warned[key] = true
	return true
}

// noteClientVersion logs once per computer when its client (hello's clientVersion, empty for a
// client too old to send one) is older than the one this gateway serves (Config.ClientVersion).
func (s *Session) noteClientVersion(key Key, version string) {
	served := s.gw.cfg.ClientVersion
	if served == "" || !hostcomputer.OlderVersion(version, served) {
		return
	}
	if s.gw.versions.first(key) {
		shown := version
		if shown == "" {
			shown = "unknown (sends no clientVersion)"
		}
		s.log().Info("computer runs an older client: run the install line on it again to upgrade",
			"traposId", clip(key.TraposID), "clientVersion", clip(shown), "served", served)
	}
}

// olderClientsError is a computer's error answer e to a request of type typ as the host reads
// it: the one place where the gateway makes up for what an older client (hello's
// clientVersion, empty for none) says differently from the current one. A client that names
// no version is taken for the oldest: TrapOS's own clients before 0.3.0 sent none, and the
// rules below change only text that names the client's own library, which another client
// never sends.
func (s *Session) olderClientsError(typ string, e *protocol.Error) *protocol.Error {
	s.mu.Lock()
	version := s.clientVersion
	s.mu.Unlock()
	switch e.Code {
	case protocol.CodeUnknownType:
		return s.explainUnknownType(version, typ, e)
	case protocol.CodeFSError:
		return withoutLibraryPosition(version, typ, e)
	case protocol.CodeBadPayload:
		if typ == protocol.TypeScreenInput {
			return explainNewInputType(version, e)
		}
	}
	return e
}

// monitorSince names, for each request with a monitor field (a monitor named instead of the
// computer's own screen), the first client that takes it: an older client than
// hostcomputer.MonitorSince ignores the field, and one from it refuses a watch of a monitor
// (screen.input's monitor is refused by every client: a monitor takes no keys).
var monitorSince = map[string]string{
	protocol.TypeScreenRead:  hostcomputer.MonitorSince,
	protocol.TypeScreenWatch: hostcomputer.MonitorWatchSince,
	protocol.TypeScreenInput: hostcomputer.MonitorSince,
}

// olderClientsRefusal refuses, before it is sent, a request this computer's client (hello's
// clientVersion) would misread or refuse for its age: one that names a monitor, sent to a
// client older than the type's monitorSince; a client before hostcomputer.MonitorSince would
// answer with the computer's own screen as if it were the monitor's. Only the screen types'
// payloads are decoded, and the key is matched as the client's JSON decoder matches it
// (exactly, escapes undone).
func (s *Session) olderClientsRefusal(typ string, payload json.RawMessage) error {
	since, ok := monitorSince[typ]
	if !ok {
		return nil
	}
	s.mu.Lock()
	version := s.clientVersion
	s.mu.Unlock()
	if !hostcomputer.OlderVersion(version, since) {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(payload, &fields) != nil {
		return nil
	}
	if _, named := fields["monitor"]; !named {
		return nil
	}
	shown := "trapos-sandbox " + version
	if version == "" {
		shown = "a trapos-sandbox that names no version"
	}
	misread := ""
	if hostcomputer.OlderVersion(version, hostcomputer.MonitorSince) {
		misread = " (it would answer with the computer's own screen)"
	}
	return protocol.Errorf(protocol.CodeBadPayload, "%s's monitor came in trapos-sandbox %s, and this computer's client, %s, is older%s: "+
		"run the gateway's install line on the computer to upgrade it, then reboot it", typ, since, clip(shown), misread)
}

// unknownInputType is how a client refuses an event type it does not know
// (libsandboxscreen's words): "events[3]: unknown input type "drag" (one of key, …)".
var unknownInputType = regexp.MustCompile(`^events\[[0-9]+\]: unknown input type "([a-z_]+)"`)

// explainNewInputType is a computer's refusal e of a screen.input with an event type its client
// (version) is older than (a drag sent to 0.5.20), with when the type came and the fix added:
// the client's own words name the type as if it were a mistake of the caller's. The event's
// place stays first, as callers read it (computer.RefusedEvent).
func explainNewInputType(version string, e *protocol.Error) *protocol.Error {
	m := unknownInputType.FindStringSubmatch(e.Message)
	if m == nil {
		return e
	}
	since, ok := hostcomputer.InputTypesSince[m[1]]
	if !ok || !hostcomputer.OlderVersion(version, since) {
		return e
	}
	shown := "trapos-sandbox " + version
	if version == "" {
		shown = "a trapos-sandbox that names no version"
	}
	return e.WithHostWords("", fmt.Sprintf(" (screen.input's %s came in trapos-sandbox %s, and this computer's client, %s, is older: "+
		"run the gateway's install line on the computer to upgrade it, then reboot it)", m[1], since, clip(shown)))
}

// explainUnknownType is a computer's unknown_type for typ, with the fix added when typ is a
// type of the vocabulary every up-to-date daemon answers (protocol.ComputerTypes) and this
// computer's client (version) is older than the one the gateway serves: the client predates
// the type, and the install line, not a program of the owner's, is what gives it. Every host
// surface (the HTTP API, the CLI, MCP, screens, the agent) reads the answer from here.
func (s *Session) explainUnknownType(version, typ string, e *protocol.Error) *protocol.Error {
	served := s.gw.cfg.ClientVersion
	if served == "" || !hostcomputer.OlderVersion(version, served) || !slices.Contains(protocol.ComputerTypes, typ) {
		return e
	}
	shown := "trapos-sandbox " + version
	if version == "" {
		shown = "a trapos-sandbox that names no version"
	}
	return e.WithHostWords("", fmt.Sprintf(" (its client, %s, is older than the %s this gateway serves: "+
		"run the gateway's install line on the computer to upgrade it, then reboot it)", clip(shown), served))
}

// fsErrorsUnplacedSince is the first client whose fs_error is CC's message alone. Before it,
// libsandboxfiles called CC's fs functions (and file handles) straight from pcall, and on CC
// the error of a native function raised without a level is placed at the nearest Lua code
// (Cobalt's LuaError calculateLevel): the library's own line that called pcall. So the
// fs_error of clients 0.3.0 to 0.5.2 that a CC function raised (not the library's own words,
// nor fs.open's returned reason) begins with that position ("...is/libsandboxfiles.lua:59:
// /x: No such file", "...is/libsandboxfiles.lua:55: File exists"), no position of the
// host's. Their other answers carry none of the library's: its screen handlers raise
// nothing, and an error of lua.exec, shell.run or a program's type is the program's own,
// which stays whole.
const fsErrorsUnplacedSince = "0.5.3"

// libraryPosition is the position such a client's fs_error begins with: libsandboxfiles' file
// (the installer puts it at /apis/, and the client requires it by that absolute path) and a
// line. CC names the file as Cobalt cuts a chunk's name, to its last 22 bytes after "..."
// ("/apis/libsandboxfiles.lua" is 25: "...is/libsandboxfiles.lua:59: "); fakecraft before it
// cut names as CC does wrote the whole path ("/apis/libsandboxfiles.lua:59: "), and such a
// computer is served alike.
var libraryPosition = regexp.MustCompile(`^(?:/apis|\.\.\.is)/libsandboxfiles\.lua:[0-9]+: `)

// withoutLibraryPosition is e, an fs_error answer to a request of type typ from a client of
// version, with the library's position taken off when that client is one that put it there
// (fsErrorsUnplacedSince): a host reads "File exists" as a current client sends it, and the
// host-side checks that compare CC's words (an older client's replacing write, fs.move's
// refusals named by path) hold for it too.
func withoutLibraryPosition(version, typ string, e *protocol.Error) *protocol.Error {
	if !hostcomputer.OlderVersion(version, fsErrorsUnplacedSince) || !slices.Contains(fsTypes, typ) {
		return e
	}
	at := libraryPosition.FindStringIndex(e.Message)
	if at == nil {
		return e
	}
	return e.WithMessage(e.Message[at[1]:])
}

// fsTypes are the requests libsandboxfiles answers.
var fsTypes = []string{protocol.TypeFSList, protocol.TypeFSRead, protocol.TypeFSWrite,
	protocol.TypeFSDelete, protocol.TypeFSMove, protocol.TypeFSMakeDir}
