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

// A wrong secret is never the secret itself, whatever letter the secret ends with (a fixed
// replacement letter was, once in about 30 runs: CI admitted alice's token as the "wrong" one).
func TestWrongSecretDiffersOnlyInItsLastLetter(t *testing.T) {
	for _, secret := range []string{"tsa_sel_a", "tsa_sel_b", "tsa_sel_x", "tsk_9"} {
		wrong := WrongSecret(secret)
		assert.NotEqual(t, secret, wrong)
		assert.Equal(t, secret[:len(secret)-1], wrong[:len(wrong)-1], "only the last letter changes")
	}
}
