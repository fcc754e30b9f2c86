// Package cli is the trap-sandbox command line, one kong command struct per command: serve,
// whose Run wires the configuration into the server and the list of its modules (the one place
// a module is added), and the host's commands (computers, ls, put, exec, screen, mcp, accounts,
// …), which reach a running gateway over its HTTP API (a computer.Client for the computers'
// commands), or, for the account commands, work on the store itself when given no --url. It is
// apart from main so that main stays a parse, a signal context and an exit code, and so its
// tests parse and run the commands in process (NewParser).
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/kong"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"traposclient"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/accountapi"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/cluster"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/heapfloor"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/installer"
	"trap-sandbox/internal/link"
	"trap-sandbox/internal/logthrottle"
	"trap-sandbox/internal/mcp"
	"trap-sandbox/internal/opencode"
	"trap-sandbox/internal/opencodehealth"
	"trap-sandbox/internal/screen"
	"trap-sandbox/internal/server"
	"trap-sandbox/internal/spelling"
	"trap-sandbox/internal/webconsole"
)

// CLI is the root command. serve is the default, so a bare `trap-sandbox` serves.
type CLI struct {
	Version kong.VersionFlag `help:"Print trap-sandbox's version and the client version it serves, then exit."`

	Serve     ServeCmd          `cmd:"" default:"withargs" help:"Serve the sandbox modules (default)."`
	Computers ComputersGroupCmd `cmd:"" help:"List the computers connected to a running gateway (computers revoke: cut one off)."`
	Request   RequestCmd        `cmd:"" help:"Send one request to a connected computer and print its payload."`
	Ping      PingCmd           `cmd:"" help:"Ping a connected computer and print its answer and the round-trip time."`
	Info      InfoCmd           `cmd:"" help:"Show a computer's identity and state (computer.info)."`
	Ls        LsCmd             `cmd:"" help:"List a directory on a computer."`
	Cat       CatCmd            `cmd:"" help:"Print a file of a computer as text (--binary: its bytes, unchanged)."`
	Put       PutCmd            `cmd:"" help:"Copy a local file to a computer, or into a directory of it, written to a temporary name, then moved into place (-r: a directory with everything in it, bytes unchanged)."`
	Get       GetCmd            `cmd:"" help:"Copy a file of a computer to a local file or directory (-r: a directory with everything in it, bytes unchanged)."`
	Rm        RmCmd             `cmd:"" help:"Delete a file of a computer (-r: a directory with everything in it)."`
	Exec      ExecCmd           `cmd:"" help:"Run Lua on a computer as its lua program would ('-' reads the code from stdin); prints output and return values. Each exec is a chunk of its own: a global it sets is gone when it ends."`
	Run       RunCmd            `cmd:"" help:"Run a shell command line on a computer; prints its output, fails when the program does."`
	AITurns   AITurnsCmd        `cmd:"" name:"ai-turns" help:"List the computers whose agent turn (ai) is running."`
	Screen    ScreenCmd         `cmd:"" help:"Show a computer's screen live in this terminal, in colour, and type on it (Ctrl-T held: terminate; Ctrl-S held: leave)."`
	MCP       MCPCmd            `cmd:"" name:"mcp" help:"Serve the MCP tools on stdin/stdout, reaching the computers through a running gateway (for MCP clients that only start local commands)."`

	Accounts    AccountsCmd    `cmd:"" help:"Manage accounts: on the store (the gateway's data directory, run on its host; --nats: the replicas' bucket), or with --url/--api-token through a running gateway."`
	Tokens      TokensCmd      `cmd:"" help:"Manage accounts' API tokens (on the store, or with --url/--api-token through a running gateway)."`
	Credentials CredentialsCmd `cmd:"" help:"Manage computers' own credentials, their sandbox.password (on the store, or with --url/--api-token through a running gateway)."`
	Link        LinkCmd        `cmd:"" help:"Link computers to accounts: approve a computer's link code (sandbox link), make and revoke enrollment keys (on the store, or with --url/--api-token through a running gateway)."`

	Help HelpCmd `cmd:"" help:"Show the help of trap-sandbox, or of a command (trap-sandbox help accounts add is trap-sandbox accounts add --help)."`
}

// HelpCmd prints the help --help prints, of the command its arguments name (none: the list of
// commands): help is where go, git and the computers' own sandbox command keep it, and
// `trap-sandbox help` was an unknown command.
type HelpCmd struct {
	Command []string `arg:"" optional:"" help:"The command, e.g. serve or accounts add (none: every command)."`

	target *kong.Context
}

// Validate finds the command at parse time, so that one that does not exist is a usage error.
func (h *HelpCmd) Validate(kctx *kong.Context) error {
	// --help keeps the root from landing on the default command, as it does on the command line.
	target, err := kong.Trace(kctx.Kong, append(slices.Clone(h.Command), "--help"))
	if err == nil {
		err = target.Error
	}
	// serve is the default command and takes no argument: a word that is no command lands on it.
	if err != nil || (len(h.Command) > 0 && h.Command[0] != "serve" && target.Command() == "serve") {
		return fmt.Errorf("no command %q: trap-sandbox help lists the commands", strings.Join(h.Command, " "))
	}
	h.target = target
	return nil
}

// Run prints the help on stdout, as --help does.
func (h *HelpCmd) Run(stdout Stdout) error {
	h.target.Stdout = stdout
	return h.target.PrintUsage(false)
}

// Exit statuses of the trap-sandbox command (tools/trap-sandbox/README.md).
const (
	ExitOK    = 0 // served until stopped, or the client command succeeded
	ExitError = 1 // a runtime failure: bad configuration, port in use, the gateway refused
	ExitUsage = 2 // an unknown command or flag, a missing or malformed argument
	// ExitLeftOut: the command completed but left something out: a put -r or get -r that left
	// out an entry it was asked to copy (LeftOut), so that a script tells a partial copy from a
	// whole one (0) and from a failed one (1).
	ExitLeftOut = 3
)

