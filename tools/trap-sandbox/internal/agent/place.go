package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"trap-sandbox/internal/account"
)

// A computer's place at opencode: a directory of its own under the agent's directory, whose
// opencode.json connects opencode to the gateway's /mcp with the computer's own pass
// (account.Passes). opencode scopes an instance, its MCP connection and its sessions by
// directory, so every tool call of this computer's conversations reaches the gateway as this
// computer's account, limited to this computer, whatever traposId the call names: a
// computer of another account with the same traposId, or another computer of the same
// account, is out of its reach at the gateway itself.

// computersDir holds the computers' directories, one per account and computer.
const computersDir = "computers"

// place is one computer's directory and the opencode client that names it.
type place struct {
	dir  string
	oc   *client
	pass string
}

// ComputerDir is the directory of the computer traposID of accountID under the agent's
// directory root: root/computers/ACCOUNT/TRAPOSID, each escaped (pathName).
func ComputerDir(root, accountID, traposID string) string {
	return filepath.Join(root, computersDir, pathName(accountID), pathName(traposID))
}

// pathName is s as one path element on any system: a-z, 0-9 and '-' stay, every other byte is
// _xx in lower-case hex ("7:Kitchen" is "7_3a_4bitchen"), so no name is "." or "..", holds a
// separator, differs only in case (macOS, Windows), or holds a '%': opencode 1.18.33 decodes
// its ?directory= once more than the query needs, so "7%3Adesk" would be read as "7:desk".
// Two different names never meet.
func pathName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// placeOf returns the computer's place, preparing it on the computer's first question since
// the gateway started: its directory's opencode.json is written again (the model, the MCP
// URL and the rules of this start) with the pass it already holds, or a new one, and the pass
// is granted. Keeping the pass across restarts matters: an opencode instance keeps the
// configuration it read when it started, so a running instance still gets in after the
// gateway restarts.
func (m *Module) placeOf(k callerKey) (*place, error) {
	m.placeMu.Lock()
	defer m.placeMu.Unlock()
	if p := m.places[k]; p != nil {
		return p, nil
	}
	dir := ComputerDir(m.cfg.Dir, k.account, k.traposID)
	pass := readPass(dir)
	if pass == "" {
		pass = account.NewPass()
	}
	if err := WriteSessionDir(dir, m.cfg.Model, m.cfg.MCPURL, pass, m.rules); err != nil {
		return nil, err
	}
	m.passes.Grant(pass, account.Caller{Account: k.account, Only: k.traposID})
	p := &place{dir: dir, oc: m.oc.in(dir), pass: pass}
	m.places[k] = p
	return p, nil
}

// readPass returns the pass the directory's opencode.json carries, or "" when there is none
// that has a pass's shape (no file yet, or one written by something else).
func readPass(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return ""
	}
	var cfg struct {
		MCP map[string]struct {
			Headers map[string]string `json:"headers"`
		} `json:"mcp"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return ""
	}
	pass, _ := strings.CutPrefix(cfg.MCP[MCPName].Headers["Authorization"], "Bearer ")
	if !account.IsPass(pass) {
		return ""
	}
	return pass
}
