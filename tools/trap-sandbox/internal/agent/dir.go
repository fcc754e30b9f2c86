package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ConfigFile is the session directory's opencode configuration, which the module writes.
const ConfigFile = "opencode.json"

// WriteSessionDir prepares a session directory dir: created if missing (0700, its parents
// too), with an opencode.json (0600: it holds the computer's pass) that names the model,
// denies everything but the trap-sandbox tools (the same rules the sessions carry, so even a
// session made by hand in this directory starts safe) and, when mcpURL is set, connects
// opencode to the gateway's MCP endpoint as trap-sandbox with token as its Bearer token. It is
// written atomically: a reader never sees half a file.
func WriteSessionDir(dir, model, mcpURL, token string, rules []Rule) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("the agent's directory %q must be an absolute path (opencode scopes an instance by it)", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the agent's directory: %w", err)
	}
	perms := map[string]string{}
	for _, r := range rules {
		perms[r.Permission] = r.Action
	}
	cfg := map[string]any{
		"$schema":    "https://opencode.ai/config.json",
		"model":      model,
		"permission": perms,
	}
	if mcpURL != "" {
		server := map[string]any{"type": "remote", "url": mcpURL, "oauth": false}
		if token != "" {
			server["headers"] = map[string]string{"Authorization": "Bearer " + token}
		}
		cfg["mcp"] = map[string]any{MCPName: server}
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".opencode.json-*")
	if err != nil {
		return fmt.Errorf("write the agent's %s: %w", ConfigFile, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write the agent's %s: %w", ConfigFile, err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write the agent's %s: %w", ConfigFile, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, ConfigFile)); err != nil {
		return fmt.Errorf("write the agent's %s: %w", ConfigFile, err)
	}
	return nil
}
