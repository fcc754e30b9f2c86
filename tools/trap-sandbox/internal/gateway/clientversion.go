package gateway

import (
	"strconv"
	"strings"
	"sync"
)

// clientVersions remembers which computers were already told to upgrade, so an older client is
// logged once per computer, not at every reconnect.
type clientVersions struct {
	mu     sync.Mutex
	warned map[Key]bool
}

// noteClientVersion logs once per computer when its client (hello's clientVersion, empty for a
// client too old to send one) is older than the one this gateway serves (Config.ClientVersion).
func (s *Session) noteClientVersion(key Key, version string) {
	served := s.gw.cfg.ClientVersion
	if served == "" || !olderVersion(version, served) {
		return
	}
	v := &s.gw.versions
	v.mu.Lock()
	if v.warned == nil {
		v.warned = map[Key]bool{}
	}
	first := !v.warned[key]
	v.warned[key] = true
	v.mu.Unlock()
	if first {
		shown := version
		if shown == "" {
			shown = "unknown (sends no clientVersion)"
		}
		s.log().Info("computer runs an older client: run the install line on it again to upgrade",
			"traposId", clip(key.TraposID), "clientVersion", clip(shown), "served", served)
	}
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
