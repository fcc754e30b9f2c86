// Package profiling lets a benchmark take a CPU and a heap profile of a server process per
// phase: the server serves Handler on a loopback listener of its own (ListenEnv), the
// benchmark drives it with a Client. The gateway serves it only when built with
// -tags benchprofile (tests/bench -profile-dir builds it so); the shipped binary has none of it.
package profiling

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"
)

// ListenEnv names the environment variable holding the loopback address to serve Handler on.
const ListenEnv = "TRAPOS_PROFILE_LISTEN"

// Listen listens on addr, which must be a loopback address: profiles show the process's
// insides and cost CPU, so they are never offered to the network.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w", ListenEnv, addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("%s=%q: profiles are served on a loopback address only, like 127.0.0.1:6060", ListenEnv, addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("profiles: %w", err)
	}
	return l, nil
}

// Handler serves POST /cpu/start (start a CPU profile), POST /cpu/stop (stop it and answer
// the profile), GET /heap and /goroutine (the profiles as pprof writes them, without a
// forced GC: the heap profile shows the state as of the last GC), GET /memstats
// (runtime.MemStats as JSON, without the pause and size-class arrays: where the RSS went),
// and GET /live-heap and /live-memstats, the same after a forced GC: what is live now, not
// whatever the last GC found mid-phase (the GC changes the process's heap: take them last).
func Handler() http.Handler {
	var (
		mu  sync.Mutex
		buf *bytes.Buffer // the running CPU profile, nil when none runs
	)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /cpu/start", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if buf != nil {
			http.Error(w, "a CPU profile is already running", http.StatusConflict)
			return
		}
		b := new(bytes.Buffer)
		if err := pprof.StartCPUProfile(b); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		buf = b
	})
	mux.HandleFunc("POST /cpu/stop", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if buf == nil {
			http.Error(w, "no CPU profile is running", http.StatusConflict)
			return
		}
		pprof.StopCPUProfile()
		_, _ = w.Write(buf.Bytes())
		buf = nil
	})
	memstats := func(w http.ResponseWriter, _ *http.Request) {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		m.PauseNs, m.PauseEnd, m.BySize = [256]uint64{}, [256]uint64{}, [61]struct {
			Size    uint32
			Mallocs uint64
			Frees   uint64
		}{}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(m)
	}
	mux.HandleFunc("GET /memstats", memstats)
	mux.HandleFunc("GET /live-memstats", func(w http.ResponseWriter, r *http.Request) {
		runtime.GC()
		memstats(w, r)
	})
	for _, name := range []string{"heap", "goroutine"} {
		mux.HandleFunc("GET /"+name, func(w http.ResponseWriter, _ *http.Request) {
			_ = pprof.Lookup(name).WriteTo(w, 0)
		})
	}
	mux.HandleFunc("GET /live-heap", func(w http.ResponseWriter, _ *http.Request) {
		runtime.GC()
		_ = pprof.Lookup("heap").WriteTo(w, 0)
	})
	return mux
}

// Client drives a process's Handler at Addr (host:port).
type Client struct {
	Addr string
}

// clientTimeout bounds one call; a CPU profile is stopped, not waited for.
const clientTimeout = 30 * time.Second

// StartCPU starts a CPU profile.
func (c Client) StartCPU() error {
	_, err := c.call(http.MethodPost, "/cpu/start", "")
	return err
}

// StopCPU stops the CPU profile and writes it to path.
func (c Client) StopCPU(path string) error {
	_, err := c.call(http.MethodPost, "/cpu/stop", path)
	return err
}

// Save writes the named profile (heap, goroutine, memstats, live-heap, live-memstats) to path.
func (c Client) Save(name, path string) error {
	_, err := c.call(http.MethodGet, "/"+name, path)
	return err
}

func (c Client) call(method, route, path string) (int64, error) {
	req, err := http.NewRequest(method, "http://"+c.Addr+route, nil)
	if err != nil {
		return 0, fmt.Errorf("profile %s: %w", route, err)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: clientTimeout}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("profile %s: %w", route, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return 0, fmt.Errorf("profile %s: %s: %s", route, resp.Status, bytes.TrimSpace(msg))
	}
	if path == "" {
		return 0, nil
	}
	return writeFile(path, resp.Body)
}

// writeFile writes r to path through a temporary file, so that a cut-off download never
// leaves half a profile under the final name.
func writeFile(path string, r io.Reader) (int64, error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return 0, fmt.Errorf("save profile: %w", err)
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return n, errors.Join(fmt.Errorf("save profile %s: %w", path, err), os.Remove(tmp))
	}
	return n, nil
}
