//go:build benchprofile

package main

import (
	"fmt"
	"net/http"
	"os"

	"trap-sandbox/testkit/profiling"
)

// A gateway built with -tags benchprofile (tests/bench -profile-dir builds it so) serves CPU
// and heap profiles on the loopback address in TRAPOS_PROFILE_LISTEN, on a listener of its
// own. The shipped binary has none of it.
func init() {
	addr := os.Getenv(profiling.ListenEnv)
	if addr == "" {
		return
	}
	l, err := profiling.Listen(addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "trap-sandbox:", err)
		os.Exit(1)
	}
	go func() { _ = http.Serve(l, profiling.Handler()) }()
}
