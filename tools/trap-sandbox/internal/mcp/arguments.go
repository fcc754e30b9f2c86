package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/spelling"
)

// inputs are the tools' input schemas by name, as registered: checkArguments reads them.
type inputs map[string]*jsonschema.Schema

// checkArguments answers a tools/call whose arguments are outside the tool's input schema
// with bad_argument naming each argument, what it must be and what it was, before the SDK
// sees them: the SDK's own refusal is its validator's error chain, which an agent has to
// decode ('validating "arguments": validating root: validating /properties/timeoutMs:
// minimum: 0/1 is less than 1.000000'). Arguments it finds nothing wrong with go on to the
// SDK, which validates them as before.
func checkArguments(schemas inputs) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			ctr, ok := req.(*sdk.CallToolRequest)
			if !ok || ctr.Params == nil {
				return next(ctx, method, req)
			}
			schema, ok := schemas[ctr.Params.Name]
			if !ok {
				res, err := next(ctx, method, req)
				return res, unknownTool(err, ctr.Params.Name, schemas)
			}
			if problem := argumentProblem(ctr.Params.Name, schema, ctr.Params.Arguments); problem != "" {
				var res sdk.CallToolResult
				res.SetError(protocol.Errorf(CodeBadArgument, "%s", problem))
				return &res, nil
			}
			ctr.Params.Arguments = asTheToolsReadThem(schema, ctr.Params.Arguments)
			return next(ctx, method, req)
		}
	}
}

// unknownTool words the SDK's answer to a tools/call of a tool it does not have, JSON-RPC's
// invalid params (MCP's code for an unknown tool), with the tool meant and what the tools
// are: its "unknown tool \"trap-sandbox_read_file\"" left a model to guess that the name it
// had from its client (opencode calls the tools <server>_<tool>) carries a prefix the server
// does not know. Any other err is returned as it is.
func unknownTool(err error, name string, schemas inputs) error {
	je, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok || je.Code != jsonrpc.CodeInvalidParams || je.Message != fmt.Sprintf("unknown tool %q", name) {
		return err
	}
	tools := slices.Sorted(maps.Keys(schemas))
	meant := ""
	for _, tool := range tools {
		if strings.HasSuffix(squash(name), squash(tool)) {
			meant = fmt.Sprintf(" did you mean %s?", tool)
			break
		}
	}
	return &jsonrpc.Error{Code: je.Code, Message: fmt.Sprintf("%s:%s trap-sandbox's tools are %s (tools/list gives each one's arguments)",
		je.Message, meant, strings.Join(tools, ", ")), Data: je.Data}
}

// squash is a tool name as unknownTool compares it: lower case, without '_', '-', '.' and
// spaces, so readFile, read-file and trap-sandbox_read_file all end in read_file's.
func squash(name string) string {
	return strings.NewReplacer("_", "", "-", "", ".", "", " ", "").Replace(strings.ToLower(name))
}

// argumentProblem is what is wrong with the arguments raw of tool, whose input schema is s
// (an object of plain properties, as inputSchema makes them), one clause per argument; ""
// when it sees nothing wrong.
func argumentProblem(tool string, s *jsonschema.Schema, raw json.RawMessage) string {
	names := s.PropertyOrder
	if len(names) == 0 {
		for name := range s.Properties {
			names = append(names, name)
		}
		slices.Sort(names)
	}
	takes := tool + " takes no arguments"
	if len(names) > 0 {
		takes = tool + " takes " + strings.Join(names, ", ")
	}
	args := map[string]json.RawMessage{}
	if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if err := json.Unmarshal(trimmed, &args); err != nil {
			return "the arguments must be a JSON object: " + takes
		}
	}
	var problems []string
	var unknown []string
	for name := range args {
		if _, ok := s.Properties[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		problems = append(problems, fmt.Sprintf("%q is not an argument of %s%s", name, tool, whyNot(tool, name, names)))
	}
	if len(unknown) > 0 {
		problems = append(problems, takes)
	}
	for _, name := range names {
		p := s.Properties[name]
		value, given := args[name]
		if !given {
			if slices.Contains(s.Required, name) {
				problems = append(problems, fmt.Sprintf("%s is missing: %s", name, p.Description))
			}
			continue
		}
		if optionalNull(s, name, value) {
			continue // not given (asTheToolsReadThem)
		}
		if problem := valueProblem(name, p, value); problem != "" {
			problems = append(problems, problem)
		}
	}
	return strings.Join(problems, "; ")
}

