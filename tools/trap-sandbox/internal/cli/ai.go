package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/agent"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/cluster"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/mcp"
	"trap-sandbox/internal/opencode"
	"trap-sandbox/internal/table"
)

// AIFlags configure the agent module (docs/ai.md). Without --ai-model it is off.
type AIFlags struct {
	AIModel          string        `name:"ai-model" env:"SANDBOX_AI_MODEL" help:"PROVIDER/MODEL the computers' agent uses (as opencode names it, e.g. anthropic/claude-sonnet-4-5); unset: the agent is off (ai.* requests answer ai_disabled; docs/ai.md)."`
	AIDir            string        `name:"ai-dir" env:"SANDBOX_AI_DIR" help:"Directory of the agent's opencode sessions, one directory per computer below it, each with the opencode.json the gateway writes (default: the user's config dir/trap-sandbox/agent). opencode serve must see the same paths."`
	AIMCPURL         string        `name:"ai-mcp-url" env:"SANDBOX_AI_MCP_URL" help:"The gateway's /mcp as opencode reaches it (default: http://127.0.0.1:PORT/mcp on the listen port)."`
	AITurnDeadline   time.Duration `name:"ai-turn-deadline" default:"180s" env:"SANDBOX_AI_TURN_DEADLINE" help:"Longest agent turn; past it the turn is aborted (keep it above opencode's ~70 s of provider retries)."`
	AICheckWait      time.Duration `name:"ai-check-wait" default:"1s" env:"SANDBOX_AI_CHECK_WAIT" help:"How long a sandbox health waits for the check of the agent's model to say again a fault it found (opencode lacks the model); past it the answer leaves the fault out, and the answers after the check ends have its word."`
	AIMaxTurns       int           `name:"ai-max-turns" default:"100" env:"SANDBOX_AI_MAX_TURNS" help:"Most agent turns running at once, all computers together; past it a question is answered busy (a player with the shared password can say hello as ever new computers, each with a rate of its own)."`
	AIIdleAfter      time.Duration `name:"ai-idle-after" default:"15m" env:"SANDBOX_AI_IDLE_AFTER" help:"How long a computer's agent state stays after its last question (the gateway's, and its opencode instance, which is disposed); a computer that asks again continues its conversation."`
	AIMaxComputers   int           `name:"ai-max-computers" default:"200" env:"SANDBOX_AI_MAX_COMPUTERS" help:"Most computers with agent state (an opencode instance each) at once; past it the least recently used idle one's goes, and with none idle a new computer's question is answered busy."`
	AIMaxDirs        int           `name:"ai-max-dirs" default:"1000" env:"SANDBOX_AI_MAX_DIRS" help:"Most computers' directories (each with its conversations) an account keeps under --ai-dir; past it a new computer's takes the place of the least recently used one, whose conversations are deleted (a computer that asks again starts afresh)."`
	AIAllowHostTools bool          `name:"ai-allow-host-tools" env:"SANDBOX_AI_ALLOW_HOST_TOOLS" help:"DANGEROUS: let the agent use opencode's own tools (shell, file edits, web fetches) on THIS HOST whenever a player asks. Off by default (docs/ai.md)."`
}

// aiTurnDeadlineDefault is the default of --ai-turn-deadline (its tag says it again: kong
// reads defaults only from there).
const aiTurnDeadlineDefault = 180 * time.Second

// setWithoutModel names the agent's flags given without --ai-model, which turns the agent on:
// without it they do nothing, and an operator who set --ai-allow-host-tools or --ai-dir alone
// believed the agent configured.
func (f AIFlags) setWithoutModel() []string {
	if f.AIModel != "" {
		return nil
	}
	return namesOfSet([]flagSet{
		{"ai-dir", f.AIDir != ""},
		{"ai-mcp-url", f.AIMCPURL != ""},
		{"ai-turn-deadline", f.AITurnDeadline != aiTurnDeadlineDefault},
		{"ai-check-wait", f.AICheckWait != opencode.DefaultAgentWait},
		{"ai-max-turns", f.AIMaxTurns != agent.DefaultMaxTurns},
		{"ai-idle-after", f.AIIdleAfter != agent.DefaultIdleAfter},
		{"ai-max-computers", f.AIMaxComputers != agent.DefaultMaxComputers},
		{"ai-max-dirs", f.AIMaxDirs != agent.DefaultMaxDirs},
		{"ai-allow-host-tools", f.AIAllowHostTools},
	})
}