// NewParser returns the kong parser for root, as main uses it (tests parse with it too).
func NewParser(root *CLI, options ...kong.Option) (*kong.Kong, error) {
	options = append([]kong.Option{
		kong.Name("trap-sandbox"),
		kong.Description("Sandbox service for trapos computers: for them, the trapos-cloud-gateway WebSocket (GET /trapos/ws) and the client's installer (GET /trapos/install); for the host, its HTTP API (/trapos/computers, the file routes, accounts), the web console (/console/), the MCP endpoint (/mcp), /metrics and /healthz; plus client commands for that API. The gateway's flags: trap-sandbox serve --help."),
		kong.UsageOnError(),
		kong.Vars{"version": Version(), "maxTokenTTL": maxTokenTTL()},
		kong.KindMapper(reflect.String, rawString),
		kong.TypeMapper(reflect.TypeFor[time.Duration](), durationFlag),
		kong.KindMapper(reflect.Int, numberFlag),
		kong.KindMapper(reflect.Float64, numberFlag),
		kong.PostBuild(hiddenNATSFlags),
	}, options...)
	return kong.New(root, options...)
}

// hiddenNATSFlags hides from accounts backup's help the NATS flags it takes only to refuse
// (AccountsBackupCmd): kong hides an embedded struct's flags by no tag of its own.
func hiddenNATSFlags(k *kong.Kong) error {
	for _, accounts := range k.Model.Children {
		for _, cmd := range accounts.Children {
			if accounts.Name != "accounts" || cmd.Name != "backup" {
				continue
			}
			for _, flag := range cmd.Flags {
				if flag.Group != nil && flag.Group.Key == "scale-out" {
					flag.Hidden = true
				}
			}
		}
	}
	return nil
}

// ReportUsageError writes a parse error the way main reports it, all on stderr: the command's
// usage, the error, and where the help is. Stdout is the command's data (cat's file, exec's
// output) that a script may be redirecting, so the usage never goes there. It returns the exit
// status, ExitUsage (kong's own, 80, says nothing to anyone).
func ReportUsageError(err error, stderr io.Writer) int {
	var perr *kong.ParseError
	if errors.As(err, &perr) {
		// serve is the default command, so a word that is no command reached serve, which
		// took no argument: that is the word to name, not serve's usage.
		if args := perr.Context.Args; len(args) > 0 && args[0] != "serve" && !strings.HasPrefix(args[0], "-") && perr.Context.Command() == "serve" {
			fmt.Fprintf(stderr, "trap-sandbox: unknown command %q: `trap-sandbox --help` lists the commands%s\n(a usage error: exit status %d)\n",
				args[0], commandMeant(args[0], perr.Context.Model.Node), ExitUsage)
			return ExitUsage
		}
		usage := perr.Context
		// A flag of serve's with a bad value (--request-timeout 10) fails before kong lands on
		// the default command: the usage to show is serve's, where that flag is, not the
		// list of commands.
		if args := usage.Args; usage.Selected() == nil && len(args) > 0 && strings.HasPrefix(args[0], "-") {
			if serve, err := kong.Trace(usage.Kong, []string{"serve"}); err == nil && serve.Error == nil {
				usage = serve
			}
		}
		usage.Stdout = stderr
		_ = usage.PrintUsage(true)
		if cmd := usage.Selected(); cmd != nil && cmd.Name != "serve" {
			// A client command's mistake (tokens add --ttl): its own help has the flag meant,
			// not the gateway's.
			lists := "its arguments and flags"
			if len(cmd.Children) > 0 {
				lists = "its commands" // computers --urll: the group's, whose default takes --url
			}
			fmt.Fprintf(stderr, "trap-sandbox: %s\n(a usage error: exit status %d; `trap-sandbox %s --help` lists %s)\n", usageText(err), ExitUsage, cmd.Path(), lists)
			return ExitUsage
		}
	}
	fmt.Fprintf(stderr, "trap-sandbox: %s\n(a usage error: exit status %d; `trap-sandbox --help` lists the commands, `trap-sandbox serve --help` the gateway's flags)\n", usageText(err), ExitUsage)
	return ExitUsage
}

// kongNoValue matches kong's words for a flag that ends the command line without its value
// ("--listen: expected string value but got \"EOL\" (<EOL>)"), which name an EOL nobody typed.
var kongNoValue = regexp.MustCompile(`^(--[^:]+): expected (\w+) value but got "EOL" \(<EOL>\)$`)

// noValueKinds says what a flag of each of kong's kinds wants, for usageText.
var noValueKinds = map[string]string{"duration": "a duration (10s, 2m)", "number": "a number"}

// usageText is a parse error as ReportUsageError prints it: kong's words, but for a flag given
// no value (an ExecStart= or a shell variable that was empty: --listen $ADDR), said plainly.
func usageText(err error) string {
	m := kongNoValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	flag, kind := m[1], noValueKinds[m[2]]
	if kind == "" {
		kind = "one"
	}
	return fmt.Sprintf("%s: no value after it (the command line ends there): give it %s, as %s VALUE or %s=VALUE", flag, kind, flag, flag)
}

// commandMeant is what a mistyped command word likely meant, as kong says for a subcommand
// (`unexpected argument lst, did you mean "list"?`), which it cannot say for a top-level word
// that went to the default command, serve: "; did you mean \"ping\"?" for the commands the
// word begins or is a few edits (by letters, any case) from, or "" for none. A short word
// allows fewer edits: two letters away from "c" is every short command.
func commandMeant(word string, app *kong.Node) string {
	w := strings.ToLower(word)
	if w == "version" {
		// The docs' and other tools' word for it (go version, git version); here a flag.
		return "; the version is a flag: trap-sandbox --version"
	}
	edits := min(2, len([]rune(w))/2)
	var meant []string
	for _, cmd := range app.Children {
		if cmd.Hidden {
			continue
		}
		for _, name := range append([]string{cmd.Name}, cmd.Aliases...) {
			if n := strings.ToLower(name); len(w) >= 2 && strings.HasPrefix(n, w) || spelling.Distance(w, n) <= edits {
				meant = append(meant, strconv.Quote(name))
				break
			}
		}
	}
	switch len(meant) {
	case 0:
		return ""
	case 1:
		return "; did you mean " + meant[0] + "?"
	}
	return "; did you mean one of " + strings.Join(meant, ", ") + "?"
}

// rawString takes a string argument's bytes as they are. kong's own string mapper goes
// through JSON, which turns a byte that is not UTF-8 into U+FFFD; by the text rule such a
// byte stands for itself (a computer's raw byte in a path, a local file's name).
var rawString = kong.MapperFunc(func(ctx *kong.DecodeContext, target reflect.Value) error {
	t, err := ctx.Scan.PopValue("string")
	if err != nil {
		return err
	}
	s, ok := t.Value.(string)
	if !ok {
		s = fmt.Sprint(t.Value)
	}
	target.SetString(s)
	return nil
})

