// Package traposclient is the in-game client as the gateway serves it: the trapos-sandbox
// package's descriptor (packages/trapos-sandbox/ccpm.json) and the trapos/ files it lists,
// built into whatever binary imports it. It lives at the repository root because go:embed
// cannot reach above its own module, and this is the one module that holds both trapos/ and
// packages/. Served bytes are the repository's bytes: nothing is copied or generated.
package traposclient

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sync"
)

// SandboxPackage is the name of the package the gateway serves.
const SandboxPackage = "trapos-sandbox"

//go:embed packages/trapos-sandbox/ccpm.json
var sandboxDescriptor []byte

// InstallRoot is the directory whose tree mirrors a computer's file system: install path p
// is the file InstallRoot/p.
const InstallRoot = "trapos"

//go:embed trapos
var installTree embed.FS

// Package is one ccpm package with the bytes of its files.
type Package struct {
	Name    string
	Version string
	// Files are the install paths, in the descriptor's order.
	Files []string
	// Autostart are the servers TrapOS's launcher starts at boot (install paths).
	Autostart []string

	contents map[string][]byte
}

// File returns the bytes of install path p, or false when the package does not ship p.
func (p Package) File(installPath string) ([]byte, bool) {
	b, ok := p.contents[installPath]
	return b, ok
}

var sandbox = sync.OnceValues(func() (Package, error) {
	return load(sandboxDescriptor, installTree)
})

// Sandbox returns the trapos-sandbox package. The error means the embedded descriptor is
// malformed or lists a file that trapos/ does not have; this package's test keeps that from
// ever being built.
func Sandbox() (Package, error) { return sandbox() }

// descriptor is the part of ccpm.json the gateway needs.
type descriptor struct {
	Name      string   `json:"name"`
	Version   string   `json:"version"`
	Files     []string `json:"files"`
	Autostart []string `json:"autostart"`
}

func load(raw []byte, tree fs.FS) (Package, error) {
	var d descriptor
	if err := json.Unmarshal(raw, &d); err != nil {
		return Package{}, fmt.Errorf("parse %s descriptor: %w", SandboxPackage, err)
	}
	p := Package{Name: d.Name, Version: d.Version, Files: d.Files, Autostart: d.Autostart,
		contents: make(map[string][]byte, len(d.Files))}
	for _, f := range d.Files {
		if !fs.ValidPath(f) {
			return Package{}, fmt.Errorf("%s: file %q is not a clean relative path", d.Name, f)
		}
		b, err := fs.ReadFile(tree, path.Join(InstallRoot, f))
		if err != nil {
			return Package{}, fmt.Errorf("%s: file %s: %w", d.Name, f, err)
		}
		p.contents[f] = b
	}
	return p, nil
}
