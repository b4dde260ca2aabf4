package scheduler

import (
	"testing"
	"time"
)

// The adaptive launch budget starts at an eighth of the ceiling, doubles
// while acknowledgements are quick and it is used up, then grows by a
// twentieth; it halves when a tenth of an interval's acknowledgements were
// slow, never below the floor nor above the ceiling.
func TestLaunchBudgetAdapts(t *testing.T) {
	var b launchBudget
	interval := func(used bool, latencies ...time.Duration) int {
		for _, l := range latencies {
			b.acknowledged(l)
		}
		if used {
			b.usedUp()
		}
		return b.adjust(10000)
	}
	quick, slow, middling := 100*time.Millisecond, 6*time.Second, 3*time.Second
	steps := []struct {
		name string
		got  int
		want int
	}{
		{"first", interval(false), 1250},
		{"quick but not used up: held", interval(false, quick), 1250},
		{"used up, no acknowledgement: held", interval(true), 1250},
		{"slow start", interval(true, quick), 2500},
		{"slow start again", interval(true, quick, quick), 5000},
		{"one slow in ten cuts", interval(true, quick, quick, quick, quick, quick, quick, quick, quick, quick, slow), 2500},
		{"past the cut: additive", interval(true, quick), 3000},
		{"additive again", interval(true, quick), 3500},
		{"middling: held", interval(true, middling, middling), 3500},
		{"cut", interval(true, slow), 1750},
		{"cut", interval(true, slow), 875},
		{"cut", interval(true, slow), 437},
		{"cut", interval(true, slow), 218},
		{"cut to the floor", interval(true, slow), 109},
		{"the floor", interval(true, slow), budgetFloor},
	}
	for _, s := range steps {
		if s.got != s.want {
			t.Fatalf("%s: budget %d, want %d", s.name, s.got, s.want)
		}
	}
	for range 100 {
		interval(true, quick)
	}
	if got := b.adjust(10000); got != 10000 {
		t.Fatalf("after growing long: %d, want the ceiling 10000", got)
	}
	if got := b.adjust(300); got != 300 {
		t.Fatalf("a lower ceiling: %d, want 300", got)
	}
	if got := b.adjust(50); got != 50 {
		t.Fatalf("a ceiling under the floor: %d, want 50", got)
	}
}

// A budget grown on launches starts again from an eighth of the ceiling
// after budgetIdleRestart intervals with nothing acknowledged nor held.
func TestLaunchBudgetRestartsAfterIdle(t *testing.T) {
	var b launchBudget
	for range 30 {
		b.acknowledged(100 * time.Millisecond)
		b.usedUp()
		b.adjust(10000)
	}
	for i := range budgetIdleRestart - 1 {
		if got := b.adjust(10000); got != 10000 {
			t.Fatalf("after %d idle intervals: %d, want 10000 kept", i+1, got)
		}
	}
	if got := b.adjust(10000); got != 1250 {
		t.Fatalf("after %d idle intervals: %d, want 1250", budgetIdleRestart, got)
	}
	b.acknowledged(100 * time.Millisecond)
	b.usedUp()
	if got := b.adjust(10000); got != 2500 {
		t.Fatalf("slow start again: %d, want 2500", got)
	}
}
