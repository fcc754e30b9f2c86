// Command importorder checks the import blocks of Go files: the standard library first, then
// other modules, then the repository's other modules (one group per module), then the file's
// own module; each group sorted and set apart from the next by a blank line. It prints every
// file that breaks the rule and exits 1 if any does.
//
// Usage: importorder -local trap-sandbox,fakecraft,tests,traposclient DIR...
package main

import (
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	local := flag.String("local", "", "comma-separated module paths of the repository")
	flag.Parse()
	locals := strings.Split(*local, ",")
	bad := 0
	for _, root := range flag.Args() {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			if problem := check(path, locals); problem != "" {
				fmt.Printf("%s: %s\n", path, problem)
				bad++
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if bad > 0 {
		fmt.Printf("%d file(s) with imports out of order: standard library, then other modules, then %s, one group each, sorted\n", bad, *local)
		os.Exit(1)
	}
}

// group ranks an import path: 0 standard library, 1 another module, 2 another module of the
// repository, 3 the file's own module. It also returns the path's local module ("" if none).
func group(path, own string, locals []string) (int, string) {
	for _, l := range locals {
		if path == l || strings.HasPrefix(path, l+"/") {
			if l == own {
				return 3, l
			}
			return 2, l
		}
	}
	first, _, _ := strings.Cut(path, "/")
	if strings.Contains(first, ".") {
		return 1, ""
	}
	return 0, ""
}

// ownModule is the module path in the go.mod nearest above file.
func ownModule(file string) string {
	dir, _ := filepath.Abs(filepath.Dir(file))
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for line := range strings.SplitSeq(string(data), "\n") {
				if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					return strings.TrimSpace(m)
				}
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// check returns what is wrong with the file's imports, or "".
func check(path string, locals []string) string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
	if err != nil {
		return "cannot parse: " + err.Error()
	}
	own := ownModule(path)
	prevLine, prevGroup, prevModule := -1, -1, ""
	var block []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		g, module := group(p, own, locals)
		line := fset.Position(imp.Pos()).Line
		newBlock := prevLine >= 0 && line > prevLine+1
		if imp.Doc != nil {
			newBlock = prevLine >= 0 && fset.Position(imp.Doc.Pos()).Line > prevLine+1
		}
		switch {
		case prevGroup < 0:
		case g < prevGroup:
			return fmt.Sprintf("%q comes after a later group", p)
		case g > prevGroup && !newBlock:
			return fmt.Sprintf("%q needs a blank line before it (a new group)", p)
		case g == prevGroup && newBlock && (g != 2 || module == prevModule):
			return fmt.Sprintf("%q is split from its group by a blank line", p)
		case g == 2 && g == prevGroup && module != prevModule && !newBlock:
			return fmt.Sprintf("%q needs a blank line before it (another module)", p)
		}
		if newBlock || g != prevGroup {
			block = block[:0]
		}
		block = append(block, p)
		if !slices.IsSorted(block) {
			return fmt.Sprintf("%q is out of order in its group", p)
		}
		prevLine, prevGroup, prevModule = fset.Position(imp.End()).Line, g, module
	}
	return ""
}
