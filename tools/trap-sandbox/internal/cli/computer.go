package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"trap-sandbox/internal/files"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
)

// Stdin is where `exec -` reads its code (main binds os.Stdin).
type Stdin struct{ io.Reader }

// fileTimeout bounds one put, get, cat or ls.
const fileTimeout = files.DefaultTransferTimeout

// filePath is the files route of path on traposID: each byte of the path, percent-encoded
// where it must be, so the gateway decodes exactly these bytes.
func filePath(traposID, path string) string {
	return "/trapos/computers/" + url.PathEscape(traposID) + "/files/" + escapePath(strings.TrimPrefix(path, "/"))
}

func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, part := range parts {
		parts[i] = url.PathEscape(part)
	}
	return strings.Join(parts, "/")
}

// raw sends one call and returns the status and the body; a non-200 answer in the API's
// error shape becomes an error with the code and message.
func (f APIFlags) raw(ctx context.Context, method, path string, body io.Reader) (http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(f.URL, "/")+path, body)
	if err != nil {
		return nil, nil, fmt.Errorf("--url %q: %w", f.URL, err)
	}
	if f.APIToken != "" {
		req.Header.Set("Authorization", "Bearer "+f.APIToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("call the gateway: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("read the gateway's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var apiErr gateway.APIResponse
		if json.Unmarshal(data, &apiErr) == nil && apiErr.Error != nil {
			return nil, nil, fmt.Errorf("%s: %s", printable(string(apiErr.Error.Code)), printable(apiErr.Error.Message))
		}
		return nil, nil, fmt.Errorf("the gateway answered %d: %.200s", resp.StatusCode, printable(string(data)))
	}
	return resp.Header, data, nil
}

// InfoCmd shows computer.info.
type InfoCmd struct {
	APIFlags
	TraposID string        `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Timeout  time.Duration `default:"10s" help:"How long to wait for the computer (at most 60s)."`
}

// Run prints one "name: value" line per field, peripherals last.
func (c *InfoCmd) Run(ctx context.Context, out Stdout) error {
	resp, err := c.request(ctx, c.TraposID, protocol.TypeComputerInfo, nil, c.Timeout)
	if err != nil {
		return err
	}
	var info map[string]any
	if err := json.Unmarshal(resp.Payload, &info); err != nil {
		return fmt.Errorf("computer.info answered an unexpected payload: %w", err)
	}
	peripherals, _ := info["peripherals"].([]any)
	delete(info, "peripherals")
	names := make([]string, 0, len(info))
	for name := range info {
		names = append(names, name)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(out, 0, 4, 1, ' ', 0)
	for _, name := range names {
		fmt.Fprintf(tw, "%s:\t%v\n", name, info[name])
	}
	fmt.Fprintf(tw, "peripherals:\t%d\n", len(peripherals))
	for _, p := range peripherals {
		if pm, ok := p.(map[string]any); ok {
			fmt.Fprintf(tw, "  %v\t%v\n", pm["name"], pm["types"])
		}
	}
	return tw.Flush()
}

// LsCmd lists a directory.
type LsCmd struct {
	APIFlags
	TraposID string `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Path     string `arg:"" optional:"" default:"/" help:"The directory on the computer (default /)."`
}

// Run prints one line per entry: directories with a trailing slash, files with their size.
func (c *LsCmd) Run(ctx context.Context, out Stdout) error {
	ctx, cancel := context.WithTimeout(ctx, fileTimeout)
	defer cancel()
	header, data, err := c.raw(ctx, http.MethodGet, filePath(c.TraposID, c.Path), nil)
	if err != nil {
		return fmt.Errorf("ls %s on %s: %w", c.Path, c.TraposID, err)
	}
	if !strings.HasPrefix(header.Get("Content-Type"), "application/json") {
		return fmt.Errorf("ls %s on %s: not a directory (use cat or get for a file)", c.Path, c.TraposID)
	}
	var listing struct {
		Payload struct {
			Entries []files.Entry `json:"entries"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(data, &listing); err != nil {
		return fmt.Errorf("ls %s on %s: unexpected answer: %w", c.Path, c.TraposID, err)
	}
	return writeListing(out, listing.Payload.Entries)
}

// writeListing prints one line per entry: the size right-aligned in a column (blank for a
// directory), two spaces, then the name, a directory's with a trailing slash. A name's
// control and non-UTF-8 bytes are shown escaped (\x1b), never sent to the terminal (cat and
// get keep the bytes).
func writeListing(out io.Writer, entries []files.Entry) error {
	width := 0
	for _, e := range entries {
		if !e.IsDir {
			width = max(width, len(strconv.FormatInt(e.Size, 10)))
		}
	}
	var b bytes.Buffer
	for _, e := range entries {
		raw, err := protocol.BytesOfWire(e.Name)
		if err != nil {
			raw = []byte(e.Name)
		}
		name := printable(string(raw))
		if e.IsDir {
			fmt.Fprintf(&b, "%*s  %s/\n", width, "", name)
		} else {
			fmt.Fprintf(&b, "%*d  %s\n", width, e.Size, name)
		}
	}
	_, err := out.Write(b.Bytes())
	return err
}

// getFile fetches a file's bytes; a directory is an error.
func (f APIFlags) getFile(ctx context.Context, traposID, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, fileTimeout)
	defer cancel()
	header, data, err := f.raw(ctx, http.MethodGet, filePath(traposID, path), nil)
	if err != nil {
		return nil, fmt.Errorf("read %s on %s: %w", path, traposID, err)
	}
	if strings.HasPrefix(header.Get("Content-Type"), "application/json") {
		return nil, fmt.Errorf("read %s on %s: it is a directory (use ls)", path, traposID)
	}
	return data, nil
}

// CatCmd prints a file.
type CatCmd struct {
	APIFlags
	TraposID string `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Path     string `arg:"" help:"The file on the computer."`
}

// Run writes the file's bytes to stdout.
func (c *CatCmd) Run(ctx context.Context, out Stdout) error {
	data, err := c.getFile(ctx, c.TraposID, c.Path)
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	return err
}

// GetCmd copies a computer's file to a local file.
type GetCmd struct {
	APIFlags
	TraposID string `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Remote   string `arg:"" help:"The file on the computer."`
	Local    string `arg:"" help:"The local file to write ('-' for stdout)."`
}

// Run fetches the file and writes it locally; it prints how many bytes it copied.
func (c *GetCmd) Run(ctx context.Context, out Stdout) error {
	data, err := c.getFile(ctx, c.TraposID, c.Remote)
	if err != nil {
		return err
	}
	if c.Local == "-" {
		_, err = out.Write(data)
		return err
	}
	if err := os.WriteFile(c.Local, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", c.Local, err)
	}
	_, err = fmt.Fprintf(out, "%s:%s -> %s (%d bytes)\n", c.TraposID, c.Remote, c.Local, len(data))
	return err
}

// PutCmd copies a local file to a computer.
type PutCmd struct {
	APIFlags
	TraposID string `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Local    string `arg:"" help:"The local file to send ('-' for stdin)."`
	Remote   string `arg:"" help:"The path on the computer."`
}

// Run uploads the file; it prints how many bytes the computer stored.
func (c *PutCmd) Run(ctx context.Context, out Stdout, in Stdin) error {
	var data []byte
	var err error
	if c.Local == "-" {
		data, err = io.ReadAll(in)
	} else {
		data, err = os.ReadFile(c.Local)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", c.Local, err)
	}
	ctx, cancel := context.WithTimeout(ctx, fileTimeout)
	defer cancel()
	if _, _, err := c.raw(ctx, http.MethodPut, filePath(c.TraposID, c.Remote), bytes.NewReader(data)); err != nil {
		return fmt.Errorf("put %s on %s: %w", c.Remote, c.TraposID, err)
	}
	_, err = fmt.Fprintf(out, "%s -> %s:%s (%d bytes)\n", c.Local, c.TraposID, c.Remote, len(data))
	return err
}

// ExecCmd runs a Lua chunk.
type ExecCmd struct {
	APIFlags
	TraposID string        `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Code     string        `arg:"" help:"The Lua code, e.g. 'os.getComputerLabel()', or '-' to read it from stdin."`
	Timeout  time.Duration `default:"5s" help:"How long the chunk may run on the computer (at most 60s)."`
}

// execAnswer is lua.exec's answer.
type execAnswer struct {
	Returns         []json.RawMessage `json:"returns"`
	Output          string            `json:"output"`
	OutputTruncated bool              `json:"outputTruncated"`
	Error           *string           `json:"error"`
}

// Run prints the chunk's output, then its return values one per line as JSON; a chunk that
// raised prints its error and fails.
func (c *ExecCmd) Run(ctx context.Context, out Stdout, in Stdin) error {
	code := c.Code
	if code == "-" {
		data, err := io.ReadAll(in)
		if err != nil {
			return fmt.Errorf("read the code from stdin: %w", err)
		}
		code = string(data)
	}
	payload, err := json.Marshal(map[string]any{"code": protocol.WireOfBytes([]byte(code)), "timeoutMs": c.Timeout.Milliseconds()})
	if err != nil {
		return err
	}
	// The host waits a little longer than the chunk may run, so the computer's timeout answers.
	resp, err := c.request(ctx, c.TraposID, protocol.TypeLuaExec, payload, c.Timeout+2*time.Second)
	if err != nil {
		return withTimeoutHint(resp, err)
	}
	var ans execAnswer
	if err := json.Unmarshal(resp.Payload, &ans); err != nil {
		return fmt.Errorf("lua.exec answered an unexpected payload: %w", err)
	}
	if err := writeWire(out, ans.Output); err != nil {
		return err
	}
	if ans.OutputTruncated {
		fmt.Fprintln(out, "[output cut: the computer keeps at most 16 KiB]")
	}
	if ans.Error != nil {
		return fmt.Errorf("the chunk failed on %s: %s", c.TraposID, *ans.Error)
	}
	for _, r := range ans.Returns {
		fmt.Fprintln(out, string(r))
	}
	return nil
}

// RunCmd runs a shell command line.
type RunCmd struct {
	APIFlags
	TraposID string        `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Command  string        `arg:"" help:"The command line, e.g. 'ls /rom'."`
	Timeout  time.Duration `default:"5s" help:"How long the program may run on the computer (at most 60s)."`
}

// Run prints the program's output and fails when it did.
func (c *RunCmd) Run(ctx context.Context, out Stdout) error {
	payload, err := json.Marshal(map[string]any{"command": protocol.WireOfBytes([]byte(c.Command)), "timeoutMs": c.Timeout.Milliseconds()})
	if err != nil {
		return err
	}
	resp, err := c.request(ctx, c.TraposID, protocol.TypeShellRun, payload, c.Timeout+2*time.Second)
	if err != nil {
		return withTimeoutHint(resp, err)
	}
	var ans struct {
		Success bool   `json:"success"`
		Output  string `json:"output"`
	}
	if err := json.Unmarshal(resp.Payload, &ans); err != nil {
		return fmt.Errorf("shell.run answered an unexpected payload: %w", err)
	}
	if err := writeWire(out, ans.Output); err != nil {
		return err
	}
	if !ans.Success {
		return fmt.Errorf("%q failed on %s", c.Command, c.TraposID)
	}
	return nil
}

// withTimeoutHint names the flag that gives a chunk or program more time when the computer
// abandoned it.
func withTimeoutHint(resp gateway.APIResponse, err error) error {
	if resp.Error != nil && resp.Error.Code == protocol.CodeTimeout {
		return fmt.Errorf("%w (--timeout gives it longer, at most 60s)", err)
	}
	return err
}

// writeWire writes a wire string as the bytes it stands for.
func writeWire(out io.Writer, s string) error {
	b, err := protocol.BytesOfWire(s)
	if err != nil {
		b = []byte(s)
	}
	_, err = out.Write(b)
	return err
}