// shortDuration is a serve duration below which the gateway would start and fail computers,
// which its log did not say: a slip of the unit (1ms for 1s, 30ms for 30s) is refused at start
// instead, naming what the value would do.
type shortDuration struct {
	flag       string
	got, least time.Duration
	def        time.Duration // the default, which the refusal names
	why        string        // what the value does wrong, after it: "is shorter than …"
}

// shortDurations are the serve durations with a least value that every gateway reads, one
// line each; --ai-turn-deadline's and --nats-replica-ttl's are checked with tooShort where the
// agent and the cluster router are set up, as only a gateway with them reads those.
func (c *ServeCmd) shortDurations() []shortDuration {
	return []shortDuration{
		// A socket silent for twice the period is dropped, pong included: at 1ms no computer
		// could ever connect.
		{"ping-period", c.PingPeriod, time.Second, gateway.DefaultPingPeriod,
			"is shorter than a computer's pong may take to come back across the network (a socket silent for twice it is dropped)"},
		// A computer's daemon says hello once CC tells it its socket opened, after the gateway's
		// proof of itself, checked in Lua, and a server that lags takes ticks more: at 5ms every
		// socket was closed 4008 before its hello, and the log said nothing of it.
		{"hello-timeout", c.HelloTimeout, time.Second, gateway.DefaultHelloTimeout,
			"is shorter than " + helloTakes + "; a socket without a hello within it is closed 4008)"},
		// The same for a socket opened under pressure: at 5ms every computer of a Minecraft
		// server coming back after its restart (over --upgrade-rate) was closed before its hello.
		{"pressure-hello-timeout", c.PressureHelloTimeout, time.Second, gateway.DefaultPressureHelloTimeout,
			"is shorter than " + helloTakes + "; a socket opened under pressure without a hello within it is closed 4008)"},
		// It bounds the idle probe's answer: at 1ms every computer was closed 4010 at its first
		// idle probe, and the log said their daemons did not answer.
		{"request-timeout", c.RequestTimeout, time.Second, gateway.DefaultRequestTimeout,
			"is shorter than a computer may take to answer a request (its daemon's turn on a lagging Minecraft server; a computer that has not answered the idle probe within it is closed 4010)"},
		// Each answer to the probe is a frame, after which the computer is silent again: at
		// 1ms one idle computer was pinged some 400 times a second, for as long as it stayed.
		{"idle-probe-after", c.IdleProbeAfter, time.Second, gateway.DefaultIdleProbeAfter,
			"would have the gateway ping every idle computer without end (a ping request each time it is silent this long, and its answer starts the silence again: " +
				"at 1ms some 400 a second a computer, all work for its Minecraft server)"},
	}
}

// shownDuration is d as a person writes it, and as the flag takes it: 1m, not Go's 1m0s.
func shownDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// leastLinkCodeLifetime is the shortest --link-code-lifetime that leaves a player the time to
// read the code and its account holder to approve it; a shorter one is warned of at start.
const leastLinkCodeLifetime = time.Minute

// helloTakes is what a computer's hello takes, for the refusal of a hello timeout shorter.
const helloTakes = "a computer may take to say hello once its socket opens (the gateway's proof checked in Lua, a lagging Minecraft server"

// tooShort refuses the first of ds below its least value.
func tooShort(ds []shortDuration) error {
	for _, d := range ds {
		if d.got < d.least {
			return fmt.Errorf("%s %s %s: give at least %s (the default is %s)", flagAndEnv(d.flag), d.got, d.why, d.least, shownDuration(d.def))
		}
	}
	return nil
}

