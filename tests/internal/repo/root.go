// Package repo locates the monorepo from inside a test, whatever directory `go test` runs in.
package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// WorkspaceFile marks the repository root: the go.work that ties the modules together.
const WorkspaceFile = "go.work"

// Root walks up from the working directory to the first directory holding go.work.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("get working directory: %w", err)
	}
	return RootFrom(dir)
}

// RootFrom walks up from dir to the first directory holding go.work.
func RootFrom(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("absolute path of %s: %w", dir, err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, WorkspaceFile)); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("stat %s: %w", filepath.Join(dir, WorkspaceFile), err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no %s above the working directory", WorkspaceFile)
		}
		dir = parent
	}
}
