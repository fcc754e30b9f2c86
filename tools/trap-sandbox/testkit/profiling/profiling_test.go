package profiling

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestListenRefusesAnAddressOffLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "localhost"} {
		l, err := Listen(addr)
		if l != nil {
			_ = l.Close()
		}
		assert.Error(t, err, addr)
	}
}

func TestAClientTakesACPUAndAHeapProfile(t *testing.T) {
	l, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: Handler()}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	c := Client{Addr: l.Addr().String()}
	dir := t.TempDir()

	require.Error(t, c.StopCPU(filepath.Join(dir, "none")), "no profile runs")
	require.NoError(t, c.StartCPU())
	require.Error(t, c.StartCPU(), "one profile at a time")
	require.NoError(t, c.StopCPU(filepath.Join(dir, "cpu.pprof")))
	require.NoError(t, c.Save("heap", filepath.Join(dir, "heap.pprof")))
	require.NoError(t, c.Save("memstats", filepath.Join(dir, "memstats.json")))
	require.NoError(t, c.Save("live-heap", filepath.Join(dir, "live-heap.pprof")))
	require.NoError(t, c.Save("live-memstats", filepath.Join(dir, "live-memstats.json")))
	for _, name := range []string{"cpu.pprof", "heap.pprof", "memstats.json", "live-heap.pprof", "live-memstats.json"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Positive(t, fi.Size(), name)
	}
	_, err = os.Stat(filepath.Join(dir, "none"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a refused call writes no file")
}
