package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit/daemonfake"
)

// eofSignal closes reached once its reader has returned io.EOF.
type eofSignal struct {
	io.ReadCloser
	reached chan struct{}
	once    sync.Once
}

func (e *eofSignal) Read(p []byte) (int, error) {
	n, err := e.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		e.once.Do(func() { close(e.reached) })
	}
	return n, err
}

// TestTheStdioBridgeAnswersWhatItReadBeforeStdinEnded: `printf '<requests>' | trap-sandbox
// mcp` prints an answer to each request it read, though stdin ends before the answers are
// ready (the computer answers the ping only once the bridge has read the end of stdin).
func TestTheStdioBridgeAnswersWhatItReadBeforeStdinEnded(t *testing.T) {
	clearEnv(t)
	stdin := &eofSignal{reached: make(chan struct{})}
	d := daemonfake.NewLocal(nil)
	d.Before = func(ctx context.Context, _ int, typ string) error {
		if typ == "ping" {
			select {
			case <-stdin.reached:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	base := serveDisk(t, d)

	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { _ = outR.Close() })
	stdin.ReadCloser = inR

	ctx, cancel := context.WithTimeout(t.Context(), clientWait)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- (&MCPCmd{APIFlags: APIFlags{URL: base}}).Run(ctx, Stdin{stdin}, Stdout{outW})
		_ = outW.Close()
	}()
	_, err = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping","arguments":{"traposId":"7:"}}}`+"\n")
	require.NoError(t, err)
	require.NoError(t, inW.Close())

	answered := map[float64]string{}
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var msg struct {
			ID     float64         `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &msg), sc.Text())
		answered[msg.ID] = string(msg.Result)
	}
	require.NoError(t, <-done, "stdin's end is a clean exit")
	assert.Contains(t, answered[1], `"serverInfo"`, "the initialize answer")
	assert.Contains(t, answered[2], `\"traposId\":\"7:\"`, "the ping, answered after stdin ended")
}

// TestTheStdioBridgeNamesTheGatewayOnceWhenItCannotStart: a token the gateway refuses stops
// the bridge with the gateway's words, the gateway named once: it said "the gateway at URL
// cannot be used: unauthorized: the gateway at URL answered 401: …".
func TestTheStdioBridgeNamesTheGatewayOnceWhenItCannotStart(t *testing.T) {
	clearEnv(t)
	base := startGatewayHTTP(t, "tok")
	_, err := runClient(t, "mcp", "--url", base, "--api-token", "nope")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "mcp: the gateway at "+base+" cannot be used: it answered 401: missing or wrong API token"), err.Error())
	assert.Equal(t, 1, strings.Count(err.Error(), base), err.Error())
	assert.Contains(t, err.Error(), "(the token refused is the one given with --api-token or SANDBOX_API_TOKEN)")
}

// TestTheStdioBridgeNamesAComputerAsTheListGaveIt: a label holding a backslash before x, u or
// U (7:a\x41, its own four characters) is reached over the stdio bridge by the traposId
// list_computers gives, as over /mcp. The bridge sent it in the API's path as it was, where
// the gateway reads a typed id's escapes: it asked for 7:aA, another computer's id (here not
// connected; an altered client may say hello as it).
func TestTheStdioBridgeNamesAComputerAsTheListGaveIt(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/door.lua": "open"})
	d.Label = `a\x41`
	d.List[0].TraposID = d.TraposID()
	base := serveDisk(t, d)
	for tool, args := range map[string]map[string]any{
		"ping":          {},
		"read_file":     {"path": "/door.lua"},
		"send_text":     {"text": "ls"},
		"computer_info": {},
	} {
		args["traposId"] = `7:a\x41`
		texts := bridgeCall(t, base, "", tool, args)
		require.NotEmpty(t, texts, tool)
		assert.NotContains(t, texts[0], "not_connected", "%s: %s", tool, texts[0])
		// computer_info read the id asked as a typed one (7:aA), and said so of the computer.
		assert.NotContains(t, texts[0], "7:aA", "%s: %s", tool, texts[0])
		assert.NotContains(t, texts[0], "relabelled", "%s: %s", tool, texts[0])
	}
}

