package agent

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
)

// MCPName is the name the session directory's opencode.json gives the gateway's MCP server;
// opencode names its tools MCPName + "_" + tool.
const MCPName = "trap-sandbox"

// toolPrefix is what opencode puts before an MCP tool's name.
const toolPrefix = MCPName + "_"

// Actions a confirm event names.
const (
	ActionWrite  = "write"
	ActionDelete = "delete"
	ActionRun    = "run"
)

// agentTools are the trap-sandbox MCP tools a turn may use, all on the asking computer, with
// the action that needs the player's confirmation ("" for none). list_computers is not among
// them: it shows every player's computers.
var agentTools = map[string]string{
	"computer_info": "",
	"list_files":    "",
	"read_file":     "",
	"ping":          "",
	"write_file":    ActionWrite,
	"make_dir":      ActionWrite,
	"move_file":     ActionWrite,
	"delete_file":   ActionDelete,
	"run_lua":       ActionRun,
	"run_program":   ActionRun,
}

// changeRequests are the request types the tools that change a computer send it (through the
// computer package): what the computer's own permission check is asked about before the
// player is (a write is an fs.write of its target, whatever temporary file it goes through).
var changeRequests = map[string]string{
	"write_file":  protocol.TypeFSWrite,
	"make_dir":    protocol.TypeFSMakeDir,
	"move_file":   protocol.TypeFSMove,
	"delete_file": protocol.TypeFSDelete,
	"run_lua":     protocol.TypeLuaExec,
	"run_program": protocol.TypeShellRun,
}

// changeRequest is the request a change tool's call will send, for the computer's check: its
// type and paths, never its content or code. The paths are read by the path rule, as the
// tool reads them (cctext.PathWire: \xNN is a byte), so the computer checks the file the
// call will change; a path the tool would refuse (a character CC cannot hold) is the error.
func changeRequest(tool string, input json.RawMessage) (*ConfirmRequest, error) {
	typ, ok := changeRequests[tool]
	if !ok {
		return nil, nil
	}
	var c toolCall
	_ = json.Unmarshal(input, &c) // judge read it already
	payload := map[string]string{}
	var err error
	switch typ {
	case protocol.TypeFSMove:
		if payload["from"], err = cctext.PathWire(c.From); err == nil {
			payload["to"], err = cctext.PathWire(c.To)
		}
	case protocol.TypeFSWrite, protocol.TypeFSMakeDir, protocol.TypeFSDelete:
		payload["path"], err = cctext.PathWire(c.Path)
	}
	if err != nil {
		return nil, err
	}
	return &ConfirmRequest{Type: typ, Payload: payload}, nil
}

// agentToolOrder is agentTools in a fixed order, for the rules.
var agentToolOrder = []string{"computer_info", "list_files", "read_file", "ping", "write_file", "make_dir",
	"move_file", "delete_file", "run_lua", "run_program"}

// hostToolsDenied stay denied even with --ai-allow-host-tools: the question tool would wait
// for an answer nobody can give, and list_computers shows other players' computers.
var hostToolsDenied = []string{"question", "plan_enter", "plan_exit", toolPrefix + "list_computers"}

// Rules are the permission rules of every session the gateway creates. opencode evaluates
// the last matching rule, session rules over the agent's: "*" denied removes every tool from
// what the model is offered (bash, edit, read/glob/grep of the host, webfetch, task, question,
// other MCP servers); the trap-sandbox tools that act on one computer are "ask", so each call
// comes to the gateway, which checks it is aimed at the asking computer. allowHostTools (the
// operator's --ai-allow-host-tools) allows opencode's own tools instead: they then run on the
// host without asking.
func Rules(allowHostTools bool) []Rule {
	rules := []Rule{{Permission: "*", Pattern: "*", Action: "deny"}}
	if allowHostTools {
		rules[0].Action = "allow"
		for _, p := range hostToolsDenied {
			rules = append(rules, Rule{Permission: p, Pattern: "*", Action: "deny"})
		}
	}
	for _, name := range agentToolOrder {
		rules = append(rules, Rule{Permission: toolPrefix + name, Pattern: "*", Action: "ask"})
	}
	return rules
}

// sameRules reports whether a session found by title was created with rules.
func sameRules(a, b []Rule) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// toolCall is what the gateway reads of a tool call's input.
type toolCall struct {
	TraposID      *string `json:"traposId"`
	Path          string  `json:"path"`
	From          string  `json:"from"`
	To            string  `json:"to"`
	Content       *string `json:"content"`
	ContentBase64 *string `json:"contentBase64"`
	Code          string  `json:"code"`
	Command       string  `json:"command"`
}

// detailMax bounds a tool event's detail: one short line on a 51-column screen.
const detailMax = 60

// fullMax bounds the code or command line a run puts before the player whole (fullOf): longer,
// the run is refused, since the player could not read what they approve.
const fullMax = 4096