// ServeCmd runs the sandbox HTTP service with the trapos-cloud-gateway module.
type ServeCmd struct {
	Listen           string        `default:":4444" env:"SANDBOX_LISTEN" help:"Address to listen on (host:port; port 0 picks a free one)."`
	ComputersListen  string        `name:"computers-listen" env:"SANDBOX_COMPUTERS_LISTEN" help:"A second address that serves computers only (their WebSocket, the installer, /healthz; host:port): for a Minecraft server on this machine, allow this port in CC's http rules, not --listen's, whose host API trusts loopback clients. Unset: none."`
	Password         string        `env:"SANDBOX_PASSWORD" help:"Secret a computer's hello must carry; give it in the environment, not here: a command line is readable by every user of the host. Unset disables the check (trusted LAN only)."`
	PasswordProofs   string        `name:"password-proofs" default:"v1,v2" env:"SANDBOX_PASSWORD_PROOFS" help:"The proofs of itself the gateway gives a computer that says hello with SANDBOX_PASSWORD: v1,v2, or v2 once every computer runs client 0.5.34 or newer (trap-sandbox computers' CLIENT column): v1's fast key lets anyone who opens a socket test password guesses offline at SHA-256's speed."`
	APIToken         string        `name:"api-token" env:"SANDBOX_API_TOKEN" help:"Bearer token for the HTTP API (/trapos/computers, /mcp, /metrics); set, every client sends it, loopback too; give it in the environment, not here. Unset: loopback clients only."`
	OpencodeURL      string        `name:"opencode-url" default:"http://127.0.0.1:4242" env:"OPENCODE_URL" help:"Base URL of the opencode server to probe."`
	OpencodeUsername string        `name:"opencode-username" default:"opencode" env:"OPENCODE_SERVER_USERNAME" help:"Basic Auth user for opencode."`
	OpencodePassword string        `name:"opencode-password" env:"OPENCODE_SERVER_PASSWORD" help:"Basic Auth password for opencode (in the environment, not here); unset sends no credentials."`
	HelloTimeout     time.Duration `default:"10s" env:"SANDBOX_HELLO_TIMEOUT" help:"How long a new socket may wait before its hello (then close 4008)."`
	ProbeTimeout     time.Duration `default:"5s" env:"SANDBOX_PROBE_TIMEOUT" help:"Bound on one opencode health probe."`
	RequestTimeout   time.Duration `default:"10s" env:"SANDBOX_REQUEST_TIMEOUT" help:"Default bound on a gateway-to-computer request."`
	ShutdownTimeout  time.Duration `default:"5s" env:"SANDBOX_SHUTDOWN_TIMEOUT" help:"Bound on a graceful shutdown."`
	PingPeriod       time.Duration `default:"30s" env:"SANDBOX_PING_PERIOD" help:"Interval of WebSocket pings; a socket silent for twice this (no frame, no pong) is dropped."`
	IdleProbeAfter   time.Duration `name:"idle-probe-after" default:"60s" env:"SANDBOX_IDLE_PROBE_AFTER" help:"Send a ping request to a computer when it, or the gateway to it, has been silent this long; no answer within the request timeout closes it (4010)."`
	MaxConnections   int           `default:"20000" env:"SANDBOX_MAX_CONNECTIONS" help:"Cap on open sockets; past it a new socket evicts one that has not said hello (HTTP 503 only when authenticated computers fill the gateway). An account other than local holds half of it at most."`
	MaxScreenViewers int           `name:"max-screen-viewers" default:"64" env:"SANDBOX_MAX_SCREEN_VIEWERS" help:"Most screen streams (the web console's views, trap-sandbox screen) and MCP wait_for_screen calls one account holds open at once, all of them together; past it a new one is refused busy. The gateway's own callers and loopback ones are one account (local)."`
	UpgradeRate      float64       `default:"200" env:"SANDBOX_UPGRADE_RATE" help:"WebSocket upgrades per second per remote address (IPv6: per /64; token bucket) past which the address's new sockets get --pressure-hello-timeout; nothing is refused. Negative turns it off."`
	UpgradeBurst     int           `default:"2000" env:"SANDBOX_UPGRADE_BURST" help:"Burst of the per-address upgrade rate."`
	MCP              bool          `name:"mcp" default:"true" negatable:"" env:"SANDBOX_MCP" help:"Serve the MCP module (tools for AI agents) at /mcp, behind the API auth; --mcp=false turns it off."`
	PublicURL        string        `name:"public-url" env:"SANDBOX_PUBLIC_URL" help:"The http(s) base URL computers reach the gateway at, behind a reverse proxy or NAT (e.g. https://mc.example.org/sandbox); the installer names it instead of the request's Host."`
	TrustedProxies   string        `name:"trusted-proxies" env:"SANDBOX_TRUSTED_PROXIES" help:"Reverse proxies whose X-Forwarded-For names the client (addresses or CIDR prefixes, comma-separated, e.g. 127.0.0.1): the per-address limits, the computers' REMOTE and the link codes then count a proxied computer by its own address, not the proxy's. Only a request from one of them is read so. Unset: none (every client is its TCP peer)."`
	LinkCodeLifetime time.Duration `name:"link-code-lifetime" env:"SANDBOX_LINK_CODE_LIFETIME" help:"How long a link code (sandbox link) may wait for its approval and its player's answer; unset: 10m (RFC 8628 advises no longer)."`
	LogLevel         LogLevel      `default:"info" env:"SANDBOX_LOG_LEVEL" help:"Log level (debug, info, warn, error; any case)."`
	HeapFloorMiB     int           `name:"heap-floor-mib" default:"32" env:"SANDBOX_HEAP_FLOOR_MIB" help:"Let at least this much garbage (MiB) build up between the Go collector's cycles: fewer cycles on a busy gateway with few computers, for at most this much more memory. 0 turns it off; GOGC still rules a heap larger than it."`
	DataDirFlags     `embed:""`
	AdmissionFlags   `embed:""`
	NATSFlags        `embed:""`
	ReplicaFlags     `embed:""`
	AIFlags          `embed:""`

	// passwordProofV1Off is PasswordProofs read (Run).
	passwordProofV1Off bool
	// secretsInArgs are the secrets given as flags (AfterApply), which every user of the host
	// reads in the command line: the start warns of them.
	secretsInArgs []string
}

// AfterApply notes the flags of the command line that carry a secret. kong puts a flag
// given on the command line in the context's path; a value from the environment is not
// there.
func (c *ServeCmd) AfterApply(kctx *kong.Context) error {
	for _, p := range kctx.Path {
		if p.Flag != nil && carriesSecret(p.Flag) {
			c.secretsInArgs = append(c.secretsInArgs, p.Flag.Name)
		}
	}
	return nil
}

// secretHome is where each serve flag that can carry a secret wants it instead: the
// environment, which other users cannot read.
var secretHome = map[string]string{
	"password": "SANDBOX_PASSWORD", "api-token": "SANDBOX_API_TOKEN", "opencode-password": "OPENCODE_SERVER_PASSWORD",
	"opencode-url": "OPENCODE_SERVER_PASSWORD", "nats-password": "SANDBOX_NATS_PASSWORD", "nats-token": "SANDBOX_NATS_TOKEN",
	"nats": "SANDBOX_NATS_USER and SANDBOX_NATS_PASSWORD, or SANDBOX_NATS_TOKEN",
}

// natsURLSecretHome is secretHome of --nats by what its URL carries (cluster.URLCredentials).
var natsURLSecretHome = map[string]string{"user and password": "SANDBOX_NATS_USER and SANDBOX_NATS_PASSWORD", "token": "SANDBOX_NATS_TOKEN"}

// carriesSecret says whether f, as given, holds a secret: a secret flag, or a URL flag with
// credentials in it (nats://user:password@host, nats://token@host, http://user:password@host).
func carriesSecret(f *kong.Flag) bool {
	switch f.Name {
	case "nats":
		// As the NATS client reads it: user:password@host:4222 without a scheme is one too.
		return cluster.URLCredentials(f.Target.String()) != ""
	case "opencode-url":
		parsed, err := url.Parse(f.Target.String())
		if err != nil || parsed.User == nil {
			return false
		}
		_, has := parsed.User.Password()
		return has
	}
	_, secret := secretHome[f.Name]
	return secret
}

// warnOfSecretsInArgs names the secrets given on the command line, and where they belong.
func (c *ServeCmd) warnOfSecretsInArgs(logger *slog.Logger) {
	if len(c.secretsInArgs) == 0 {
		return
	}
	var flags, envs []string
	for _, name := range c.secretsInArgs {
		flags = append(flags, "--"+name)
		home := secretHome[name]
		if inURL, ok := natsURLSecretHome[cluster.URLCredentials(c.NATS)]; name == "nats" && ok {
			home = inURL
		}
		// --nats with a token in it and --nats-token both belong in SANDBOX_NATS_TOKEN: the
		// line named it twice.
		if !slices.Contains(envs, home) {
			envs = append(envs, home)
		}
	}
	logger.Warn(strings.Join(flags, ", ") + " given on the command line, which every user of this host reads (ps, /proc/PID/cmdline): give the secret in the environment instead (" +
		strings.Join(envs, ", ") + "; a systemd unit's EnvironmentFile=, tools/trap-sandbox/README.md), and change it if others use this host")
}

