package gateway

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

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
	if served == "" || !olderVersion(version, served) {
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

// explainUnknownType is a computer's unknown_type for typ, with the fix added when typ is a
// type of the vocabulary every up-to-date daemon answers (protocol.ComputerTypes) and this
// computer's client is older than the one the gateway serves: the client predates the type,
// and the install line, not a program of the owner's, is what gives it. Every host surface
// (the HTTP API, the CLI, MCP, screens, the agent) reads the answer from here.
func (s *Session) explainUnknownType(typ string, e *protocol.Error) *protocol.Error {
	served := s.gw.cfg.ClientVersion
	s.mu.Lock()
	version := s.clientVersion
	s.mu.Unlock()
	if served == "" || !olderVersion(version, served) || !slices.Contains(protocol.ComputerTypes, typ) {
		return e
	}
	shown := "trapos-sandbox " + version
	if version == "" {
		shown = "a trapos-sandbox that names no version"
	}
	explained := *e
	explained.Message = fmt.Sprintf("%s (its client, %s, is older than the %s this gateway serves: "+
		"run the gateway's install line on the computer to upgrade it, then reboot it)", e.Message, clip(shown), served)
	return &explained
}

// olderVersion compares MAJOR.MINOR.PATCH versions; a missing or unparsable have is older.
func olderVersion(have, want string) bool {
	h, okH := parseVersion(have)
	w, okW := parseVersion(want)
	if !okW {
		return false
	}
	if !okH {
		return true
	}
	for i := range h {
		if h[i] != w[i] {
			return h[i] < w[i]
		}
	}
	return false
}

func parseVersion(v string) ([3]int, bool) {
	var out [3]int
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}
