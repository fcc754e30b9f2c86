//go:build !unix

package cli

import "os"

// streamID is unknown here, where no systemd runs: the log is never the journal's.
func streamID(*os.File) string { return "" }
