package clock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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

func TestRealAfterFuncCallsItsFunction(t *testing.T) {
	called := make(chan struct{})
	tm := Real{}.AfterFunc(time.Millisecond, func() { close(called) })
	assert.Nil(t, tm.C())
	<-called
}