// TestTheStdioBridgesRemoveLineNamesTheComputerListed: a write cut off over the stdio bridge
// names the line that removes what it left (trap-sandbox rm …) with the traposId the CLI
// reads as that computer: the listed id 7:a\x41 (its label's own backslash) in its shown form,
// 7:a\x5cx41. It was read as a typed id, so the line named 7:aA, another computer's id.
func TestTheStdioBridgesRemoveLineNamesTheComputerListed(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.Label = `a\x41`
	d.List[0].TraposID = d.TraposID()
	gone := false
	d.Before = func(context.Context, int, string) error {
		if gone {
			return computer.NotConnected(d.TraposID())
		}
		return nil
	}
	writes := 0
	d.After = func(_ context.Context, _ int, typ string) error {
		if typ == protocol.TypeFSWrite {
			if writes++; writes == 2 { // written on the computer, its answer lost
				gone = true
				return computer.LeftBeforeAnswer(d.TraposID(), false)
			}
		}
		return nil
	}
	base := serveDisk(t, d)
	texts := bridgeCall(t, base, "", "write_file", map[string]any{"traposId": `7:a\x41`, "path": "/new.txt", "content": strings.Repeat("x", 3*computer.ChunkBytes)})
	require.NotEmpty(t, texts)
	assert.Contains(t, texts[0], `trap-sandbox rm --url `+base+` '7:a\x5cx41' /.trap-sandbox-upload-`, texts[0])
}

// TestAUsageErrorOfTheStdioBridgeAnswersItsClient: a usage error of the mcp command (a gateway
// URL without http://, a misspelt flag) answers the MCP client's initialize with it, as a
// gateway the bridge cannot use does: main reports it on stderr, which opencode shows nowhere,
// and opencode mcp list said only "MCP error -32000: Connection closed". Another command's
// usage error reads nothing of stdin and writes nothing on stdout.
func TestAUsageErrorOfTheStdioBridgeAnswersItsClient(t *testing.T) {
	clearEnv(t)
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"opencode","version":"1"}}}` + "\n"
	for args, want := range map[string]string{
		"mcp --url 127.0.0.1:4444": `trap-sandbox: mcp: the gateway URL "127.0.0.1:4444" is not an http:// or https:// URL: give it as http://HOST:PORT, e.g. http://127.0.0.1:4444 ` +
			"(a usage error in the command line that starts trap-sandbox mcp: trap-sandbox mcp --help lists its flags)",
		"mcp --ur http://127.0.0.1:4444": `trap-sandbox: unknown flag --ur, did you mean "--url"? ` +
			"(a usage error in the command line that starts trap-sandbox mcp: trap-sandbox mcp --help lists its flags)",
	} {
		p := takeParser(t, kong.Exit(func(int) {}))
		_, err := p.parser.Parse(strings.Fields(args))
		require.Error(t, err, args)
		var out bytes.Buffer
		AnswerUsageError(t.Context(), err, Stdin{Reader: strings.NewReader(initialize)}, Stdout{Writer: &out})
		p.giveBack()
		var answer struct {
			ID    int
			Error struct {
				Code    int
				Message string
			}
		}
		require.NoError(t, json.Unmarshal(out.Bytes(), &answer), "%s: %s", args, out.String())
		assert.Equal(t, 1, answer.ID, args)
		assert.Equal(t, -32603, answer.Error.Code, args)
		assert.Equal(t, want, answer.Error.Message, args)
	}

	p := takeParser(t, kong.Exit(func(int) {}))
	defer p.giveBack()
	_, err := p.parser.Parse([]string{"ping", "--url", "127.0.0.1:4444", "7:"})
	require.Error(t, err)
	in := strings.NewReader(initialize)
	var out bytes.Buffer
	AnswerUsageError(t.Context(), err, Stdin{Reader: in}, Stdout{Writer: &out})
	assert.Empty(t, out.String(), "not the bridge")
	assert.Equal(t, len(initialize), in.Len(), "stdin not read")
}
