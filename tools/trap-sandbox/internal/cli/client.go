package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/accountapi"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/table"
)

// Stdout is where client commands print their results (main binds os.Stdout). Warnings and
// errors go to the io.Writer main binds to os.Stderr.
type Stdout struct{ io.Writer }

// Stdin is where `exec -` and `put - …` read (main binds os.Stdin).
type Stdin struct{ io.Reader }

// APIFlags locate and authenticate against a running gateway's HTTP API.
type APIFlags struct {
	URL      string `name:"url" default:"http://127.0.0.1:4444" env:"SANDBOX_URL" help:"Base URL of the running gateway, http://HOST:PORT or https://… (a URL of another shape is a usage error)."`
	APIToken string `name:"api-token" env:"SANDBOX_API_TOKEN" help:"The API token, alone (no Bearer before it): the gateway's SANDBOX_API_TOKEN or an account's (tsa_…); give it in the environment, not here: a command line is readable by every user of the host (unset: no token, which only a gateway on this host without SANDBOX_API_TOKEN takes)."`
	// clock times a call's wait for the gateway's answer (hostapi.HTTP's Clock); nil: the wall
	// clock. A test sets a fake one on the parsed command and moves it past the wait.
	clock clock.Clock
}

// Validate refuses a --url (or SANDBOX_URL) that cannot be a gateway's API by its shape (no
// http://, the computers' ws://, a query, a page of the gateway: hostapi.CheckURL) as the
// command line is read: a usage error (exit status 2, with the usage), as any other bad flag
// value is, and not a failed call of the computer named (exit status 1, "computer 7: ping: …").
// Kong finds it on every command that embeds APIFlags, beside the command's own Validate.
func (f APIFlags) Validate() error {
	return hostapi.CheckURL(f.URL)
}

// transport is the HTTP API as a computer.Transport.
func (f APIFlags) transport() hostapi.HTTP {
	return hostapi.HTTP{URL: f.URL, Token: f.APIToken, Clock: f.clock}
}

// client is the vocabulary's client over the HTTP API: every computer command goes through it.
// A write that leaves part of a file on a computer names the rm line that removes it, and a
// read whose computer went away before it answered says so as a read, with the CLI's way to
// see it back (computer.WithReadWait), whichever command asked it: ls, cat, info, screen.
func (f APIFlags) client() *computer.Client {
	return computer.New(linking{f.transport()}).WithRemoveLine(f.removeLine).WithReadWait(computer.CLIBackWait)
}

// linking is a transport over the HTTP API that tells whether an account holds a computer
// credential (computer.Linker) through the account API, as the gateway's in-process one does:
// an empty list of an account that holds none says how to link one (computer.NoneLinked), on
// the CLI and the stdio bridge as on /mcp and the web console.
type linking struct{ hostapi.HTTP }

var _ computer.Linker = linking{}

// ComputerCredentials implements computer.Linker: GET /trapos/credentials?account=…, which
// a user's token may ask of its own account.
func (t linking) ComputerCredentials(ctx context.Context, accountID string) (account.Holding, error) {
	creds, err := accountapi.Client{URL: t.URL, Token: t.Token}.Credentials(ctx, accountID)
	if err != nil {
		return account.HoldsOne, err
	}
	return account.HoldingOf(creds), nil
}

// removeLine is the command line that deletes path (as cctext.ShowPath shows it, which rm
// reads back) on the computer traposID, through the same gateway (--url when it is not the
// default; never the token), each word quoted for the shell where it needs it.
func (f APIFlags) removeLine(traposID, path string) string {
	return f.commandLine("rm", typedID(traposID), path)
}

// commandLine is the line that runs the CLI's command sub with args through the same gateway
// (--url when it is not the default; never the token), each word quoted for the shell where it
// needs it.
func (f APIFlags) commandLine(sub string, args ...string) string {
	line := "trap-sandbox " + sub
	if f.URL != defaultURL {
		line += " --url " + shellWord(f.URL)
	}
	for _, a := range args {
		line += " " + shellWord(a)
	}
	return line
}

