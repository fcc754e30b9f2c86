// Package child runs a server program as a child process of a test or benchmark and stops it
// the way an init system would: SIGTERM, then SIGKILL if it outlives a bound.
package child

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is one started child. Its exit status is collected by a goroutine of its own, which
// ends when the process does.
type Process struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{} // closed once Wait returned; waitErr is set before
	// waitErr is the process's exit status.
	waitErr  error
	stopOnce sync.Once
	stopErr  error
}

// Start starts cmd; name is used in error messages. Give cmd writers (not pipes) for its
// output, so that exec's copying goroutines end inside Wait.
func Start(name string, cmd *exec.Cmd) (*Process, error) {
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{name: name, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitErr is the exit status once Exited is closed (nil for status 0).
func (p *Process) ExitErr() error {
	<-p.exited
	return p.waitErr
}

// Stop sends SIGTERM and waits for the process; it kills the process if it outlives timeout.
// It returns an error unless the process exited with status 0 in time, including when it had
// exited before Stop. Later calls return the first result.
func (p *Process) Stop(timeout time.Duration) error { return p.StopWith(syscall.SIGTERM, timeout) }

// StopWith is Stop with another signal than SIGTERM (SIGINT, SIGHUP).
func (p *Process) StopWith(sig syscall.Signal, timeout time.Duration) error {
	name := map[syscall.Signal]string{syscall.SIGTERM: "sigterm", syscall.SIGINT: "sigint", syscall.SIGHUP: "sighup"}[sig]
	if name == "" {
		name = sig.String()
	}
	p.stopOnce.Do(func() {
		select {
		case <-p.exited:
			p.stopErr = fmt.Errorf("%s had already exited: %v", p.name, p.waitErr)
			return
		default:
		}
		if err := p.cmd.Process.Signal(sig); err != nil {
			p.stopErr = fmt.Errorf("%s: %s: %w", p.name, name, err)
		}
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case <-p.exited:
			if p.waitErr != nil && p.stopErr == nil {
				p.stopErr = fmt.Errorf("%s: exit after %s: %w", p.name, name, p.waitErr)
			}
		case <-timer.C:
			_ = p.cmd.Process.Kill()
			<-p.exited
			p.stopErr = errors.Join(p.stopErr, fmt.Errorf("%s still running %s after %s; killed", p.name, timeout, name))
		}
	})
	return p.stopErr
}

// Signal sends sig to the process (SIGSTOP and SIGCONT freeze and thaw it).
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Kill ends the process at once with SIGKILL, as a crash would, and waits for it. Later Stop
// and Kill calls return nil: the test wanted it dead.
func (p *Process) Kill() error {
	var err error
	p.stopOnce.Do(func() {
		select {
		case <-p.exited:
			err = fmt.Errorf("%s had already exited: %v", p.name, p.waitErr)
		default:
			err = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return err
}

// CleanEnv returns this process's environment without the variables that start with one of
// prefixes, so that a developer's shell cannot change what a child does.
func CleanEnv(prefixes ...string) []string {
	env := os.Environ()
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		for _, p := range prefixes {
			if strings.HasPrefix(kv, p) {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
