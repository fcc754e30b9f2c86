package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"tests/internal/child"
)

// ScaleWorkerEnv, set to a JSON WorkerSpec, makes the bench program a client worker of the
// scale run instead of the bench: the scale run re-executes itself once per worker, because
// one process cannot hold more sockets than its open-files limit (docs/performance.md, Scale).
const ScaleWorkerEnv = "TRAPOS_BENCH_SCALE_WORKER"

// WorkerSpec is one worker's share of the computers: the global indexes [First, First+Count).
// Computer i dials from the loopback address of its "server" i / PerAddress (Addresses) and
// to the replica of that address (Targets[(i / PerAddress) % len(Targets)]): every computer
// of one Minecraft server shares one address and one gateway.
type WorkerSpec struct {
	First, Count    int
	PerAddress      int
	Targets         []string
	DialConcurrency int
}

// Worker commands, one a line on the worker's stdin; each gets one workerReply line on its
// stdout. End of input stops the worker (so it never outlives the bench).
const (
	// cmdConnect drops the worker's sockets (if any) and connects and says hello with all of
	// its computers at once, as after a restart.
	cmdConnect = "connect"
	// cmdStatus reports how many of its sockets are still open.
	cmdStatus = "status"
)

// workerReply is a worker's answer to one command.
type workerReply struct {
	// Live is the number of its sockets still open (said hello, not closed by the gateway).
	Live int `json:"live"`
	// Closed counts the sockets that closed while the worker held them, by why (the close
	// code and reason the gateway sent, or the read error).
	Closed map[string]int `json:"closed,omitempty"`
	// Error says why the command failed; empty when it did not.
	Error string `json:"error,omitempty"`
}

// addressOf is the loopback address of "server" k: spread over 127.0.0.0/8 (127.1.0.1,
// 127.2.0.1, …, 127.250.0.1, then 127.1.1.1, …), each with its own ~28 000 ports.
func addressOf(k int) *net.TCPAddr {
	return &net.TCPAddr{IP: net.IPv4(127, byte(1+k%250), byte(k/250), 1)}
}

// ServeScaleWorker is the worker process: it reads commands from in and answers on out until
// in ends or ctx is done, then closes its sockets.
func ServeScaleWorker(ctx context.Context, spec WorkerSpec, in io.Reader, out io.Writer) error {
	if spec.Count < 1 || spec.PerAddress < 1 || len(spec.Targets) == 0 || spec.DialConcurrency < 1 {
		return fmt.Errorf("bad worker spec %+v", spec)
	}
	w := &worker{spec: spec}
	defer w.drop()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	enc := json.NewEncoder(out)
	for {
		var line string
		var ok bool
		select {
		case line, ok = <-lines:
		case <-ctx.Done():
			return nil // the scanner goroutine ends when the parent closes stdin or the process exits
		}
		if !ok {
			return nil
		}
		var reply workerReply
		switch line {
		case cmdConnect:
			if err := w.connect(ctx); err != nil {
				reply.Error = err.Error()
			}
		case cmdStatus:
		default:
			reply.Error = fmt.Sprintf("unknown command %q", line)
		}
		reply.Live = int(w.live.Load())
		reply.Closed = w.closedWhy()
		if err := enc.Encode(reply); err != nil {
			return fmt.Errorf("answer: %w", err)
		}
	}
}

// worker holds one worker's sockets.
type worker struct {
	spec    WorkerSpec
	cs      []*computer
	live    atomic.Int64
	readers sync.WaitGroup
	// dropping is set while the worker closes its own sockets (their ends are not counted).
	dropping atomic.Bool

	mu     sync.Mutex
	closed map[string]int // why sockets closed before the worker dropped them
}

// closedWhy is a copy of the reasons sockets closed.
func (w *worker) closedWhy() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.closed)
}

// connect drops the old sockets and connects every computer of the worker, at most
// DialConcurrency dials + hellos in flight. Each socket answers the gateway's pings from its
// hello on: connecting 18 000 takes minutes, longer than the gateway waits for a pong.
func (w *worker) connect(ctx context.Context) error {
	w.drop()
	w.cs = make([]*computer, w.spec.Count)
	err := runAll(ctx, w.spec.Count, w.spec.DialConcurrency, func(ctx context.Context, j int) error {
		i := w.spec.First + j
		k := i / w.spec.PerAddress
		target := w.spec.Targets[k%len(w.spec.Targets)]
		c, err := dialComputer(ctx, target, traposID(i), addressOf(k))
		if err != nil {
			return fmt.Errorf("computer %s from %s to %s: %w", traposID(i), addressOf(k).IP, target, err)
		}
		w.cs[j] = c
		w.live.Add(1)
		w.readers.Go(func() {
			err := answerGatewayPings(c)
			w.live.Add(-1)
			if w.dropping.Load() {
				return
			}
			why := err.Error()
			if ce, ok := errors.AsType[*websocket.CloseError](err); ok {
				why = fmt.Sprintf("close %d %s", ce.Code, ce.Text)
			}
			w.mu.Lock()
			if w.closed == nil {
				w.closed = map[string]int{}
			}
			w.closed[why]++
			w.mu.Unlock()
		})
		return nil
	})
	if err != nil {
		w.drop()
		return err
	}
	return nil
}