// shellWord is s as one word of a POSIX shell's command line: as it is when it holds only
// characters no shell reads specially, else in single quotes (a quote in it ends them, is
// escaped, and opens them again).
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._:,+=@%-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// failure words a command's error for the operator's terminal: "computer 7:kitchen ls /: the
// computer answered forbidden: …" (the traposId first, so that its colon is never doubled),
// with whatever the computer or the gateway wrote escaped (showMessage), and the command as
// typed by the same rule: a path in either reads as ls shows it (/a\xa0b).
func failure(traposID, command string, err error) error {
	return failureWith(traposID, command, err, "", 0)
}

// callFailure is failure of a call given timeout (its --timeout), so that one that had the
// most already is not told to give it longer (failureWith): cat, get and put have it by default.
func callFailure(traposID, command string, timeout CallTimeout, err error) error {
	return failureWith(traposID, command, err, "", timeout.Duration())
}

// runFailure is failure for exec and run: a timeout the computer answered (it abandoned the
// run at its limit) says, after the --timeout fix, that no time ends code that waits for
// input or never ends (a loop printing a tick every second was told only to take longer),
// and where such code runs on and gets keys: the computer's own screen, trap-sandbox screen.
// typedLine is run's command line (empty for exec).
func (f APIFlags) runFailure(traposID, command, typedLine string, timeout time.Duration, err error) error {
	var more string
	if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.ByComputer && pe.Code == protocol.CodeTimeout {
		// What is typed there: the command line itself, when short enough to read.
		typed := "door"
		if c := strings.TrimSpace(typedLine); command == "run" && c != "" && utf8.RuneCountInString(c) <= 60 {
			typed = c
		}
		type event struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		events, _ := json.Marshal(map[string][]event{"events": {{Type: "char", Text: typed + "\n"}}})
		where := "where it runs on and takes what you type: " + f.commandLine("screen", typedID(traposID)) +
			" in a terminal, or type on it with " + f.commandLine("request", typedID(traposID), "screen.input", string(events))
		if command == "exec" {
			more = "; code that waits for input or never ends (a loop, a server) is stopped whatever time it is given: " +
				"put it in a file (put) and run that on the computer's screen, " + where
		} else {
			more = "; a program that waits for input or never ends (a loop, a server) is stopped whatever time it is given: " +
				"start it on the computer's screen, " + where
		}
	}
	return failureWith(traposID, command, err, more, timeout)
}

// failureWith is failure with more said inside a timeout's --timeout fix. A call that had the
// most time already (timeout, the call's --timeout; 0 when not known) is told that more is no
// fix: told "--timeout gives it longer, at most 60s" after --timeout 60s, the operator ran it
// again as it was, a minute for nothing.
func failureWith(traposID, command string, err error, more string, timeout time.Duration) error {
	longer := fmt.Sprintf("--timeout gives it longer, at most %ds", int(computer.MaxTimeout.Seconds()))
	if timeout >= computer.MaxTimeout {
		longer = fmt.Sprintf("--timeout was %ds already, the most a call may take", int(computer.MaxTimeout.Seconds()))
	}
	return failureFix(traposID, command, err, "("+longer+more+")")
}