// notTaken says why a tool has no argument another tool has, where a model that read the other
// tool's would give it: send_keys with read_screen's monitor was told only that it is no
// argument, which left the agent to guess whether a monitor is typed on some other way.
var notTaken = map[string]map[string]string{
	"send_keys": {"monitor": typesOnItsOwnScreen},
	"send_text": {"monitor": typesOnItsOwnScreen},
	"click":     {"monitor": ": it clicks the computer's own screen, and a monitor takes no clicks from here" + readAMonitor},
}

// typesOnItsOwnScreen is notTaken's for a monitor given to a tool that types.
const typesOnItsOwnScreen = ": it types on the computer's own screen, and a monitor takes no keys" + readAMonitor

// readAMonitor ends notTaken's words of a monitor.
const readAMonitor = " (a player touches an advanced one; read a monitor with read_screen's or wait_for_screen's monitor)"

// whyNot is what to say after `"name" is not an argument of tool`: why the tool takes no such
// argument (notTaken), or the argument a misspelt name is likely to mean; "" when neither.
func whyNot(tool, name string, names []string) string {
	if why, ok := notTaken[tool][name]; ok {
		return why
	}
	return meant(name, names)
}

// meant names the argument a misspelt name is likely to mean (traposID, timeout), or "": by
// spelling.Nearest (lenght, ofset, and colors for the tools' British colours, were told only
// that they are no argument).
func meant(name string, names []string) string {
	if n := spelling.Nearest(name, names); n != "" {
		return fmt.Sprintf(" (did you mean %s?)", n)
	}
	return ""
}

// valueProblem is what is wrong with the value of argument name, whose schema is p; "" when
// it sees nothing wrong.
func valueProblem(name string, p *jsonschema.Schema, raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return ""
	}
	types := p.Types
	if p.Type != "" {
		types = []string{p.Type}
	}
	if v == nil {
		if slices.Contains(types, "null") {
			return ""
		}
	}
	wrong := func(want string) string {
		s := fmt.Sprintf("%s must be %s, not %s", name, want, describe(v))
		if p.Description != "" {
			s += ": " + p.Description
		}
		return s
	}
	switch {
	case slices.Contains(types, "string"):
		if _, ok := v.(string); !ok {
			return wrong("a string")
		}
	case slices.Contains(types, "boolean"):
		if _, ok := v.(bool); !ok {
			return wrong("true or false")
		}
	case slices.Contains(types, "integer"):
		want := "a whole number"
		whole := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
		switch {
		case p.Minimum != nil && p.Maximum != nil: // %g wrote 1048576 as 1.048576e+06
			want = "a whole number from " + whole(*p.Minimum) + " to " + whole(*p.Maximum)
		case p.Minimum != nil:
			want = "a whole number from " + whole(*p.Minimum) + " on"
		}
		n, ok := v.(json.Number)
		if !ok {
			return wrong(want)
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || f != math.Trunc(f) || (p.Minimum != nil && f < *p.Minimum) || (p.Maximum != nil && f > *p.Maximum) {
			return wrong(want)
		}
		if math.Abs(f) > maxWholeArgument {
			return wrong(want + ", at most " + whole(maxWholeArgument) + " in size")
		}
	case slices.Contains(types, "array"):
		items, ok := v.([]any)
		if !ok {
			return wrong("an array of strings")
		}
		if p.Items != nil && p.Items.Type == "string" {
			for i, item := range items {
				if _, ok := item.(string); !ok {
					return fmt.Sprintf("%s[%d] must be a string, not %s", name, i, describe(item))
				}
			}
		}
	}
	return ""
}

// maxWholeArgument bounds a whole-number argument whose schema names a smaller maximum or none
// (click's x, y and button, read_file's offset): 2^53 - 1, the largest whole number every
// reader of JSON numbers holds exactly (a computer's Lua, JavaScript). Past it, 1e20 reached
// the tool's decoding and came back as Go's words ('json: cannot unmarshal number
// 100000000000000000000,"y":2} overflows into Go struct field mcp.ClickInput.x of type int'),
// and 9007199254740993 reached the computer as another number.
const maxWholeArgument = 1<<53 - 1

