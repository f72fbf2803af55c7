package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestManual(t *testing.T) {
	start := time.Unix(100, 0)
	m := NewManual(start)
	if err := m.Sleep(context.Background(), 3*time.Second); err != nil || !m.Now().Equal(start.Add(3*time.Second)) {
		t.Fatalf("after Sleep(3s): %v, %v", m.Now(), err)
	}
	m.Advance(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) || !m.Now().Equal(start.Add(4*time.Second)) {
		t.Errorf("Sleep on an ended context: %v, now %v (must not advance)", err, m.Now())
	}
}

func TestRealSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Or(nil).Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Real.Sleep on an ended context: %v", err)
	}
}

func TestOnSleep(t *testing.T) {
	m := NewManual(time.Unix(0, 0))
	fired := 0
	m.OnSleep(2, func() { fired++ })
	ctx := context.Background()
	m.Sleep(ctx, time.Second)
	if fired != 0 {
		t.Fatal("hook ran on the first sleep")
	}
	m.Sleep(ctx, time.Second)
	m.Sleep(ctx, time.Second)
	if fired != 1 {
		t.Errorf("hook ran %d times, want once on the second sleep", fired)
	}
}
