// Package luasyntax compiles Lua sources with gopher-lua's parser and compiler, so a syntax error
// in a file no spec happens to load is still caught by `go test work`.
package luasyntax

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// LuaExt is the extension of the files Check compiles.
const LuaExt = ".lua"

// CheckSource parses and compiles one chunk; name appears in the error, as Lua's chunkname.
func CheckSource(name string, src []byte) (err error) {
	// The parser is generated code; a panic on odd input must become a report, not a crash.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: parser panicked: %v", name, r)
		}
	}()
	chunk, err := parse.Parse(bytes.NewReader(src), name)
	if err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	if _, err := lua.Compile(chunk, name); err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	return nil
}

// Files lists every .lua file under dir, sorted, as paths joined onto dir.
func Files(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), LuaExt) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", dir, err)
	}
	sort.Strings(files)
	return files, nil
}

// CheckFile reads and checks one file.
func CheckFile(file string) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read lua source: %w", err)
	}
	return CheckSource(file, src)
}
