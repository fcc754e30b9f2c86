package cli

import (
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/gateway"
)

// AdmissionFlags tune what sockets may hold before their hello and how fast wrong secrets are
// answered (docs/protocol.md, Limits and timeouts). Their defaults are the gateway's Default*
// constants (a test keeps them equal). The connection cap and the upgrade rate are ServeCmd's.
type AdmissionFlags struct {
	MaxUnauthenticated           int           `name:"max-unauthenticated" default:"8192" env:"SANDBOX_MAX_UNAUTHENTICATED" help:"Cap on sockets that have not said a good hello, all addresses together; past it a new socket evicts the oldest (close 4008)."`
	MaxUnauthenticatedPerAddress int           `name:"max-unauthenticated-per-address" default:"4096" env:"SANDBOX_MAX_UNAUTHENTICATED_PER_ADDRESS" help:"Cap on one address's sockets that have not said a good hello (IPv6: per /64); past it a new socket evicts the address's oldest (close 4008)."`
	PressureHelloTimeout         time.Duration `name:"pressure-hello-timeout" default:"3s" env:"SANDBOX_PRESSURE_HELLO_TIMEOUT" help:"Hello deadline of a socket opened under pressure (its address over --upgrade-rate, or the sockets before hello at half --max-unauthenticated)."`
	FailedHelloRate              float64       `name:"failed-hello-rate" default:"1" env:"SANDBOX_FAILED_HELLO_RATE" help:"Wrong-secret answers per second per address past --failed-hello-burst; the others wait (at most 5 min). A right secret never waits."`
	FailedHelloBurst             int           `name:"failed-hello-burst" default:"10" env:"SANDBOX_FAILED_HELLO_BURST" help:"Wrong-secret answers an address gets at once."`
	FailedHelloGlobalRate        float64       `name:"failed-hello-global-rate" default:"5" env:"SANDBOX_FAILED_HELLO_GLOBAL_RATE" help:"Wrong-secret answers per second, all addresses together, past --failed-hello-global-burst; the others wait (at most 5 min), and a WARN line a minute names the addresses. A right secret never waits."`
	FailedHelloGlobalBurst       int           `name:"failed-hello-global-burst" default:"50" env:"SANDBOX_FAILED_HELLO_GLOBAL_BURST" help:"Wrong-secret answers the gateway gives at once, all addresses together."`
}

// check refuses a limit that is not positive.
func (f *AdmissionFlags) check() error {
	for name, v := range map[string]float64{
		"max-unauthenticated": float64(f.MaxUnauthenticated), "max-unauthenticated-per-address": float64(f.MaxUnauthenticatedPerAddress),
		"pressure-hello-timeout": f.PressureHelloTimeout.Seconds(), "failed-hello-rate": f.FailedHelloRate,
		"failed-hello-burst": float64(f.FailedHelloBurst), "failed-hello-global-rate": f.FailedHelloGlobalRate,
		"failed-hello-global-burst": float64(f.FailedHelloGlobalBurst),
	} {
		if v <= 0 {
			return fmt.Errorf("%s must be positive, got %v", flagAndEnv(name), v)
		}
	}
	return nil
}

// apply copies the flags into the gateway's Config.
func (f *AdmissionFlags) apply(cfg *gateway.Config) {
	cfg.MaxUnauthenticated = f.MaxUnauthenticated
	cfg.MaxUnauthenticatedPerAddress = f.MaxUnauthenticatedPerAddress
	cfg.PressureHelloTimeout = f.PressureHelloTimeout
	cfg.FailedHelloRate, cfg.FailedHelloBurst = f.FailedHelloRate, f.FailedHelloBurst
	cfg.FailedHelloGlobalRate, cfg.FailedHelloGlobalBurst = f.FailedHelloGlobalRate, f.FailedHelloGlobalBurst
}

// logAttrs are the flags for the start-up config line.
func (f *AdmissionFlags) logAttrs() []any {
	return []any{"maxUnauthenticated", f.MaxUnauthenticated, "maxUnauthenticatedPerAddress", f.MaxUnauthenticatedPerAddress,
		"pressureHelloTimeout", f.PressureHelloTimeout, "failedHelloRate", f.FailedHelloRate, "failedHelloBurst", f.FailedHelloBurst,
		"failedHelloGlobalRate", f.FailedHelloGlobalRate, "failedHelloGlobalBurst", f.FailedHelloGlobalBurst}
}

