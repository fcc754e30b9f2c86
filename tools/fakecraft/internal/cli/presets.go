package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"fakecraft/ccstr"
)

// presets are the --set values of one run: a server's default settings, which the
// computer's own /.settings overrides, as in CC. When it does, the user is told on stderr
// (never on the computer's screen, which is stdout), once per key however often the
// computer reboots, since a value that silently does nothing looks like a bug.
type presets struct {
	flags map[string][2]string // CC key -> the flag's KEY and VALUE as typed (text)
	out   io.Writer

	mu   sync.Mutex // guards dir and told
	dir  string     // where the .settings file is (--dir, a world entry's dir); empty: a temporary one
	told map[string]bool
}

// in says where the computer's directory is, once known.
func (p *presets) in(dir string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dir = dir
}

// overridden is machine.Options.SettingOverridden: key lost to the computer's /.settings,
// which has value (as CC's set program shows it). Both are CC's bytes.
func (p *presets) overridden(key, value string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.told[key] {
		return
	}
	p.told[key] = true
	kv := p.flags[key]
	// A string's newline is serialized as a backslash before a real newline; the note
	// is one line.
	has := strings.ReplaceAll(ccstr.ToText(value), "\\\n", `\n`)
	fix := fmt.Sprintf("run `%s` on the computer", commandLine([]string{"set", kv[0], kv[1]}))
	if p.dir != "" {
		fix += " or edit " + filepath.Join(p.dir, ".settings")
	}
	fmt.Fprintf(p.out, "fakecraft: --set %s=%s did not take: this computer's /.settings has %s, which wins over --set as over a server's default settings; to change it, %s\n",
		kv[0], kv[1], has, fix)
}
