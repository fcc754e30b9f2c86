package clock

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFakeTimerFiresOnlyWhenAdvancedPastItsDue(t *testing.T) {
	f := NewFake(time.Unix(1000, 0))
	tm := f.NewTimer(10 * time.Second)
	assert.Equal(t, 1, f.Armed())
	f.Advance(9 * time.Second)
	select {
	case <-tm.C():
		t.Fatal("fired early")
	default:
	}
	f.Advance(time.Second)
	assert.Equal(t, time.Unix(1010, 0), <-tm.C())
	assert.Equal(t, 0, f.Armed())
}

func TestFakeTimerResetAndStopDropAStaleValue(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	tm := f.NewTimer(time.Second)
	f.Advance(time.Second) // fired, not received
	tm.Reset(5 * time.Second)
	select {
	case <-tm.C():
		t.Fatal("stale value after Reset")
	default:
	}
	assert.Equal(t, time.Unix(5+1, 0), f.NextDue())
	tm.Stop()
	f.Advance(time.Hour)
	select {
	case <-tm.C():
		t.Fatal("a stopped timer fired")
	default:
	}
}

func TestWaitArmedReturnsOnceATimerIsSet(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	go f.NewTimer(time.Second)
	assert.True(t, f.WaitArmed(1, nil))
	done := make(chan struct{})
	close(done)
	assert.False(t, f.WaitArmed(2, done))
}

func TestFakeAfterFuncCallsItsFunctionOnlyWhenDueAndNotOnceStopped(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	called := make(chan time.Time, 1)
	tm := f.AfterFunc(10*time.Second, func() { called <- f.Now() })
	assert.Nil(t, tm.C())
	assert.Equal(t, 1, f.Armed())
	f.Advance(9 * time.Second)
	select {
	case <-called:
		t.Fatal("called early")
	default:
	}
	f.Advance(time.Second)
	assert.Equal(t, time.Unix(10, 0), <-called)
	assert.Equal(t, 0, f.Armed())

	tm.Reset(time.Second) // re-armed, as a function re-arms its own timer
	assert.Equal(t, 1, f.Armed())
	tm.Stop()
	assert.Equal(t, 0, f.Armed())
	f.Advance(time.Hour)
	select {
	case <-called:
		t.Fatal("a stopped timer called its function")
	default:
	}
}

func TestWithTimeoutOnTheWallClockHasItsDeadline(t *testing.T) {
	before := time.Now()
	ctx, cancel := WithTimeout(t.Context(), Real{}, time.Hour)
	defer cancel()
	deadline, ok := ctx.Deadline()
	require.True(t, ok)
	assert.False(t, deadline.Before(before.Add(time.Hour)))
	assert.False(t, deadline.After(time.Now().Add(time.Hour)))

	parent, cancelParent := context.WithTimeout(t.Context(), time.Minute)
	defer cancelParent()
	parentDeadline, _ := parent.Deadline()
	ctx, cancel = WithTimeout(parent, Real{}, time.Hour)
	defer cancel()
	deadline, ok = ctx.Deadline()
	assert.True(t, ok)
	assert.Equal(t, parentDeadline, deadline, "the parent's comes first")

	ctx, cancel = WithTimeout(t.Context(), Real{}, time.Millisecond)
	defer cancel()
	<-ctx.Done()
	assert.Equal(t, context.DeadlineExceeded, ctx.Err())
}

func TestRealAfterFuncCallsItsFunction(t *testing.T) {
	called := make(chan struct{})
	tm := Real{}.AfterFunc(time.Millisecond, func() { close(called) })
	assert.Nil(t, tm.C())
	<-called
}

func TestWithTimeoutEndsAtItsClocksTimeAsContextWithTimeoutDoes(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	ctx, cancel := WithTimeout(t.Context(), f, time.Second)
	defer cancel()
	child, cancelChild := context.WithCancel(ctx)
	defer cancelChild()
	f.Advance(999 * time.Millisecond)
	assert.NoError(t, ctx.Err())
	f.Advance(time.Millisecond)
	<-ctx.Done()
	assert.Equal(t, context.DeadlineExceeded, ctx.Err())
	assert.Equal(t, context.DeadlineExceeded, context.Cause(ctx))
	<-child.Done()
	assert.Equal(t, context.DeadlineExceeded, child.Err(), "a child ends as a child of context.WithTimeout's does")
	_, hasDeadline := ctx.Deadline()
	assert.False(t, hasDeadline, "the fake time is no wall clock's deadline")
}

func TestWithTimeoutCancelledOrEndedByItsParentSaysSo(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	ctx, cancel := WithTimeout(t.Context(), f, time.Second)
	cancel()
	assert.Equal(t, context.Canceled, ctx.Err(), "at once, as context.WithTimeout's cancel")
	assert.Equal(t, 0, f.Armed(), "its timer stopped")

	parent, cancelParent := context.WithCancel(t.Context())
	ctx, cancel = WithTimeout(parent, f, time.Second)
	defer cancel()
	cancelParent()
	<-ctx.Done()
	assert.Equal(t, context.Canceled, ctx.Err())

	parent, cancelParent = context.WithTimeout(t.Context(), time.Nanosecond)
	defer cancelParent()
	ctx, cancel = WithTimeout(parent, f, time.Hour)
	defer cancel()
	<-ctx.Done()
	assert.Equal(t, context.DeadlineExceeded, ctx.Err(), "the parent's deadline")
}
