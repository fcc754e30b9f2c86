//go:build unix

package cli

import (
	"fmt"
	"os"
	"syscall"
)

// streamID is f's "DEVICE:INODE", as $JOURNAL_STREAM writes the journal's stream ("" when
// f cannot be looked at).
func streamID(f *os.File) string {
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}
