package cli

import (
	"runtime/debug"

	"traposclient"
)

// buildVersion is the version given at link time (go build -ldflags "-X
// trap-sandbox/internal/cli.buildVersion=…"; tools/trap-sandbox/README.md): a build in this
// repository's Go workspace records no commit of its own.
var buildVersion string

// Version says which trap-sandbox this is and which client it serves, for `--version` and
// the start-up config line: the version given at link time, else the module's version or the
// commit recorded in the build (+dirty with uncommitted changes), else "(devel)". Replicas
// must run the same one (docs/scale-out.md), and each one's heartbeats say it to the others.
func Version() string {
	v := "(devel)"
	if buildVersion != "" {
		v = buildVersion
	} else if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		} else {
			var rev, modified string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if rev != "" {
				v = rev[:min(12, len(rev))]
				if modified == "true" {
					v += "+dirty"
				}
			}
		}
	}
	client := "no client"
	if p, err := traposclient.Sandbox(); err == nil {
		client = p.Name + " " + p.Version
	}
	return "trap-sandbox " + v + " (serves " + client + ")"
}
