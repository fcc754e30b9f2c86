package fakecrafttest

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOutputWakesEveryWaiterOnWrite(t *testing.T) {
	var o Output
	first, second := o.Changed(), o.Changed()
	assert.Equal(t, first, second, "waiters before a write share its channel")
	select {
	case <-first:
		t.Fatal("closed before any write")
	default:
	}
	_, _ = o.Write([]byte("hi"))
	<-first // closed: every waiter wakes
	<-second
	assert.Equal(t, "hi", o.String())
	select {
	case <-o.Changed():
		t.Fatal("a fresh channel waits for the next write")
	default:
	}
}

// TestOutputTakesConcurrentWrites: writers on other goroutines while the test reads (-race
// checks the locking).
func TestOutputTakesConcurrentWrites(t *testing.T) {
	var o Output
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				_, _ = o.Write([]byte("x"))
				_ = o.Changed()
				_ = o.String()
			}
		})
	}
	wg.Wait()
	assert.Len(t, o.String(), 200)
}
