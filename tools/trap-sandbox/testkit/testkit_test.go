package testkit

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSyncBufferTakesConcurrentWrites: writes from many goroutines all land, whole, and
// String can run beside them (-race checks the locking).
func TestSyncBufferTakesConcurrentWrites(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("line\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, strings.Repeat("line\n", 800), b.String())
}