// agentModule builds the agent module from the serve flags; l is the gateway's listener (the
// default MCP URL's port).
// passes are the server's: each computer's pass opens its MCP calls there. router is the
// replicas' (nil: one gateway).
func (c *ServeCmd) agentModule(logger *slog.Logger, prober *opencode.Prober, l net.Listener, reg prometheus.Registerer, passes *account.Passes, router *cluster.Router) (*agent.Module, error) {
	cfg := agent.Config{Model: c.AIModel, OpencodeURL: c.OpencodeURL, Username: c.OpencodeUsername, Password: c.OpencodePassword,
		Dir: c.AIDir, MCPURL: c.AIMCPURL, Passes: passes, AllowHostTools: c.AIAllowHostTools, TurnDeadline: c.AITurnDeadline,
		MaxTurns: c.AIMaxTurns, IdleAfter: c.AIIdleAfter, MaxComputers: c.AIMaxComputers, MaxDirs: c.AIMaxDirs, Prober: prober}
	if router != nil {
		cfg.HeldElsewhere = func(accountID, traposID string) bool {
			return router.HeldElsewhere(gateway.Key{AccountID: accountID, TraposID: traposID})
		}
	}
	if c.AIModel != "" {
		if !c.MCP {
			return nil, fmt.Errorf("%s needs the MCP module (the agent acts on computers through /mcp): drop --mcp=false (SANDBOX_MCP=false)", flagAndEnv("ai-model"))
		}
		if c.AITurnDeadline <= 0 {
			return nil, fmt.Errorf("%s must be positive, got %s", flagAndEnv("ai-turn-deadline"), c.AITurnDeadline)
		}
		// At 180ms (a slip for 180s) every turn was aborted before the model could answer:
		// the players read The agent did not finish in 180ms, the log the same, each time.
		if err := tooShort([]shortDuration{{"ai-turn-deadline", c.AITurnDeadline, time.Second, agent.DefaultTurnDeadline,
			"is shorter than a model takes to answer (a turn is aborted at it; keep it above opencode's ~70 s of provider retries)"}}); err != nil {
			return nil, err
		}
		if c.AIMaxTurns <= 0 {
			return nil, fmt.Errorf("%s must be positive, got %d", flagAndEnv("ai-max-turns"), c.AIMaxTurns)
		}
		if c.AIIdleAfter <= 0 {
			return nil, fmt.Errorf("%s must be positive, got %s", flagAndEnv("ai-idle-after"), c.AIIdleAfter)
		}
		if c.AIMaxComputers <= 0 {
			return nil, fmt.Errorf("%s must be positive, got %d", flagAndEnv("ai-max-computers"), c.AIMaxComputers)
		}
		if c.AIMaxDirs <= 0 {
			return nil, fmt.Errorf("%s must be positive, got %d", flagAndEnv("ai-max-dirs"), c.AIMaxDirs)
		}
		if cfg.Dir == "" {
			base, err := os.UserConfigDir()
			if err != nil {
				return nil, fmt.Errorf("%s: no default (%w); set it", flagAndEnv("ai-dir"), err)
			}
			cfg.Dir = filepath.Join(base, "trap-sandbox", "agent")
		}
		if abs, err := filepath.Abs(cfg.Dir); err == nil {
			cfg.Dir = abs
		}
		if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
			// Named by its flag: "create the agent's directory: mkdir …" said neither which
			// setting chose it nor that it is the agent's.
			return nil, fmt.Errorf("%s: cannot make the agent's directory %s (%w): give another", flagAndEnv("ai-dir"), cfg.Dir, unwrapPath(err))
		}
		if cfg.MCPURL == "" {
			cfg.MCPURL = defaultMCPURL(l.Addr())
		}
	}
	return agent.New(cfg, logger, reg)
}

// defaultMCPURL is the gateway's own /mcp on the listen address: loopback when it listens on
// every interface.
func defaultMCPURL(addr net.Addr) string {
	host, port := "127.0.0.1", ""
	if tcp, ok := addr.(*net.TCPAddr); ok {
		port = strconv.Itoa(tcp.Port)
		if !tcp.IP.IsUnspecified() && tcp.IP != nil {
			host = tcp.IP.String()
		}
	}
	return "http://" + net.JoinHostPort(host, port) + mcp.Path
}

// AITurnsCmd lists the computers whose agent turn is running.
type AITurnsCmd struct {
	APIFlags
}

// Run prints the table of running turns; with none, it says so on stderr and prints no table,
// as the computers list does (a header alone read as a table of nothing).
func (c *AITurnsCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, computer.DefaultTimeout)
	defer cancel()
	status, data, err := c.transport().Do(ctx, http.MethodGet, agent.TurnsPath, nil)
	if err == nil && status != http.StatusOK {
		// The gateway's own words, as the computers list shows them: a wrong or expired token
		// given is named as such (not "give its API token"), another server's page as not the
		// gateway's, and an older gateway's plain 404 as older.
		err = c.transport().Refusal(status, data)
	}
	if err != nil {
		return listFailure("list agent turns", err)
	}
	var list []agent.TurnInfo
	if err := json.Unmarshal(data, &list); err != nil {
		return namedf("list agent turns", "the gateway's answer is not the list expected: %w", err)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(stderr, "no agent turn running")
		return err
	}
	tw := table.NewWriter(out, 2)
	fmt.Fprintln(tw, "TRAPOS ID\tACCOUNT\tSESSION\tTURN\tSTARTED\tSTATE")
	for _, t := range list {
		state := "running"
		if t.Stopping {
			state = "stopping"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cctext.ShowTraposID(t.TraposID), cctext.ShowDistinct(t.AccountID, false),
			cctext.ShowDistinct(t.Session, false), cctext.ShowDistinct(t.TurnID, false), t.Started.Format(time.RFC3339), state)
	}
	return tw.Flush()
}

// unwrapPath is err without the path an *fs.PathError repeats ("mkdir /x: not a directory"
// is "not a directory" when the message names /x already).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