// drop closes every socket and waits for their readers.
func (w *worker) drop() {
	w.dropping.Store(true)
	closeAll(w.cs)
	w.readers.Wait()
	w.cs = nil
	w.dropping.Store(false)
}

// answerGatewayPings answers every gateway_request of the gateway (its idle probe, a host's
// ping) with the computer's traposId until the socket closes, and returns why it did; gorilla
// answers WebSocket pings while it reads.
func answerGatewayPings(c *computer) error {
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return err
		}
		reply, typ, ok := pingAnswer(c.id, data)
		if !ok {
			continue
		}
		_ = c.ws.SetWriteDeadline(time.Now().Add(RoundTripTimeout))
		if err := c.ws.WriteMessage(websocket.TextMessage, reply); err != nil {
			return fmt.Errorf("answer %s: %w", typ, err)
		}
	}
}

// pingAnswer is computer id's answer to the frame data, when it is a gateway_request: its
// traposId, the request's messageId and type echoed.
func pingAnswer(id string, data []byte) (reply []byte, typ string, ok bool) {
	var f wireFrame
	if json.Unmarshal(data, &f) != nil || f.Event != "gateway_request" {
		return nil, "", false
	}
	return fmt.Appendf(nil, `{"event":"computer_response","traposSenderId":%q,"messageId":%q,"type":%q,"ok":true,"payload":{"traposId":%q}}`,
		id, f.MessageID, f.Type, id), f.Type, true
}

// workerProc is the bench's handle on one worker process.
type workerProc struct {
	name  string
	spec  WorkerSpec
	proc  *child.Process
	stdin io.WriteCloser
	lines chan string
	log   *tailBuffer
}

// startWorker re-executes the bench binary self as a worker of spec.
func startWorker(self, name string, spec WorkerSpec) (*workerProc, error) {
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	w := &workerProc{name: name, spec: spec, lines: make(chan string, 16), log: &tailBuffer{}}
	cmd := exec.Command(self)
	cmd.Env = append(child.CleanEnv(configEnvPrefixes...), ScaleWorkerEnv+"="+string(js))
	cmd.Stdout = &lineWriter{lines: w.lines}
	cmd.Stderr = w.log
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if w.proc, err = child.Start(name, cmd); err != nil {
		return nil, err
	}
	return w, nil
}

// ask sends one command and waits (at most within, and not past ctx) for its reply.
func (w *workerProc) ask(ctx context.Context, cmd string, within time.Duration) (workerReply, error) {
	var r workerReply
	if _, err := io.WriteString(w.stdin, cmd+"\n"); err != nil {
		return r, fmt.Errorf("%s: send %s: %w", w.name, cmd, err)
	}
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case line := <-w.lines:
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return r, fmt.Errorf("%s: %s: bad reply %q: %w", w.name, cmd, line, err)
		}
		if r.Error != "" {
			return r, fmt.Errorf("%s: %s: %s", w.name, cmd, r.Error)
		}
		return r, nil
	case <-w.proc.Exited():
		return r, fmt.Errorf("%s exited during %s (%v): %s", w.name, cmd, w.proc.ExitErr(), w.log)
	case <-timer.C:
		return r, fmt.Errorf("%s: no answer to %s within %s", w.name, cmd, within)
	case <-ctx.Done():
		return r, fmt.Errorf("%s: %s: %w", w.name, cmd, ctx.Err())
	}
}

// stop ends the worker: its input closes, so it drops its sockets and exits; one that
// outlives ScaleStopTimeout then gets SIGTERM, and SIGKILL after StopTimeout.
func (w *workerProc) stop() error {
	_ = w.stdin.Close()
	timer := time.NewTimer(ScaleStopTimeout)
	defer timer.Stop()
	select {
	case <-w.proc.Exited():
		if err := w.proc.ExitErr(); err != nil {
			return fmt.Errorf("%s: %w: %s", w.name, err, w.log)
		}
		return nil
	case <-timer.C:
		return errors.Join(fmt.Errorf("%s did not leave within %s of the end of its input", w.name, ScaleStopTimeout), w.proc.Stop(StopTimeout))
	}
}

// lineWriter hands each complete output line to lines (a worker writes one line per command,
// and the bench reads each before sending the next, so the channel never fills).
type lineWriter struct {
	mu    sync.Mutex
	buf   []byte
	lines chan string
}

// Write implements io.Writer.
func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		select {
		case l.lines <- string(l.buf[:i]):
		default:
			return 0, errors.New("worker output not read")
		}
		l.buf = l.buf[i+1:]
	}
}

// ErrWorkerSpec reports a malformed ScaleWorkerEnv.
var ErrWorkerSpec = errors.New("malformed " + ScaleWorkerEnv)

// ScaleWorkerMain runs the worker of ScaleWorkerEnv's spec on stdin and stdout.
func ScaleWorkerMain(ctx context.Context, specJSON string) error {
	var spec WorkerSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		return fmt.Errorf("%w: %w", ErrWorkerSpec, err)
	}
	return ServeScaleWorker(ctx, spec, os.Stdin, os.Stdout)
}