// Run serves until ctx ends (SIGINT/SIGTERM in main). Logs go to stderr.
func (c *ServeCmd) Run(ctx context.Context, stderr io.Writer) (runErr error) {
	logger, err := c.logger(stderr)
	if err != nil {
		return err
	}
	if err := checkListen("listen", c.Listen); err != nil {
		return err
	}
	if c.ComputersListen != "" {
		if err := checkListen("computers-listen", c.ComputersListen); err != nil {
			return err
		}
		if err := checkComputersListen(c.Listen, c.ComputersListen); err != nil {
			return err
		}
	}
	for name, d := range map[string]time.Duration{"hello-timeout": c.HelloTimeout, "probe-timeout": c.ProbeTimeout, "request-timeout": c.RequestTimeout, "shutdown-timeout": c.ShutdownTimeout,
		"ping-period": c.PingPeriod, "idle-probe-after": c.IdleProbeAfter, "ai-check-wait": c.AICheckWait} {
		if d <= 0 {
			return fmt.Errorf("%s must be positive, got %s", flagAndEnv(name), d)
		}
	}
	if c.passwordProofV1Off, err = passwordProofV1Off(c.PasswordProofs); err != nil {
		return err
	}
	if c.LinkCodeLifetime < 0 {
		return fmt.Errorf("%s must be positive, got %s", flagAndEnv("link-code-lifetime"), c.LinkCodeLifetime)
	}
	if c.MaxConnections <= 0 {
		return fmt.Errorf("%s must be positive, got %d", flagAndEnv("max-connections"), c.MaxConnections)
	}
	if c.MaxScreenViewers <= 0 {
		return fmt.Errorf("%s must be positive, got %d", flagAndEnv("max-screen-viewers"), c.MaxScreenViewers)
	}
	if c.UpgradeRate == 0 || c.UpgradeBurst <= 0 {
		return fmt.Errorf("%s must be non-zero (negative disables it) and %s positive, got %g and %d", flagAndEnv("upgrade-rate"), flagAndEnv("upgrade-burst"), c.UpgradeRate, c.UpgradeBurst)
	}
	if err := c.AdmissionFlags.check(); err != nil {
		return err
	}
	// After the checks that each is positive, which say so of a 0 or a negative one.
	if err := tooShort(c.shortDurations()); err != nil {
		return err
	}
	if err := c.DataDirFlags.check(); err != nil {
		return err
	}
	if err := untrimmed("replica", c.Replica); err != nil {
		return err
	}
	if c.AIDir != "" {
		if err := unexpanded("ai-dir", c.AIDir); err != nil {
			return err
		}
	}
	if why, _ := server.TokenFlaw(c.APIToken); why != "" {
		// Started, it would refuse every client, the CLI with the same variable too.
		return fmt.Errorf("--api-token (SANDBOX_API_TOKEN) %s: no client can send it in an Authorization header (HTTP carries no control character and drops the spaces at a header's ends); remove it", why)
	}

	if c.HeapFloorMiB < 0 || c.HeapFloorMiB > maxHeapFloorMiB {
		return fmt.Errorf("%s must be 0 (off) to %d (1 TiB), got %d", flagAndEnv("heap-floor-mib"), maxHeapFloorMiB, c.HeapFloorMiB)
	}
	proxies, err := server.ParseTrustedProxies(c.TrustedProxies)
	if err != nil {
		return fmt.Errorf("%s: %w", flagAndEnv("trusted-proxies"), err)
	}

	var public *installer.Base
	if c.PublicURL != "" {
		b, err := installer.ParsePublicURL(c.PublicURL)
		if err != nil {
			return fmt.Errorf("%s: %w", flagAndEnv("public-url"), err)
		}
		public = &b
	}
	client, err := traposclient.Sandbox()
	if err != nil {
		return err
	}

	prober, err := opencode.NewProber(opencode.ProberConfig{
		URL:       c.OpencodeURL,
		Username:  c.OpencodeUsername,
		Password:  c.OpencodePassword,
		Timeout:   c.ProbeTimeout,
		AgentWait: c.AICheckWait,
	})
	if err != nil {
		return fmt.Errorf("--opencode-url (OPENCODE_URL): %w", err)
	}
	defer prober.Close()

	l, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return listenError("listen", c.Listen, err)
	}
	// GOGC is the process's: the floor holds while this gateway serves (in-process tests start
	// many; the first to start holds it, heapfloor.Start).
	defer heapfloor.Start(uint64(c.HeapFloorMiB) << 20).Stop()
	defer l.Close()                // Serve closes it too; this is for the errors before Serve
	var computersOnly net.Listener // --computers-listen's; nil: none
	if c.ComputersListen != "" {
		if computersOnly, err = net.Listen("tcp", c.ComputersListen); err != nil {
			return listenError("computers-listen", c.ComputersListen, err)
		}
		defer computersOnly.Close()
	}
	metrics := prometheus.NewRegistry() // the one registry every module records on
	// perReplica registers on metrics, with the label replica="<name>" under --nats: every
	// series of a replica names it (docs/scale-out.md).
	var perReplica prometheus.Registerer = metrics
	var gwMetrics *gateway.Metrics
	var replicas gateway.Cluster   // the other replicas, under --nats; nil: a single process
	var router *cluster.Router     // replicas, under --nats
	var sharedAccounts *account.KV // the replicas' account store under --nats
	replica := ""
	if c.NATSFlags.enabled() {
		replica = c.ReplicaFlags.replicaName(l) // host name:port by default: known once listening
		logger = logger.With("replica", replica)
	}
	c.warnAtStart(logger, l.Addr())
	if !c.NATSFlags.enabled() {
		gwMetrics = gateway.NewMetrics(metrics)
	} else {
		gwMetrics = gateway.NewReplicaMetrics(metrics, replica)
		perReplica = gateway.ReplicaRegisterer(metrics, replica)
		var err error
		router, err = c.NATSFlags.router(ctx, c.ReplicaFlags, replica, c.replicaSettings(), metrics, logger)
		if err != nil {
			return err
		}
		defer router.Close() // after Serve: the gateway's shutdown says goodbye (Leave) first
		replicas = router
		// A router that gives up (a replica of the same name, started at the same moment, is
		// the older one) stops the replica as a signal would, and the command fails with why.
		var stopServing context.CancelFunc
		ctx, stopServing = context.WithCancel(ctx)
		defer stopServing()
		go func() {
			select {
			case <-router.Failed():
				stopServing()
			case <-ctx.Done():
			}
		}()
		defer func() {
			// The router's failure is why the replica stopped, whatever the step it cut short.
			if why := router.Err(); why != nil {
				if runErr == nil || errors.Is(runErr, context.Canceled) {
					runErr = why
				} else {
					runErr = errors.Join(why, runErr)
				}
			}
		}()
		// The replicas share one account store, so an account, a token or a revocation made
		// on one holds on all. The router's connection has warned about the server already.
		nc, err := c.NATSFlags.connect(ctx, "trap-sandbox "+replica+" accounts", true, logger)
		if err != nil {
			return err
		}
		defer nc.Close()
		if sharedAccounts, err = c.NATSFlags.accountStore(ctx, nc, true); err != nil {
			return err
		}
		router.FollowAccountStore(nc)
	}

	// The process's own figures (go_goroutines, process_open_fds,
	// process_resident_memory_bytes, …): what an operator watches for a leak over hours.
	perReplica.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	var accounts *account.Accounts
	var store *account.SQLite
	if sharedAccounts != nil {
		accounts = account.New(sharedAccounts, clock.Real{})
		logger.Info("accounts", "store", "NATS key-value bucket "+account.KVBucket)
		if path := c.DataDirFlags.storeLeftUnread(); path != "" {
			// A gateway turned into a replica on its data directory: its accounts, tokens and
			// credentials stay in the file, and every one of them is refused here as unknown.
			logger.Warn("accounts: this replica keeps its accounts in NATS (the bucket "+account.KVBucket+") and does not read the account store of its data directory: "+
				"the accounts, API tokens and linked computers made on a gateway without --nats are refused unless they were copied into NATS; "+
				"copy them with trap-sandbox accounts copy --data-dir DIR --nats URL (docs/scale-out.md, From one gateway to replicas), then move the file out of the data directory",
				"store", path)
		}
	} else {
		accounts, store, err = c.DataDirFlags.open(ctx, true)
	}
	switch {
	case sharedAccounts != nil:
	case err == nil:
		defer func() { // after Serve
			if err := store.Close(); err != nil {
				// A full disk: what the -wal holds is lost to a copy of accounts.db alone.
				logger.Warn("accounts: "+err.Error(), "store", store.Path())
			}
		}()
		logger.Info("accounts", "store", store.Path())
		if store.Created() {
			// Said at a first start, and at the start that forgot the gateway's data
			// directory (a unit's SANDBOX_DATA_DIR, a --data-dir left off after an upgrade):
			// every account token and linked computer is refused then, each as a wrong one.
			logger.Info("accounts: made a new, empty store: if this gateway had accounts, they are in another data directory; start it with that --data-dir (SANDBOX_DATA_DIR), or their tokens and linked computers are refused",
				"store", store.Path())
		}
		if from := store.UpgradedFrom(); from > 0 {
			logger.Warn("accounts: upgraded the store from an older trap-sandbox's schema: an older trap-sandbox no longer opens it; to go back, restore the copy made before the upgrade (docs/accounts.md, Upgrading trap-sandbox)",
				"store", store.Path(), "from", from, "to", account.SchemaVersion())
		}
	case c.DataDir == "" && !defaultStoreExists():
		// The default place is unusable (no home, a read-only one): serve as before accounts
		// rather than not at all; an explicit --data-dir that fails stops the start instead,
		// as does a store already there that cannot be opened (damaged, of a newer
		// trap-sandbox): served without it, its accounts and linked computers would all be
		// refused, with nothing but a WARN to say why.
		logger.Warn("no account store: accounts are off (only SANDBOX_PASSWORD and SANDBOX_API_TOKEN work); give --data-dir to turn them on", "err", err)
		accounts = nil
	default:
		return err
	}

	gwConfig := gateway.Config{
		Password:           c.Password,
		PasswordProofV1Off: c.passwordProofV1Off,
		Accounts:           accounts,
		Metrics:            gwMetrics,
		Replica:            replica,
		HelloTimeout:       c.HelloTimeout,
		RequestTimeout:     c.RequestTimeout,
		PingPeriod:         c.PingPeriod,
		IdleProbeAfter:     c.IdleProbeAfter,
		MaxConnections:     c.MaxConnections,
		UpgradeRate:        c.UpgradeRate,
		UpgradeBurst:       c.UpgradeBurst,
		ClientVersion:      client.Version,
		ClientName:         client.Name,
		LoopbackAPI:        c.APIToken == "",
		ComputersPort:      c.ComputersListen != "",
	}
	c.AdmissionFlags.apply(&gwConfig)
	gw := gateway.New(gwConfig, logger, replicas)
	if store != nil && accounts != nil {
		stopFollowing, err := followRevocations(ctx, store, gw)
		if err != nil {
			return err
		}
		defer stopFollowing() // after Serve, before the store closes
	}
	opencodehealth.New(prober, perReplica).Register(gw)
	passes := account.NewPasses() // the agent's, one per computer; the server's API auth honours them
	ai, err := c.agentModule(logger, prober, l, perReplica, passes, router)
	if err != nil {
		return err
	}
	defer ai.Close() // after Serve: the sockets are gone, so every turn was stopped
	ai.Register(gw)
	transport := hostapi.NewGateway(gw).Logging(logger)
	var computers *computer.Client // the vocabulary's one client, in-process
	if router != nil {
		// An input to a computer held by another replica is typed there, under the input turn
		// of the computer's socket.
		relay := router.Peer(hostapi.InputRelayModule, func(ctx context.Context, from, accountID, traposID string, payload json.RawMessage) (json.RawMessage, error) {
			return transport.RelayedInput(computers, accounts)(ctx, from, accountID, traposID, payload)
		})
		transport = transport.OnReplica(relay)
	}
	computers = computer.New(transport)
	screenWarns := logthrottle.New(logger, clock.Real{})
	screens := screen.New(computers).Metrics(perReplica).LimitViewers(c.MaxScreenViewers, func(holder string, held int) {
		gwMetrics.ScreenViewerRefused()
		screenWarns.Log(slog.LevelWarn, "screen viewers "+holder, "a screen stream or wait_for_screen was refused: its account holds --max-screen-viewers already",
			"holder", holder, "held", held)
	})
	if router != nil {
		// A live screen through any replica: the holder of the computer's socket passes its
		// screen updates on to the replica its viewers asked.
		screens.OnReplica(replica, router.Peer("screen", screens.Relayed))
	}
	screens.Register(gw)
	accountAPI := accountapi.New(accounts, logger).Metrics(perReplica).OnCredentialRevoked(gw.CredentialRevoked).OnAccountRemoved(gw.AccountRemoved)
	linker := link.New(link.Config{Accounts: accounts, Metrics: perReplica, CodeLifetime: c.LinkCodeLifetime, Alone: router == nil}, logger)
	if router != nil {
		// An approval through any replica finds a code's socket closed on another one.
		linker.OnReplica(router.Peer(link.Name, linker.Relayed))
	}
	linker.Register(gw)
	modules := []server.Module{gw, hostapi.New(computers), screens, webconsole.New(), installer.New(client, public, logger, clock.Real{}), ai, accountAPI, linker}
	if c.MCP {
		modules = append(modules, mcp.New(computers, watchedScreens{screens}, clock.Real{}, logger))
	} else {
		modules = append(modules, mcp.Off{})
	}
	srv := server.New(logger, server.Config{APIToken: c.APIToken, Accounts: accounts, Passes: passes, Metrics: metrics, MetricsRegisterer: perReplica, ShutdownTimeout: c.ShutdownTimeout,
		PublicURL: c.PublicURL, TrustedProxies: proxies}, modules...)

	linkCodeLifetime := c.LinkCodeLifetime
	if linkCodeLifetime == 0 {
		linkCodeLifetime = account.LinkCodeTTL
	}
	logger.Info("config", "version", Version(), "opencodeHealthUrl", prober.URL(), "helloTimeout", c.HelloTimeout,
		"probeTimeout", c.ProbeTimeout, "requestTimeout", c.RequestTimeout, "shutdownTimeout", c.ShutdownTimeout,
		"linkCodeLifetime", linkCodeLifetime, "logLevel", c.LogLevel, "pingPeriod", c.PingPeriod,
		"idleProbeAfter", c.IdleProbeAfter, "maxConnections", c.MaxConnections, "maxScreenViewers", c.MaxScreenViewers, "heapFloorMiB", c.HeapFloorMiB, "upgradeRate", c.UpgradeRate,
		"upgradeBurst", c.UpgradeBurst, "password", c.Password != "", "apiToken", c.APIToken != "", "computersListen", c.ComputersListen, "trustedProxies", proxies.String(), "mcp", c.MCP, "client", client.Name+" "+client.Version,
		"scaleOut", c.NATSFlags.enabled(), slog.Group("admission", c.AdmissionFlags.logAttrs()...), "aiModel", c.AIModel)
	ifaces, _ := net.InterfaceAddrs() // none found: only the loopback line is logged
	computersAddr := l.Addr()
	if computersOnly != nil {
		computersAddr = computersOnly.Addr()
	}
	installer.LogAddresses(logger, installer.ComputerBases(computersAddr, public, ifaces))
	return srv.ServeWithComputersPort(ctx, l, computersOnly)
}