// fullOf is the whole code of a run_lua, or command line of a run_program, when the detail
// shows less of it (cut at detailMax, or its lines joined), and what it is ("code",
// "command"); "" when the detail shows it all, or for other tools.
func fullOf(tool string, input json.RawMessage, detail string) (full, what string) {
	var c toolCall
	_ = json.Unmarshal(input, &c)
	switch tool {
	case "run_lua":
		full, what = c.Code, "code"
	case "run_program":
		full, what = c.Command, "command"
	}
	if full == detail {
		return "", what
	}
	return full, what
}

// contentMax bounds the content a write puts before the player (contentOf): one file chunk,
// so the confirm event's frame stays under 128 KiB however its bytes are escaped (six
// characters each at most), and a long file edited in a few lines can still be shown as what
// changes. A longer write is put to the player without its content, and the question says so.
const contentMax = 16 << 10

// written is the bytes a write_file call stores, as its tool reads them (the text rule for
// content: é is one byte; contentBase64 decoded); false for other tools, or a call whose bytes
// the gateway cannot read (the tool refuses it).
func written(tool string, c toolCall) ([]byte, bool) {
	if tool != "write_file" {
		return nil, false
	}
	switch {
	case c.Content != nil && c.ContentBase64 == nil:
		cc, _ := cctext.ToCC("content", *c.Content) // the replacements are the model's text
		return []byte(cc), true
	case c.ContentBase64 != nil && c.Content == nil:
		b, err := base64.StdEncoding.DecodeString(*c.ContentBase64)
		return b, err == nil
	}
	return nil, false
}

// contentOf is what a write_file call stores, as wire text (one code point per byte), for the
// player to read before answering; nil for other tools, a call the tool would refuse, and a
// write over contentMax.
func contentOf(tool string, input json.RawMessage) *string {
	var c toolCall
	_ = json.Unmarshal(input, &c)
	data, ok := written(tool, c)
	if !ok || len(data) > contentMax {
		return nil
	}
	w := protocol.WireOfBytes(data)
	return &w
}

// describe is the short summary of a call shown to the player ("/door.lua", "ls /rom") and
// the byte count of a write, when known.
func describe(tool string, input json.RawMessage) (detail string, size *int) {
	var c toolCall
	_ = json.Unmarshal(input, &c) // a call the gateway cannot read shows without a detail
	switch tool {
	case "move_file":
		detail = shownPath(c.From) + " -> " + shownPath(c.To)
	case "run_lua":
		detail = c.Code
	case "run_program":
		detail = c.Command
	default:
		detail = shownPath(c.Path)
	}
	if data, ok := written(tool, c); ok {
		n := len(data)
		size = &n
	}
	detail = strings.Join(strings.Fields(detail), " ")
	if len(detail) > detailMax {
		detail = clipUTF8(detail, detailMax-3) + "..."
	}
	return detail, size
}

// shownPath is a tool's path as the file it names (the path rule: "/startup\x2elua" is
// /startup.lua), control bytes as \xNN; a path the tool would refuse is shown as given.
func shownPath(p string) string {
	cc, err := cctext.PathToCC(p)
	if err != nil {
		return p
	}
	return cctext.ShowPath([]byte(cc))
}

// verdict is the gateway's answer to one permission ask: allowed, or the message the model
// reads when refused.
type verdict struct {
	allow   bool
	message string
	confirm string // the action to put before the player first ("" for none)
}

// judge decides a permission ask of the turn of computer from: permission is opencode's name
// for the tool, input the call's arguments (nil when they never came). It answers for the
// model (a call naming another computer is refused with why, so the turn goes on); the
// computer's pass (place.go) is what enforces it: the call reaches the gateway as from's
// account limited to from's computer, so it cannot reach another account's computer of the
// same traposId, nor another computer of its own account.
func judge(permission string, input json.RawMessage, from callerKey) verdict {
	asker := from.traposID
	name, ours := strings.CutPrefix(permission, toolPrefix)
	action, allowed := agentTools[name]
	if !ours || !allowed {
		return verdict{message: fmt.Sprintf("%s is not allowed for an in-game computer's agent; use the trap-sandbox tools on computer %s only.", permission, asker)}
	}
	if input == nil {
		return verdict{message: fmt.Sprintf("The gateway could not see this call's arguments, so it refused it; call %s again with traposId %q.", permission, asker)}
	}
	var c toolCall
	if err := json.Unmarshal(input, &c); err != nil || c.TraposID == nil {
		return verdict{message: fmt.Sprintf("Refused: pass traposId %q, the computer that asked.", asker)}
	}
	// Read as the tool the call reaches reads it (MCP composes every traposId argument): ü
	// written as u and U+0308 is the asking 7:küche, which a refusal could only name as itself.
	// The asker's shown form is the asker too, as the tool reads a shown form of the one computer
	// the pass reaches: a refusal names the asker so, and 7:kitchen\x20 (a label's trailing
	// space) was refused in the words that named it. Another computer is named in its shown
	// form, so that it never looks like the asker.
	if given := cctext.ListedTraposID(*c.TraposID); given != asker && given != cctext.ShowTraposID(asker) {
		return verdict{message: fmt.Sprintf("Refused: you may act only on computer %s, the one whose player asked, not on %s.",
			cctext.ShowTraposID(asker), cctext.ShowTraposID(given))}
	}
	return verdict{allow: true, confirm: action}
}
