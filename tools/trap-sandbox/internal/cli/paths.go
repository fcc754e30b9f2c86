package cli

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
)

// shellVariable finds a variable a shell would have expanded in a path ($HOME, ${STATE_DIRECTORY}).
var shellVariable = regexp.MustCompile(`\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)`)

// unexpanded refuses a directory flag's value that holds what only a shell expands: a ~ at
// its start, or a $VARIABLE. A systemd unit's Environment= and EnvironmentFile=, a container's
// environment, a quoted ~ and one after --data-dir= (bash expands a ~ only at a word's start)
// pass it on as it is, and the gateway then made a directory named "~" (or "$HOME") in its
// working directory and kept its store there, where nobody looks (and where an operator's
// rm -rf ~ to remove it deletes their home). The answer names the path a
// shell of this process would have given, when there is one.
func unexpanded(flag, path string) error {
	if err := untrimmed(flag, path); err != nil {
		return err
	}
	if strings.HasPrefix(path, "~") {
		name, rest, _ := strings.Cut(path[1:], "/")
		home := ""
		if name == "" {
			home, _ = os.UserHomeDir()
		} else if u, err := user.Lookup(name); err == nil {
			home = u.HomeDir
		}
		return fmt.Errorf("%s %q starts with ~, which only a shell turns into a home directory, and only at a word's start (not in a systemd unit's Environment= or EnvironmentFile=, nor after --%s= or in quotes): give the whole path%s",
			flagAndEnv(flag), path, flag, forExample(home, filepath.Join(home, rest)))
	}
	if v := shellVariable.FindString(path); v != "" {
		expanded := os.ExpandEnv(path)
		return fmt.Errorf("%s %q holds %s, which only a shell expands (not a systemd unit's Environment= or EnvironmentFile=): give the whole path%s",
			flagAndEnv(flag), path, v, forExample(os.Getenv(strings.Trim(v, "${}")), expanded))
	}
	return nil
}

// forExample is ", e.g. path" when known is not empty (the home or the variable was found).
func forExample(known, path string) string {
	if known == "" {
		return ""
	}
	return ", e.g. " + path
}

// untrimmed refuses a value with a space, tab or line break at its start or end: an
// environment file with CRLF line ends (a container's --env-file, one edited on Windows) gives
// each value a carriage return, which a shell's own line would not. Taken as it was, a
// --data-dir of "/srv/ts\r" made a second, empty store beside the one the gateway had
// (every account token and linked computer refused), and a --replica of "a\r" a replica
// named unlike its twin "a".
func untrimmed(flag, value string) error {
	if err := untrimmedValue(value); err != nil {
		return fmt.Errorf("%s %w", flagAndEnv(flag), err)
	}
	return nil
}

// untrimmedValue is untrimmed's refusal without the flag's name, for a number's or duration's
// value, which kong names the flag of: their own words ("is not a whole number") left the
// carriage return unexplained.
func untrimmedValue(value string) error {
	if strings.TrimSpace(value) == value {
		return nil
	}
	return fmt.Errorf("%q has a space, tab or line break at its start or end (an environment file with CRLF line ends?): give %q", value, strings.TrimSpace(value))
}