// followRevocations makes gw close the socket of each credential revoked in store by another
// process (`trap-sandbox credentials revoke` on the data directory beside the gateway), until
// stop is called.
func followRevocations(ctx context.Context, store *account.SQLite, gw *gateway.Gateway) (stop func(), err error) {
	feed, err := store.FollowRevocations(ctx, time.Now())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var following sync.WaitGroup
	following.Go(func() { gw.FollowRevocations(ctx, feed, account.RevocationPeriod) })
	return func() {
		cancel()
		following.Wait()
		_ = feed.Close()
	}, nil
}

// flagAndEnv names a serve flag with the environment variable that sets it too, for the
// refusal of a bad value, which the operator may have given either way:
// "--max-connections (SANDBOX_MAX_CONNECTIONS)".
func flagAndEnv(name string) string {
	return "--" + name + " (SANDBOX_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + ")"
}

// flagSet is a flag's name and whether it was given (a value other than its default).
type flagSet struct {
	name string
	set  bool
}

// namesOfSet is flagAndEnv of each flag given, in order: the list a warning or refusal of
// flags that do nothing without another names.
func namesOfSet(flags []flagSet) []string {
	var set []string
	for _, f := range flags {
		if f.set {
			set = append(set, flagAndEnv(f.name))
		}
	}
	return set
}

