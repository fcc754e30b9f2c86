package traposclient

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// TestSandboxMatchesRepository proves the built-in package is the repository's: the same
// descriptor, and for every listed file the same bytes as trapos/<path> on disk.
func TestSandboxMatchesRepository(t *testing.T) {
	p, err := Sandbox()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("packages", SandboxPackage, "ccpm.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d descriptor
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if p.Name != SandboxPackage || p.Version != d.Version || len(p.Files) != len(d.Files) || len(p.Files) == 0 {
		t.Fatalf("embedded package %s %s with %d files; repository says %s %s with %d", p.Name, p.Version, len(p.Files), d.Name, d.Version, len(d.Files))
	}
	for i, f := range d.Files {
		if p.Files[i] != f {
			t.Errorf("file %d: embedded %q, repository %q", i, p.Files[i], f)
		}
		want, err := os.ReadFile(filepath.Join(InstallRoot, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := p.File(f)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("%s: embedded bytes differ from the repository's (%d vs %d bytes)", f, len(got), len(want))
		}
	}
	if _, ok := p.File("tests/libsandbox_spec.lua"); ok {
		t.Error("a file outside the descriptor is served")
	}
}

func TestLoadRejectsBrokenDescriptors(t *testing.T) {
	tree := fstest.MapFS{"trapos/apis/a.lua": {Data: []byte("x")}}
	for name, raw := range map[string]string{
		"not json":     `{`,
		"missing file": `{"name":"p","version":"1.0.0","files":["apis/b.lua"]}`,
		"escapes":      `{"name":"p","version":"1.0.0","files":["../go.mod"]}`,
	} {
		if _, err := load([]byte(raw), tree); err == nil {
			t.Errorf("%s: loaded without error", name)
		}
	}
	p, err := load([]byte(`{"name":"p","version":"1.0.0","files":["apis/a.lua"]}`), tree)
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := p.File("apis/a.lua"); !ok || string(b) != "x" {
		t.Fatalf("File = %q, %v", b, ok)
	}
}
