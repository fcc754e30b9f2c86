// Package packages checks the ccpm package descriptors under packages/ against each other, the
// index and the trapos/ file tree, so that a package can never ship a file that is not in the repo
// or autostart a server it does not install.
package packages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Layout of the repository as seen by the checker. File and autostart entries are install
// paths, and an install path p lives at trapos/p in this repo.
const (
	// PackagesDir holds one directory per package plus the index.
	PackagesDir = "packages"
	// IndexFile lists every package and its version, relative to PackagesDir.
	IndexFile = "index.json"
	// DescriptorFile is the descriptor inside each package directory.
	DescriptorFile = "ccpm.json"
	// InstallRoot is the directory whose tree is installed onto a computer.
	InstallRoot = "trapos"
)

// RequiredFields are the keys every ccpm.json must carry, even when the value is empty.
var RequiredFields = []string{"name", "version", "description", "dependencies", "files", "autostart"}

// versionPattern is the MAJOR.MINOR.PATCH form ccpm compares versions by.
var versionPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// Descriptor is one packages/<name>/ccpm.json.
type Descriptor struct {
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Description  string   `json:"description"`
	Dependencies []string `json:"dependencies"`
	Files        []string `json:"files"`
	Autostart    []string `json:"autostart"`
}

// IndexEntry is one package line of packages/index.json.
type IndexEntry struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Index is packages/index.json.
type Index struct {
	Packages []IndexEntry `json:"packages"`
}

// Check reads the index and every descriptor under root and returns every inconsistency found,
// joined into one error (nil when the tree is consistent). It reports all problems, not just the
// first, so one run of the test lists everything to fix.
func Check(root string) error {
	var problems []error
	report := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf(format, args...))
	}

	index, err := readIndex(filepath.Join(root, PackagesDir, IndexFile))
	if err != nil {
		return err
	}
	indexed := make(map[string]string, len(index.Packages))
	for i, e := range index.Packages {
		switch {
		case e.Name == "":
			report("index: entry %d has no name", i)
			continue
		case e.Version == "":
			report("index: package %q has no version", e.Name)
		case !versionPattern.MatchString(e.Version):
			report("index: package %q has version %q, want MAJOR.MINOR.PATCH", e.Name, e.Version)
		}
		if _, dup := indexed[e.Name]; dup {
			report("index: package %q is listed twice", e.Name)
		}
		indexed[e.Name] = e.Version
	}

	descs, err := readDescriptors(filepath.Join(root, PackagesDir), report)
	if err != nil {
		return err
	}

	for _, name := range sortedKeys(indexed) {
		if _, ok := descs[name]; !ok {
			report("index: package %q has no %s/%s/%s", name, PackagesDir, name, DescriptorFile)
		}
	}
	for _, dir := range sortedKeys(descs) {
		d := descs[dir]
		where := path.Join(PackagesDir, dir, DescriptorFile)
		if d.Name != dir {
			report("%s: name %q does not match its directory %q", where, d.Name, dir)
		}
		if !versionPattern.MatchString(d.Version) {
			report("%s: version %q, want MAJOR.MINOR.PATCH", where, d.Version)
		}
		if strings.TrimSpace(d.Description) == "" {
			report("%s: description is empty", where)
		}
		if v, ok := indexed[dir]; !ok {
			report("%s: package %q is not listed in the index", where, dir)
		} else if v != d.Version {
			report("%s: version %q, but the index says %q", where, d.Version, v)
		}
		for _, dep := range d.Dependencies {
			switch {
			case dep == dir:
				report("%s: depends on itself", where)
			case indexed[dep] == "":
				report("%s: dependency %q is not a package in the index", where, dep)
			}
		}
		checkFiles(root, where, d, report)
	}
	checkCycles(descs, report)
	return errors.Join(problems...)
}

