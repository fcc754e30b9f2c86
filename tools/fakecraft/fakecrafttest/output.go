package fakecrafttest

import (
	"bytes"
	"sync"
)

// Output collects what a part of fakecraft writes (a computer's transcript, the console's
// frames, a command's stderr) while the test reads it, and says when more arrived, so a test
// waits on writes instead of polling. The zero value is empty and ready to use. It is
// fakecraft's one goroutine-safe buffer: fakecraft imports none of the repository's other
// modules, so it does not share trap-sandbox's testkit.SyncBuffer.
type Output struct {
	mu      sync.Mutex // guards buf and changed
	buf     bytes.Buffer
	changed chan struct{} // closed by the next Write; nil until Changed asks for it
}

// Write appends p and wakes everyone waiting on Changed.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, err := o.buf.Write(p)
	if o.changed != nil {
		close(o.changed)
		o.changed = nil
	}
	return n, err
}

// String returns everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// Changed returns a channel closed by the next Write. Take it before reading String, so a
// write in between is not missed.
func (o *Output) Changed() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.changed == nil {
		o.changed = make(chan struct{})
	}
	return o.changed
}