// passwordProofV1Off reads --password-proofs: whether the password's version 1 proof is
// refused (docs/protocol.md, "The gateway proves itself").
func passwordProofV1Off(proofs string) (bool, error) {
	switch strings.ReplaceAll(proofs, " ", "") {
	case "v1,v2", "v2,v1":
		return false, nil
	case "v2":
		return true, nil
	}
	return false, fmt.Errorf("%s must be v1,v2 (computers of client 0.5.33 and older prove the gateway the fast way, v1) or v2 (only client 0.5.34 and newer, the slow way), got %q",
		flagAndEnv("password-proofs"), proofs)
}

// minPasswordLength is the shortest SANDBOX_PASSWORD the gateway starts without a warning. A
// right secret is answered at once and a wrong one's answer may be held back, so a guesser who
// takes silence for "wrong" tries secrets as fast as it opens sockets, whatever the
// wrong-secret budgets; and the gateway's proof of itself (prove, answered before any hello)
// lets anyone who can open a socket test guesses offline, at the speed of SHA-256
// (docs/protocol.md, Known limitations): only a password too long and random to guess holds.
// 16 random characters are beyond both.
const minPasswordLength = 16

// warnIfPasswordShort warns when password (set) has fewer than minPasswordLength characters;
// the password itself is never logged. While the password's fast proof is given (v1Off
// false), its guessing is the worse, and switching it off is said.
func warnIfPasswordShort(logger *slog.Logger, password string, v1Off bool) {
	n := utf8.RuneCountInString(password)
	if n >= minPasswordLength {
		return
	}
	proof := "anyone who can open a socket here gets the gateway's fast proof of itself (v1), made with it, and tests guesses against that offline (a million a second on one core); --password-proofs v2 turns it off once every computer runs client 0.5.34 or newer, which leaves the slow proof (v2, some 30 guesses a second a core)"
	if v1Off {
		proof = "anyone who can open a socket here gets the gateway's slow proof of itself (v2), made with it, and tests guesses against that offline (some 30 a second a core)"
	}
	logger.Warn(fmt.Sprintf("SANDBOX_PASSWORD is short: %s, and a guesser who does not wait for the gateway's answers tries secrets as fast as it opens sockets; use at least %d random characters, e.g. openssl rand -hex 16", proof, minPasswordLength),
		"characters", n, "recommended", minPasswordLength)
}

// warnIfAPITokenShort warns when SANDBOX_API_TOKEN (set) has fewer than minPasswordLength
// characters: it opens every computer (files, Lua, programs) to any address that sends it,
// and a wrong token is answered at once, so a short one is guessed; the token is never logged.
func warnIfAPITokenShort(logger *slog.Logger, token string) {
	if n := utf8.RuneCountInString(token); n < minPasswordLength {
		logger.Warn(fmt.Sprintf("SANDBOX_API_TOKEN is short: it reaches every computer from any address, and wrong tokens are answered at once; use at least %d random characters, e.g. openssl rand -hex 16", minPasswordLength),
			"characters", n, "recommended", minPasswordLength)
	}
}

// warnIfPasswordUntypable warns when password holds characters outside CC's character set
// (above U+00FF): a player types each as '?' and the client sends what CC holds, so no
// computer could ever say this password. Neither the password nor its characters are logged.
//
// A control character (below 32, or 127 to 159: CC queues no char event for them) cannot be
// typed either: the carriage return a CRLF environment file leaves at the end of the line is
// the one an operator meets. Spaces at its ends can be typed, but seldom are meant.
func warnIfPasswordUntypable(logger *slog.Logger, password string) {
	if strings.ContainsFunc(password, func(r rune) bool { return r < ' ' || r >= 0x7f && r <= 0x9f }) {
		logger.Warn("SANDBOX_PASSWORD holds a control character (a carriage return or line break copied with it, from a CRLF environment file?): no computer can type one, so every hello with the password is refused; remove it")
	} else if strings.Trim(password, " ") != password {
		logger.Warn("SANDBOX_PASSWORD starts or ends with a space (copied with it?): every player must type it too, or their computer's hello is refused")
	}
	if _, reps := cctext.ToCC("", password); len(reps) > 0 {
		logger.Warn("SANDBOX_PASSWORD has characters outside CC's character set (above U+00FF, e.g. CJK or emoji): a computer types each as '?', so no computer can ever give this password; choose one of ASCII letters and digits, e.g. openssl rand -hex 16",
			"characters", cctext.Count(reps))
	}
}
