package devcluster

import (
	"testing"
	"time"
)

// Quantiles come back as the upper bound of their bucket: never below the
// true value, at most one bucket (9%) above it.
func TestLatencyHistogramQuantiles(t *testing.T) {
	var h LatencyHistogram
	if got := h.Quantile(0.5); got != 0 {
		t.Errorf("median of nothing: %v, want 0", got)
	}
	for i := 1; i <= 100; i++ {
		h.observe(time.Duration(i) * time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0, time.Millisecond}, {0.5, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}} {
		got := h.Quantile(c.q)
		if got < c.want || float64(got) > 1.0906*float64(c.want) {
			t.Errorf("q%v = %v, want %v to 9%% above", c.q, got, c.want)
		}
	}
	h.observe(0)
	h.observe(100 * time.Hour)
	if h.Count() != 102 {
		t.Errorf("count %d, want 102", h.Count())
	}
	if got := h.Quantile(0); got != time.Microsecond {
		t.Errorf("q0 with a zero duration: %v, want the first bucket's bound, 1µs", got)
	}
	if got := h.Quantile(1); got < time.Hour {
		t.Errorf("q1 with 100h: %v, want the last bucket (over an hour)", got)
	}
}