// describe names a JSON value as a message quotes it: the number 5, the string "5000".
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return "the number " + string(v)
	case string:
		if utf8.RuneCountInString(v) > 40 {
			v = string([]rune(v)[:40]) + "…"
		}
		return "the string " + strconv.Quote(v)
	case []any:
		return "an array"
	default:
		return "an object"
	}
}

// optionalNull reports whether the argument name of schema s, given as value, is null for an
// optional argument whose schema has no null: a model that fills every argument of a tool (as
// OpenAI's strict function calling has it do, null for one it leaves out) means it as not
// given, and was refused one argument at a time ("cursor must be true or false, not null").
func optionalNull(s *jsonschema.Schema, name string, value json.RawMessage) bool {
	if !bytes.Equal(bytes.TrimSpace(value), []byte("null")) || slices.Contains(s.Required, name) {
		return false
	}
	p := s.Properties[name]
	return p.Type != "null" && !slices.Contains(p.Types, "null")
}

// asTheToolsReadThem is raw without the arguments optionalNull takes as not given, which the
// SDK's validator would refuse in its own words, and with its traposId as the gateway keys
// computers (cctext.ListedTraposID: composed), as the CLI and the HTTP API's path read one:
// "7:ku\u0308che" (ü written as u and U+0308) was not connected, only offered back as "did you
// mean". raw as it is when neither changes it.
func asTheToolsReadThem(s *jsonschema.Schema, raw json.RawMessage) json.RawMessage {
	args := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &args); err != nil {
		return raw
	}
	changed := false
	for name, value := range args {
		if _, ok := s.Properties[name]; ok && optionalNull(s, name, value) {
			delete(args, name)
			changed = true
		}
	}
	var id string
	if value, ok := args[targetArgument]; ok && json.Unmarshal(value, &id) == nil {
		if listed := cctext.ListedTraposID(id); listed != id {
			args[targetArgument], _ = json.Marshal(listed)
			changed = true
		}
	}
	if !changed {
		return raw
	}
	out, err := json.Marshal(args)
	if err != nil {
		return raw
	}
	return out
}

// targetArgument names the computer in every tool that acts on one.
const targetArgument = "traposId"

// computerArguments name a computer in the tools that act on one (copy_file's other too).
var computerArguments = []string{targetArgument, "toTraposId"}

// shownIDs reads a tool's computer given in its shown form as that computer's traposId
// (shownID), in every argument that names one.
func shownIDs(c *computer.Client) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			ctr, ok := req.(*sdk.CallToolRequest)
			if !ok || ctr.Params == nil || !bytes.Contains(ctr.Params.Arguments, []byte(`\\`)) {
				return next(ctx, method, req) // no backslash, no escape to read
			}
			args := map[string]json.RawMessage{}
			if json.Unmarshal(ctr.Params.Arguments, &args) != nil {
				return next(ctx, method, req)
			}
			changed := false
			for _, name := range computerArguments {
				var id string
				if json.Unmarshal(args[name], &id) != nil {
					continue
				}
				if traposID := shownID(ctx, c, id); traposID != id {
					args[name], _ = json.Marshal(traposID)
					changed = true
				}
			}
			if out, err := json.Marshal(args); changed && err == nil {
				ctr.Params.Arguments = out
			}
			return next(ctx, method, req)
		}
	}
}

// shownID is id, a computer named in a tool's argument or a resource's URI, or, when no
// computer the caller reaches has id itself as its traposId but one has it as its shown form
// (cctext.ShowTraposID: a list's shown, the form a not_connected's "did you mean" names a
// computer by), that computer's traposId. The tools take a traposId as it is, so an agent that
// asked 7:kitchen of the computer labelled "kitchen " was told `did you mean "7:kitchen\x20"?`,
// asked that, and was told the same again, with no way to the computer short of typing its
// label's space (or a no-break space) exactly. Only an id with an escape in it asks c for the
// computers.
func shownID(ctx context.Context, c *computer.Client, id string) string {
	if cctext.TraposID(id) == id {
		return id // no escape to read
	}
	cs, _ := c.Computers(ctx) // none listed: the id is taken as it is
	shown := id
	for _, c := range cs {
		if c.TraposID == id {
			return id
		}
		if cctext.ShowTraposID(c.TraposID) == id {
			shown = c.TraposID
		}
	}
	return shown
}
