package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"trap-sandbox/internal/gateway"
)

// clientTimeoutSlack is added to a request's own timeout for the HTTP round trip, so the
// gateway's timeout answer (504) arrives before the client gives up.
const clientTimeoutSlack = 5 * time.Second

// listTimeout bounds `trap-sandbox computers`.
const listTimeout = 10 * time.Second

// Stdout is where client commands print their results (main binds os.Stdout).
type Stdout struct{ io.Writer }

// APIFlags locate and authenticate against a running gateway's HTTP API.
type APIFlags struct {
	URL      string `name:"url" default:"http://127.0.0.1:4444" env:"SANDBOX_URL" help:"Base URL of the running gateway."`
	APIToken string `name:"api-token" env:"SANDBOX_API_TOKEN" help:"Bearer token of the gateway's HTTP API (unset: the gateway must be on loopback)."`
}

// do sends one API call and decodes a JSON answer into out; it returns the HTTP status.
func (f APIFlags) do(ctx context.Context, method, path string, body any, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(f.URL, "/")+path, rd)
	if err != nil {
		return 0, fmt.Errorf("--url %q: %w", f.URL, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if f.APIToken != "" {
		req.Header.Set("Authorization", "Bearer "+f.APIToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("call the gateway: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("read the gateway's answer: %w", err)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		// The gateway's own text names its variable; a person at the CLI may give the flag.
		return resp.StatusCode, fmt.Errorf("the gateway answered 401: %s (give the API token with --api-token or SANDBOX_API_TOKEN)", printable(gatewayMessage(data)))
	}
	if _, isAPI := out.(*gateway.APIResponse); !isAPI && resp.StatusCode != http.StatusOK {
		var apiErr gateway.APIResponse
		if json.Unmarshal(data, &apiErr) == nil && apiErr.Error != nil {
			return resp.StatusCode, fmt.Errorf("the gateway answered %d: %s", resp.StatusCode, printable(apiErr.Error.Message))
		}
		return resp.StatusCode, fmt.Errorf("the gateway answered %d: %.200s", resp.StatusCode, printable(string(data)))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return resp.StatusCode, fmt.Errorf("the gateway answered %d with a body that is not the expected JSON: %.200s", resp.StatusCode, printable(string(data)))
	}
	return resp.StatusCode, nil
}

// request runs POST /trapos/computers/{id}/requests and returns the answer; a gateway-side
// error (non-200) or a computer's ok:false becomes an error.
func (f APIFlags) request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (gateway.APIResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout+clientTimeoutSlack)
	defer cancel()
	body := map[string]any{"type": typ, "timeoutMs": timeout.Milliseconds()}
	if len(payload) > 0 {
		body["payload"] = payload
	}
	var out gateway.APIResponse
	status, err := f.do(ctx, http.MethodPost, "/trapos/computers/"+url.PathEscape(traposID)+"/requests", body, &out)
	if err != nil {
		return out, err
	}
	if !out.OK {
		if out.Error == nil {
			return out, fmt.Errorf("%s on %s failed (HTTP %d)", printable(typ), printable(traposID), status)
		}
		who := "the gateway"
		if status == http.StatusOK {
			who = "the computer"
		}
		return out, fmt.Errorf("%s on %s failed: %s answered %s: %s", printable(typ), printable(traposID), who,
			printable(string(out.Error.Code)), printableMessage(out.Error.Message))
	}
	return out, nil
}

// ComputersCmd lists the connected computers.
type ComputersCmd struct {
	APIFlags
}

// Run prints the table of connected computers.
func (c *ComputersCmd) Run(ctx context.Context, out Stdout) error {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	var list []gateway.ComputerJSON
	status, err := c.do(ctx, http.MethodGet, gateway.ComputersPath, nil, &list)
	if err != nil {
		return fmt.Errorf("list computers: %w", err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("list computers: the gateway answered HTTP %d", status)
	}
	// Replicas sharing computers over NATS name the holder of each; a single gateway does not.
	replicas := slices.ContainsFunc(list, func(cp gateway.ComputerJSON) bool { return cp.Replica != "" })
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s", printable(cp.TraposID), printable(cp.AccountID), printable(client),
			cp.ConnectedSince.Format(time.RFC3339), printable(cp.RemoteAddr), cp.LastFrameAt.Format(time.RFC3339))
		if replicas {
			fmt.Fprintf(tw, "\t%s", printable(cp.Replica))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// RequestCmd sends one request to a computer and prints its payload.
type RequestCmd struct {
	APIFlags
	TraposID string        `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Type     string        `arg:"" name:"type" help:"The request type, e.g. ping."`
	Payload  string        `arg:"" optional:"" name:"json" help:"The payload, a JSON object (default {})."`
	Timeout  time.Duration `default:"10s" help:"How long to wait for the computer (at most 60s)."`
}

// Run sends the request and prints the answer's payload as JSON.
func (c *RequestCmd) Run(ctx context.Context, out Stdout) error {
	var payload json.RawMessage
	if c.Payload != "" {
		if !json.Valid([]byte(c.Payload)) {
			return fmt.Errorf("the payload %q is not valid JSON", c.Payload)
		}
		payload = json.RawMessage(c.Payload)
	}
	resp, err := c.request(ctx, c.TraposID, c.Type, payload, c.Timeout)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, resp.Payload, "", "  "); err != nil {
		buf.Reset()
		buf.Write(resp.Payload)
	}
	_, err = fmt.Fprintln(out, printableLines(buf.String()))
	return err
}

// PingCmd pings a computer and prints its answer and the round-trip time.
type PingCmd struct {
	APIFlags
	TraposID string        `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Timeout  time.Duration `default:"10s" help:"How long to wait for the computer (at most 60s)."`
}

// Run pings and prints "pong from <id>: <payload> in <rtt>".
func (c *PingCmd) Run(ctx context.Context, out Stdout) error {
	start := time.Now()
	resp, err := c.request(ctx, c.TraposID, "ping", nil, c.Timeout)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "pong from %s: %s in %s\n", printable(c.TraposID), printable(string(resp.Payload)), time.Since(start).Round(time.Microsecond))
	return err
}

// gatewayMessage is the message of a gateway error answer, or the body itself (cut) when it is
// not one.
func gatewayMessage(data []byte) string {
	var apiErr gateway.APIResponse
	if json.Unmarshal(data, &apiErr) == nil && apiErr.Error != nil {
		return apiErr.Error.Message
	}
	if len(data) > 200 {
		data = data[:200]
	}
	return string(data)
}