// failureFix is failure with fix after a timeout's message (a computer's, or the gateway's);
// "" adds none.
func failureFix(traposID, command string, err error, fix string) error {
	what := fmt.Sprintf("computer %s %s", typedID(traposID), cctext.ShowComposed(cctext.Clip(command, maxCommandBytes), false))
	var pe *protocol.Error
	if strings.TrimSpace(traposID) == "" && errors.As(err, &pe) && !pe.ByComputer {
		// No computer named: the vocabulary's client refused before asking anyone, and its
		// message says so; "computer  ping" would name a blank.
		return named(cctext.ShowComposed(cctext.Clip(command, maxCommandBytes), false), errors.New(showMessage(pe.Message)))
	}
	if end, ok := errors.AsType[streamEnded](err); ok && !end.why.ByComputer {
		// A screen stream's end, "not_connected: computer 7:kitchen disconnected", and what
		// the view said after it ("; it did not come back within 5m0s (--wait)").
		code := string(end.why.Code) + ": "
		if why, ok := strings.CutPrefix(err.Error(), code); ok {
			return named(what, errors.New(cctext.Show(code+onceNamed(traposID, why), false)))
		}
	}
	if !errors.As(err, &pe) {
		return named(what, errors.New(cctext.Show(err.Error(), false)))
	}
	message := pe.Message
	if before, _, _ := pe.Said(); strings.HasPrefix(before, computerNamed(traposID)) {
		message = onceNamed(traposID, message)
	}
	who := "the gateway answered"
	switch {
	case pe.ByComputer:
		who = "the computer answered"
	case pe.Code == protocol.CodeBadPayload:
		// The vocabulary's client checks what it sends before sending it, here as on the
		// gateway (a type or path CC cannot hold, a file over a limit): nobody was asked.
		who = "refused"
	}
	msg := fmt.Sprintf("%s %s: %s", who, cctext.Show(cctext.Clip(string(pe.Code), maxCodeBytes), false), showMessage(message))
	if pe.Attributed {
		msg = showMessage(message) // it already says who answered what
	}
	if pe.Code == protocol.CodeTimeout && !pe.Attributed && fix != "" { // a silent gateway: more time is no fix
		msg = computer.WithTimeoutFix(msg, fix)
	}
	return named(what, errors.New(msg))
}

// onceNamed is why, the gateway's words in the failure of a command on computer traposID
// (failureFix's), with the computer they begin by naming, "computer 7:kitchen …", as "the
// computer …": the failure's WHAT names it already ("computer 7:kitchen ls /: the gateway
// answered not_connected: the computer is not connected; …"), and a line that named it twice
// read as about two computers, or one to look for twice. Words naming it otherwise, or
// another computer, are kept as they are (only the gateway's, or the host's before a
// computer's: a computer's own words are its own). The one home of the rule, for every command
// on a computer: ls, cat, exec, ping, the live screen's end.
func onceNamed(traposID, why string) string {
	if rest, ok := strings.CutPrefix(why, computerNamed(traposID)); ok {
		return "the computer " + rest
	}
	return why
}

// computerNamed is how the gateway's words begin naming computer traposID, as a CLI failure
// names it (typedID).
func computerNamed(traposID string) string { return "computer " + typedID(traposID) + " " }

// listFailure words the error of a command that lists something of the gateway's (computers,
// ai-turns) for the operator's terminal: "list computers: the gateway at … answered 401: …",
// "list agent turns: the gateway answered ai_disabled: …", as failure words the gateway's
// answers.
func listFailure(what string, err error) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	switch {
	case !ok:
		return named(what, errors.New(cctext.Show(err.Error(), false)))
	case pe.Attributed: // it already says who answered what, as failure's messages do
		return named(what, errors.New(cctext.ShowComposed(pe.Message, false)))
	}
	return namedf(what, "the gateway answered %s: %s", cctext.Show(cctext.Clip(string(pe.Code), maxCodeBytes), false), showMessage(pe.Message))
}

// maxCodeBytes bounds an error code as the CLI shows it: codes are short words
// (docs/protocol.md "Error codes"), and a computer could send one of any length.
const maxCodeBytes = 64

// maxCommandBytes bounds the command a failure names (a request's type as typed may be of any
// length; the message says how long).
const maxCommandBytes = 300

// typedID is a traposId the user typed as the CLI's messages show it: in a list's form
// (cctext.ShowTraposID), whichever form was typed (7:kitchen\xa0 or the no-break space itself).
func typedID(typed string) string { return cctext.ShowTraposID(cctext.TraposID(typed)) }