// checkFiles verifies every file entry is a clean install path of an existing regular file
// under trapos/, listed once, and that autostart names only files the package installs.
func checkFiles(root, where string, d Descriptor, report func(string, ...any)) {
	seen := make(map[string]bool, len(d.Files))
	for _, f := range d.Files {
		if !cleanInstallPath(f) {
			report("%s: file %q is not a clean relative install path", where, f)
			continue
		}
		if seen[f] {
			report("%s: file %q is listed twice", where, f)
		}
		seen[f] = true
		info, err := os.Stat(filepath.Join(root, InstallRoot, filepath.FromSlash(f)))
		switch {
		case errors.Is(err, os.ErrNotExist):
			report("%s: file %q does not exist under %s/", where, f, InstallRoot)
		case err != nil:
			report("%s: file %q: %v", where, f, err)
		case !info.Mode().IsRegular():
			report("%s: file %q is not a regular file", where, f)
		}
	}
	for _, a := range d.Autostart {
		if !seen[a] {
			report("%s: autostart %q is not among the package's files", where, a)
		}
	}
}

// checkCycles reports dependency cycles, which would make an installer recurse forever.
func checkCycles(descs map[string]Descriptor, report func(string, ...any)) {
	const (
		unvisited = iota
		visiting
		done
	)
	state := make(map[string]int, len(descs))
	var visit func(name string, trail []string)
	visit = func(name string, trail []string) {
		switch state[name] {
		case visiting:
			report("dependency cycle: %s", strings.Join(append(trail, name), " -> "))
			return
		case done:
			return
		}
		state[name] = visiting
		for _, dep := range descs[name].Dependencies {
			if _, ok := descs[dep]; ok && dep != name {
				visit(dep, append(slices.Clone(trail), name))
			}
		}
		state[name] = done
	}
	for _, name := range sortedKeys(descs) {
		visit(name, nil)
	}
}

// cleanInstallPath accepts slash-separated relative paths without "." or ".." steps.
func cleanInstallPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && !strings.Contains(p, `\`) &&
		path.Clean(p) == p && p != "." && !strings.HasPrefix(p, "../") && p != ".."
}

func readIndex(file string) (Index, error) {
	var index Index
	raw, err := os.ReadFile(file)
	if err != nil {
		return index, fmt.Errorf("read index: %w", err)
	}
	if err := strictUnmarshal(raw, &index); err != nil {
		return index, fmt.Errorf("parse %s: %w", file, err)
	}
	return index, nil
}

// readDescriptors loads every packages/*/ccpm.json, keyed by directory name. A directory
// without a descriptor, or a descriptor that does not parse, is reported and skipped.
func readDescriptors(dir string, report func(string, ...any)) (map[string]Descriptor, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list packages: %w", err)
	}
	descs := make(map[string]Descriptor)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		where := path.Join(PackagesDir, e.Name(), DescriptorFile)
		raw, err := os.ReadFile(filepath.Join(dir, e.Name(), DescriptorFile))
		if err != nil {
			report("%s: %v", where, err)
			continue
		}
		d, err := parseDescriptor(raw)
		if err != nil {
			report("%s: %v", where, err)
			continue
		}
		descs[e.Name()] = d
	}
	return descs, nil
}

// parseDescriptor decodes a ccpm.json, insisting on every required field (an explicit empty
// list counts, a missing or null one does not) and rejecting unknown fields as likely typos.
func parseDescriptor(raw []byte) (Descriptor, error) {
	var d Descriptor
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return d, fmt.Errorf("parse: %w", err)
	}
	var missing []string
	for _, f := range RequiredFields {
		if v, ok := fields[f]; !ok || string(bytes.TrimSpace(v)) == "null" {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return d, fmt.Errorf("missing required field(s): %s", strings.Join(missing, ", "))
	}
	if err := strictUnmarshal(raw, &d); err != nil {
		return d, fmt.Errorf("parse: %w", err)
	}
	return d, nil
}

func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
