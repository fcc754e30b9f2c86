package cli

import (
	"bytes"
	"debug/elf"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"traposclient"
)

// buildVersion is the version given at link time (go build -ldflags "-X
// trap-sandbox/internal/cli.buildVersion=…"; tools/trap-sandbox/README.md).
var buildVersion string

// Version says which trap-sandbox this is and which client it serves, for `--version` and
// the start-up config line. Replicas must run the same one (docs/scale-out.md), and each
// one's heartbeats say it to the others.
func Version() string {
	bi, _ := debug.ReadBuildInfo()
	client := "no client"
	if p, err := traposclient.Sandbox(); err == nil {
		client = p.Name + " " + p.Version
	}
	return "trap-sandbox " + versionOf(buildVersion, bi, ownBuildID()) + " (serves " + client + ")"
}

// versionOf names a build so that an operator tells two apart: the version given at link
// time, else the module's version, else the commit the go command recorded (a go build in a
// git clone does; +dirty with uncommitted changes). What a commit does not tell apart, a
// build with changes not committed or one with no commit recorded (go run, -buildvcs=false,
// a git worktree, a copy without .git), is named by its Go build ID, the hash of the linked
// binary (id, "" when unknown): two builds of other sources differ, copies of one binary do
// not.
func versionOf(given string, bi *debug.BuildInfo, id string) string {
	if given != "" {
		return given
	}
	if bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	var rev, modified string
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	v := "devel"
	if rev != "" {
		v = rev[:min(12, len(rev))]
		if modified != "true" {
			return v
		}
		v += "+dirty"
	}
	if id != "" {
		v += " build " + id
	}
	return v
}

// buildIDShown is how much of the build ID's hash versionOf shows: 72 bits.
const buildIDShown = 12

// ownBuildID is this executable's Go build ID, read once.
var ownBuildID = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return buildIDOf(exe)
})

// buildIDOf is the last part of the Go build ID of the executable at path (what `go tool
// buildid` prints after its last slash: the hash of the linked binary's content), the first
// buildIDShown characters, or "" when it has none that can be read. On ELF the build ID is
// a note; elsewhere (Mach-O, PE) the linker writes it near the start of the file.
func buildIDOf(path string) string {
	var id string
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		id = elfBuildID(f)
	} else if f, err := os.Open(path); err == nil {
		defer f.Close()
		id = markedBuildID(f)
	}
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	return id[:min(buildIDShown, len(id))]
}

// elfBuildID reads the Go build ID note (name "Go", type 4) of an ELF executable.
func elfBuildID(f *elf.File) string {
	sec := f.Section(".note.go.buildid")
	if sec == nil {
		return ""
	}
	note, err := sec.Data()
	if err != nil || len(note) < 16 {
		return ""
	}
	// The note: name size, description size, type, then the name "Go\x00\x00" and the ID.
	nameSize, descSize, kind := f.ByteOrder.Uint32(note), f.ByteOrder.Uint32(note[4:]), f.ByteOrder.Uint32(note[8:])
	const goBuildIDNote = 4
	if nameSize != 4 || kind != goBuildIDNote || string(note[12:16]) != "Go\x00\x00" || 16+uint64(descSize) > uint64(len(note)) {
		return ""
	}
	return string(note[16 : 16+descSize])
}

// markedBuildID finds the build ID the Go linker writes as `\xff Go build ID: "…"\n \xff` in
// the first 32 KiB of a Mach-O or PE executable.
func markedBuildID(r io.Reader) string {
	head := make([]byte, 32<<10)
	n, _ := io.ReadFull(r, head)
	const marker = "\xff Go build ID: \""
	_, rest, ok := bytes.Cut(head[:n], []byte(marker))
	if !ok {
		return ""
	}
	id, _, ok := bytes.Cut(rest, []byte("\"\n \xff"))
	if !ok {
		return ""
	}
	return string(id)
}