// showMessage is an error message for the terminal, the one way the CLI shows a computer's
// words and the gateway's (cctext.ShowComposed: they name a computer in its shown form, which
// a backslash's escape would spell twice): a path the computer named in it reads as ls
// shows it ("/a\xa0b: No such file", where the no-break space printed as a space named
// another file), a control character as \xNN. A message may show a
// screen (a lua.exec or shell.run past its timeout answers with what its screen showed): its
// line breaks are kept and every line after the first that shows something is indented, so
// none passes for a line of the CLI's own. A blank row (the editor's, between its text and
// its status bar) stays an empty line, as the computer sends it with its trailing spaces
// trimmed: indented, it was a line of two spaces, trailing whitespace that a pasted error
// carried along and that read as a row holding something.
func showMessage(s string) string {
	lines := strings.Split(cctext.ShowComposed(s, true), "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i] != "" {
			lines[i] = "  " + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// warn prints one line per character the computer could not be sent (the text rule); of text
// that err says reached no computer, what it would have been sent as (cctext.Unsent).
func warn(stderr io.Writer, reps []cctext.Replacement, err error) {
	for _, r := range cctext.Unsent(reps, err) {
		fmt.Fprintf(stderr, "trap-sandbox: warning: %s\n", r.Message)
	}
}

// ComputersCmd lists the connected computers.
type ComputersCmd struct {
	APIFlags
}

// none is what an empty list says: whose computers it is of, " in account alice (…)" for a
// user account's token, which reaches that account's computers only ("no computers connected"
// sent its holder looking for why none was, when others' were), and for such an account that
// holds no computer credential how to link one (computer.NoneLinked), as /mcp and the API's
// not_connected say it; nothing more for a token that reaches every computer (an admin's, the
// gateway's own), or when the gateway cannot say (reachOf).
func (c *ComputersCmd) none(ctx context.Context) string {
	const none = "no computers connected"
	caller, known := reachOf(ctx, c.APIFlags)
	if !known || caller.Admin {
		return none
	}
	if holding := c.client().Holding(account.WithCaller(ctx, caller)); holding.Unlinked() {
		return none + ": " + computer.NoneLinked(caller.Account, holding)
	}
	return fmt.Sprintf("%s in account %s (this token reaches that account's computers only)", none, caller.Account)
}

// reachOf is whose computers the gateway at flags' URL lets its token reach, as the gateway
// admitted a call with it already (a list, the stdio bridge's check): no token, or one that is
// no account's (SANDBOX_API_TOKEN), reaches every computer (account.LocalAdmin); an account's,
// its account's, or every computer for an admin's. The gateway's account list tells, asked
// only then: a user's token sees its own account alone, and an admin's sees its own admin
// account among any others (which of them is its own it does not say: the Caller's Account is
// then empty). known is false when the list cannot be had (an older gateway, a store down).
func reachOf(ctx context.Context, flags APIFlags) (caller account.Caller, known bool) {
	if account.TokenID(flags.APIToken) == "" {
		return account.LocalAdmin, true
	}
	accounts, err := accountapi.Client{URL: flags.URL, Token: flags.APIToken}.Accounts(ctx)
	switch {
	case err != nil || len(accounts) == 0:
		return account.Caller{}, false
	case len(accounts) == 1 && accounts[0].Role == account.RoleUser:
		return account.Caller{Account: accounts[0].ID}, true
	case len(accounts) == 1:
		return account.Caller{Account: accounts[0].ID, Admin: true}, true
	}
	return account.Caller{Admin: true}, true
}

// Run prints the table of connected computers; with none, it says so on stderr and prints
// no table, since its columns (REPLICA or not) follow the computers listed.
func (c *ComputersCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, computer.DefaultTimeout)
	defer cancel()
	list, partial, err := c.client().ComputersNoted(ctx)
	if err != nil {
		return listFailure("list computers", err)
	}
	if partial != "" {
		// Before the list or its empty-list words: "no computers connected" alone, from a
		// replica cut off from NATS, read as none anywhere while the others held theirs.
		fmt.Fprintf(stderr, "trap-sandbox: %s\n", partial)
	}
	if len(list) == 0 {
		// A header alone read as a table of nothing, with a REPLICA column or without one
		// whether the gateway is one of several replicas or not, which an empty list cannot
		// tell; a script reading the rows gets none either way.
		_, err := fmt.Fprintln(stderr, c.none(ctx))
		return err
	}
	// Replicas sharing computers over NATS name the holder of each; a single gateway does not.
	replicas := slices.ContainsFunc(list, func(cp computer.Computer) bool { return cp.Replica != "" })
	tw := table.NewWriter(out, 2)
	header := "TRAPOS ID\tACCOUNT\tCLIENT\tCONNECTED SINCE\tREMOTE\tLAST FRAME"
	if replicas {
		header += "\tREPLICA"
	}
	fmt.Fprintln(tw, header)
	for _, cp := range list {
		client := cp.ClientVersion
		if client == "" {
			client = "-" // a client older than clientVersion in hello
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s", cctext.ShowTraposID(cp.TraposID), cctext.ShowDistinct(cp.AccountID, false), cctext.ShowDistinct(client, false),
			cp.ConnectedSince.Format(time.RFC3339), cctext.ShowDistinct(cp.RemoteAddr, false), cp.LastFrameAt.Format(time.RFC3339))
		if replicas {
			fmt.Fprintf(tw, "\t%s", cctext.ShowDistinct(cp.Replica, false))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// RequestCmd sends one request to a computer and prints its payload.
type RequestCmd struct {
	APIFlags
	TraposID string      `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Type     string      `arg:"" name:"type" help:"The request type, e.g. ping."`
	Payload  string      `arg:"" optional:"" name:"json" help:"The payload, a JSON object (default {}); its strings are text (é is the byte E9)."`
	Timeout  CallTimeout `default:"10s" help:"How long the whole call may take (more than 0, at most 60s)."`
}

// Validate refuses a payload that is no JSON as the command line is read: a usage error (exit
// status 2, with the usage), as a --timeout out of range is, not a failed call.
func (c *RequestCmd) Validate() error {
	if c.Payload != "" && !json.Valid([]byte(c.Payload)) {
		return fmt.Errorf(`<json>: %q is not JSON: give an object, e.g. '{"door":"north"}', or leave it out for {}`, c.Payload)
	}
	return nil
}

// Run sends the request and prints the answer's payload as JSON.
func (c *RequestCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	if c.Type == "" && strings.TrimSpace(c.TraposID) != "" {
		return namedf("computer "+typedID(c.TraposID)+" request", "give the request's type, e.g. trap-sandbox request %s ping", typedID(c.TraposID))
	}
	var payload json.RawMessage
	if c.Payload != "" {
		payload = json.RawMessage(c.Payload) // valid JSON: Validate
	}
	answer, reps, err := c.client().Request(ctx, c.TraposID, c.Type, payload, c.Timeout.Duration())
	warn(stderr, reps, err)
	if err != nil {
		if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.ByComputer && (c.Type == protocol.TypeLuaExec || c.Type == protocol.TypeShellRun) {
			// The computer stopped the run at the payload's timeoutMs, which request sends as
			// given (5000 ms when absent), not at a share of --timeout as exec and run do.
			return failureFix(c.TraposID, "request "+c.Type, err, fmt.Sprintf("(the payload's timeoutMs gives the run longer, at most %d, and --timeout the whole call, at most %ds: give it more than timeoutMs)",
				computer.MaxTimeout.Milliseconds(), int(computer.MaxTimeout.Seconds())))
		}
		return callFailure(c.TraposID, "request "+c.Type, c.Timeout, err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, answer, "", "  "); err != nil {
		buf.Reset()
		buf.Write(answer)
	}
	_, err = fmt.Fprintln(out, cctext.Show(readableJSON(buf.Bytes()), true))
	return err
}

// PingCmd pings a computer and prints its answer and the round-trip time.
type PingCmd struct {
	APIFlags
	TraposID string      `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Timeout  CallTimeout `default:"10s" help:"How long the whole call may take (more than 0, at most 60s)."`
}

// Run pings and prints "pong from <id> in <rtt>: {"traposId":…}": the traposId is followed by
// a space, since an unlabelled computer's ends in a colon ("pong from 7: in …", never "7::").
func (c *PingCmd) Run(ctx context.Context, out Stdout) error {
	p, err := c.client().Ping(ctx, c.TraposID, c.Timeout.Duration())
	if err != nil {
		return callFailure(c.TraposID, "ping", c.Timeout, err)
	}
	answer, _ := json.Marshal(map[string]string{"traposId": p.TraposID})
	// readableJSON: a label's & < > as typed, not as Marshal's HTML escapes (\u0026).
	_, err = fmt.Fprintf(out, "pong from %s in %s: %s\n", typedID(c.TraposID), p.RoundTrip.Round(time.Microsecond), cctext.Show(readableJSON(answer), false))
	return err
}

// InfoCmd shows computer.info.
type InfoCmd struct {
	APIFlags
	TraposID string      `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Timeout  CallTimeout `default:"10s" help:"How long the whole call may take (more than 0, at most 60s)."`
}

// Run prints one "name: value" line per field, then what kind of computer it is and what its
// owner allows in words (computer.Info's Kind and Allows), peripherals last.
func (c *InfoCmd) Run(ctx context.Context, out Stdout) error {
	info, err := c.client().Info(ctx, c.TraposID, c.Timeout.Duration())
	if err != nil {
		return callFailure(c.TraposID, "info", c.Timeout, err)
	}
	var fields map[string]any
	raw, _ := json.Marshal(info)
	// Numbers as the computer wrote them: as float64, fmt wrote a free space of 1000000 bytes as
	// 1e+06 and day 100 as 1e+02.
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	if err := decoder.Decode(&fields); err != nil {
		return err
	}
	for _, shownBelow := range []string{"peripherals", "pocket", "screenWidth", "screenHeight", "allowed", "notUnderstood"} {
		delete(fields, shownBelow)
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	tw := table.NewWriter(out, 1)
	for _, name := range names {
		fmt.Fprintf(tw, "%s:\t%s\n", name, cctext.ShowDistinct(fmt.Sprint(fields[name]), false))
	}
	if note := info.Relabelled(); note != "" {
		fmt.Fprintf(tw, "relabelled:\t%s\n", note)
	}
	fmt.Fprintf(tw, "kind:\t%s\n", info.Kind())
	for i, line := range info.AllowsForAPerson() {
		name := ""
		if i == 0 {
			name = "allows:"
		}
		fmt.Fprintf(tw, "%s\t%s\n", name, line)
	}
	for i, why := range info.NotUnderstood {
		name := ""
		if i == 0 {
			name = "notUnderstood:"
		}
		fmt.Fprintf(tw, "%s\t%s (left out)\n", name, cctext.Show(why, false))
	}
	fmt.Fprintf(tw, "peripherals:\t%d\n", len(info.Peripherals))
	for _, p := range info.Peripherals {
		fmt.Fprintf(tw, "  %s\t%s\n", cctext.ShowDistinct(p.Name, false), cctext.ShowDistinct("["+strings.Join(p.Types, " ")+"]", false))
	}
	return tw.Flush()
}

// readableJSON is JSON text with each string's \uXXXX escapes of printable characters written
// as the characters (a computer's serializer escapes every byte above 0x7F, so "café" came
// out as "caf\u00E9", text no user typed); what a string means, the key order and the layout
// are kept. Control characters stay escaped, C1, DEL and the bidirectional controls too
// (cctext.ShowJSON: Go's encoder writes them raw, which a terminal may act on, and
// cctext.Show would write \x9b, which is not JSON), so each line is still JSON. Text that is
// not JSON comes back unchanged.
func readableJSON(raw []byte) string {
	var out bytes.Buffer
	for i := 0; i < len(raw); {
		if raw[i] != '"' {
			out.WriteByte(raw[i])
			i++
			continue
		}
		end := i + 1
		for end < len(raw) && raw[end] != '"' {
			if raw[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(raw) {
			return string(raw)
		}
		var s string
		if json.Unmarshal(raw[i:end+1], &s) != nil {
			return string(raw)
		}
		var str bytes.Buffer
		enc := json.NewEncoder(&str)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s) // a string always encodes
		out.Write(cctext.ShowJSON(bytes.TrimSuffix(str.Bytes(), []byte("\n"))))
		i = end + 1
	}
	return out.String()
}