// LogLevel is --log-level: debug, info, warn or error, in any case (SANDBOX_LOG_LEVEL=DEBUG
// is what an operator types as often as debug).
type LogLevel string

// Decode implements kong.MapperValue: it takes the level in any case, and refuses anything
// else as a usage error that lists the levels.
func (l *LogLevel) Decode(ctx *kong.DecodeContext) error {
	var raw string
	if err := ctx.Scan.PopValueInto("level", &raw); err != nil {
		return err
	}
	switch v := strings.ToLower(raw); v {
	case "debug", "info", "warn", "error":
		*l = LogLevel(v)
		return nil
	}
	return fmt.Errorf("want debug, info, warn or error, got %q", raw)
}

func (c *ServeCmd) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(string(c.LogLevel)))); err != nil {
		return nil, fmt.Errorf("%s %q: %w", flagAndEnv("log-level"), c.LogLevel, err)
	}
	opts := &slog.HandlerOptions{Level: level}
	if onJournal(w) {
		return slog.New(newJournalHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}

// spareFiles is what the process needs besides its sockets: the listener, logs, opencode
// probes, API clients, NATS.
const spareFiles = 256

// warnAtStart logs what the configuration leaves open, once logger names the replica (a
// replica's every line carries replica=); api is --listen's bound address.
func (c *ServeCmd) warnAtStart(logger *slog.Logger, api net.Addr) {
	c.warnOfSecretsInArgs(logger)
	if c.APIToken == "" {
		sayWhoIsTheHost(logger, api)
	}
	if c.Password == "" {
		logger.Warn("SANDBOX_PASSWORD is not set: ANY computer that can reach this port can connect. Set it (and sandbox.password on the computers) unless this is a trusted LAN.")
	} else {
		warnIfPasswordShort(logger, c.Password, c.passwordProofV1Off)
		warnIfPasswordUntypable(logger, c.Password)
	}
	if c.APIToken != "" {
		warnIfAPITokenShort(logger, c.APIToken)
	} else if c.PublicURL != "" && c.ComputersListen != "" {
		// The configuration docs/reverse-proxy.md gives points the proxy at the computers'
		// port, which serves no API: a warning every start of it would teach operators to
		// skip warnings. What to keep the proxy to is said once.
		logger.Info("--public-url and --computers-listen are set and SANDBOX_API_TOKEN is not: point the reverse proxy at --computers-listen's port only (docs/reverse-proxy.md); a proxy on this host to --listen's port reaches the host API as a loopback client, which needs no token")
	} else if c.PublicURL != "" {
		// --public-url is for a proxy or NAT; a proxy on this host connects from loopback.
		logger.Warn("--public-url is set and SANDBOX_API_TOKEN is not: a reverse proxy on this host reaches the host API as a loopback client, which needs no token. The API refuses requests a proxy marks with X-Forwarded-For, Forwarded or X-Real-IP, but one that adds none gets every computer: set SANDBOX_API_TOKEN")
	}
	if proxies, _ := server.ParseTrustedProxies(c.TrustedProxies); proxies.TrustsEveryone() {
		// Run refused a list that does not parse; this one trusts any client's header.
		logger.Warn("--trusted-proxies (SANDBOX_TRUSTED_PROXIES) holds every address (/0): any client can name any address in X-Forwarded-For and spend another's per-address limits, or escape its own; list only your reverse proxies' addresses")
	}
	if c.OpencodePassword == "" {
		if u, err := url.Parse(c.OpencodeURL); err == nil && u.User != nil {
			// Go's client sends a URL's user and password as Basic Auth.
			logger.Info("OPENCODE_SERVER_PASSWORD is not set: probing opencode with the user and password in OPENCODE_URL")
		} else {
			logger.Info("OPENCODE_SERVER_PASSWORD is not set: probing opencode without credentials")
		}
	}
	if c.LinkCodeLifetime > 0 && c.LinkCodeLifetime < leastLinkCodeLifetime {
		// Not refused: a test of a code's expiry gives 1s. At 5ms (a slip for 5m) every code
		// expired before its player could read it, and nothing here said why.
		logger.Warn(fmt.Sprintf("%s %s leaves a player too little time to read a link code off the computer and have it approved (trap-sandbox link approve): "+
			"the codes expire first, sandbox link says The code expired; give at least %s (the default is %s)",
			flagAndEnv("link-code-lifetime"), c.LinkCodeLifetime, shownDuration(leastLinkCodeLifetime), shownDuration(account.LinkCodeTTL)))
	}
	if set := c.setWithoutNATS(); len(set) > 0 {
		logger.Warn(strings.Join(set, ", ") + " set without --nats (SANDBOX_NATS_URL): this gateway runs alone, sharing its computers and accounts with no replica; set --nats to make it one (docs/scale-out.md)")
	}
	if set := c.setWithoutModel(); len(set) > 0 {
		logger.Warn(strings.Join(set, ", ") + " set without --ai-model (SANDBOX_AI_MODEL): the agent is off and they do nothing; set --ai-model to turn it on (docs/ai.md)")
	}
	warnIfFilesRunOut(logger, c.MaxConnections)
	if heapfloor.CollectorOff() {
		sayCollectorOff(logger, c.HeapFloorMiB, debug.SetMemoryLimit(-1))
	}
	if outgoing, ok := systemOutgoingPorts(); ok {
		warnIfPortIsOutgoing(logger, "listen", c.Listen, outgoing)
		if c.ComputersListen != "" {
			warnIfPortIsOutgoing(logger, "computers-listen", c.ComputersListen, outgoing)
		}
	}
}

// LoopbackIsTheHost is what a gateway without SANDBOX_API_TOKEN says at start of who its host
// API takes for the host, when --listen's port takes loopback clients.
const LoopbackIsTheHost = "SANDBOX_API_TOKEN is not set: the host API answers every loopback client as the host, without a token, " +
	"so every user of this machine and every program they run (another login, a service, a container sharing the host's network) " +
	"can drive and read every computer and manage the accounts; set SANDBOX_API_TOKEN unless the machine's users are all you (docs/http-api.md)"

// sayWhoIsTheHost logs LoopbackIsTheHost when the API's port takes loopback clients: a warning
// when it binds beyond loopback too (the machine is a server for computers elsewhere, more
// likely shared with other users than a workstation), else once at info. Bound to another
// address alone, a client on this machine connects from that address, not loopback, and is
// refused: nothing to say.
func sayWhoIsTheHost(logger *slog.Logger, api net.Addr) {
	tcp, ok := api.(*net.TCPAddr)
	switch {
	case !ok:
	case tcp.IP.IsUnspecified():
		logger.Warn(LoopbackIsTheHost, "listen", api.String())
	case tcp.IP.IsLoopback():
		logger.Info(LoopbackIsTheHost, "listen", api.String())
	}
}

// maxHeapFloorMiB bounds --heap-floor-mib: far past any machine's memory, and below where its
// bytes (MiB << 20) wrap around a uint64, which made 2^44 MiB a floor of 0, off without a word.
const maxHeapFloorMiB = 1 << 20

// sayCollectorOff says at start that GOGC=off, in the gateway's environment, has turned Go's
// collector off: its start-up config line still names the --heap-floor-mib given, which then
// does nothing, and /metrics' go_gc_gogc_percent reads 1.8446744073709552e+19 (Go's off), where
// the README sends the operator to read the floor's percent. Without GOMEMLIMIT (memLimit
// math.MaxInt64, Go's none) the heap grows until the machine runs out of memory: a warning.
func sayCollectorOff(logger *slog.Logger, floorMiB int, memLimit int64) {
	floor := ""
	if floorMiB > 0 {
		floor = fmt.Sprintf(", and %s %d does nothing (no cycle to put a floor under)", flagAndEnv("heap-floor-mib"), floorMiB)
	}
	if memLimit == math.MaxInt64 {
		logger.Warn("GOGC=off in the gateway's environment turns Go's collector off: with no GOMEMLIMIT its memory grows until the machine runs out"+floor+
			"; unset GOGC (tools/trap-sandbox/README.md, --heap-floor-mib), or set GOMEMLIMIT to cap it", "GOGC", "off")
		return
	}
	logger.Info("GOGC=off in the gateway's environment: Go collects only as its heap nears GOMEMLIMIT"+floor, "GOGC", "off", "GOMEMLIMIT", memLimit)
}

// warnIfFilesRunOut warns when the open-files limit would stop accepting before
// --max-connections refuses: accept then fails (EMFILE) for everyone, /healthz included,
// instead of a clear 503 for the newest socket.
func warnIfFilesRunOut(logger *slog.Logger, maxConnections int) {
	limit, ok := openFilesLimit()
	if needed := uint64(maxConnections) + spareFiles; ok && needed > limit {
		logger.Warn(fmt.Sprintf("the open-files limit is below --max-connections plus the gateway's own spare files: past it new connections fail instead of getting HTTP 503; raise the limit to at least %d (ulimit -n, LimitNOFILE=) or lower --max-connections", needed),
			"openFilesLimit", limit, "needed", needed, "maxConnections", maxConnections, "spare", spareFiles)
	}
}
