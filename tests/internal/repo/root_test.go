package repo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRootFromFindsNearestWorkspace(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, WorkspaceFile), []byte("go 1.26\n"), 0o644))
	deep := filepath.Join(root, "a", "b", "c")
	require.NoError(t, os.MkdirAll(deep, 0o755))

	got, err := RootFrom(deep)
	require.NoError(t, err)
	assert.Equal(t, root, got)
}

func TestRootFromFailsWithoutWorkspace(t *testing.T) {
	// A temp dir has no go.work above it (the repo lives elsewhere).
	_, err := RootFrom(t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no go.work")
}

func TestRootIsThisRepository(t *testing.T) {
	root, err := Root()
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(root, "tests", "go.mod"))
}
