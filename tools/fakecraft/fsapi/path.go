package fsapi

import "strings"

// maxNameLength is the longest path component CC keeps; longer names are cut to this many bytes.
const maxNameLength = 255

// Sanitise normalises a computer path the way CC: Tweaked does before every fs operation:
// backslashes become slashes; control characters and any of `"`, `:`, `<`, `>`, `|`, `?`, `*`
// are dropped (`*` and `?` are kept when wildcards is true, as fs.combine and fs.find keep
// them); spaces around each component are trimmed (" a /b " is "a/b"); empty, "." and
// all-dots ("...") components vanish; ".." cancels the previous component, or is kept when
// there is nothing left to cancel (so "/.." stays ".." and such paths are later rejected as
// "Invalid Path"); components are cut to 255 bytes. The result has no leading or trailing
// slash; the root is "".
func Sanitise(path string, wildcards bool) string {
	var clean strings.Builder
	clean.Grow(len(path))
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c == '\\':
			clean.WriteByte('/')
		case c < 32, c == '"', c == ':', c == '<', c == '>', c == '|':
		case (c == '*' || c == '?') && !wildcards:
		default:
			clean.WriteByte(c)
		}
	}
	var out []string
	for _, part := range strings.Split(clean.String(), "/") {
		// CC trims whitespace (Java's strip); spaces are all that is left after the
		// control characters went.
		part = strings.Trim(part, " ")
		switch {
		case part == "" || allDots(part) && len(part) != 2:
			// "", "." and "..." (or longer) name nothing.
		case part == "..":
			if n := len(out); n > 0 && out[n-1] != ".." {
				out = out[:n-1]
			} else {
				out = append(out, "..")
			}
		case len(part) > maxNameLength:
			out = append(out, strings.TrimRight(part[:maxNameLength], " "))
		default:
			out = append(out, part)
		}
	}
	return strings.Join(out, "/")
}

func allDots(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '.' {
			return false
		}
	}
	return true
}

// Combine joins path parts with "/" and sanitises the result, keeping wildcards, as
// fs.combine does.
func Combine(parts ...string) string {
	return Sanitise(strings.Join(parts, "/"), true)
}

// Name is fs.getName: the last component of the sanitised path, or "root" for the root.
func Name(path string) string {
	path = Sanitise(path, true)
	if path == "" {
		return "root"
	}
	return path[strings.LastIndexByte(path, '/')+1:]
}

// Dir is fs.getDir: the sanitised path without its last component; ".." for the root, ""
// for a top-level name, and one ".." more for a path that already climbs ("../.." for "..").
func Dir(path string) string {
	path = Sanitise(path, true)
	if path == "" {
		return ".."
	}
	i := strings.LastIndexByte(path, '/')
	if path[i+1:] == ".." {
		return path + "/.."
	}
	if i >= 0 {
		return path[:i]
	}
	return ""
}

// escapes reports whether a sanitised path climbs above the root.
func escapes(path string) bool {
	return path == ".." || strings.HasPrefix(path, "../")
}

// within reports whether sanitised path p is dir or below it (case-insensitively, as CC
// matches mount points). Every valid path is within the root "".
func within(dir, p string) bool {
	if escapes(p) {
		return false
	}
	if dir == "" {
		return true
	}
	if len(p) < len(dir) || !strings.EqualFold(p[:len(dir)], dir) {
		return false
	}
	return len(p) == len(dir) || p[len(dir)] == '/'
}

// join appends a child name to a sanitised directory path.
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
