package scheduler

import "testing"

// A map that held many entries and keeps few is made anew, with its
// entries, so that the space of a burst is given back; a small one, or
// one still well used, is kept.
func TestShrunkMakesABurstMapAnew(t *testing.T) {
	m, peak := map[int]int{}, 0
	for i := range 10_000 {
		m[i] = i * 2
	}
	if got := shrunk(m, &peak); peak != 10_000 || !same(got, m) {
		t.Fatalf("growing: peak %d, want 10000, and the same map", peak)
	}
	for i := range 8_000 {
		delete(m, i)
	}
	if got := shrunk(m, &peak); !same(got, m) || peak != 10_000 {
		t.Fatalf("%d of 10,000 left, more than an eighth: want the same map, peak kept", len(m))
	}
	for i := 8_000; i < 9_800; i++ {
		delete(m, i)
	}
	got := shrunk(m, &peak)
	if same(got, m) || peak != 200 || len(got) != 200 || got[9_900] != 19_800 {
		t.Fatalf("200 of 10,000 left: want a new map of the 200 (peak 200), got same=%v peak %d len %d", same(got, m), peak, len(got))
	}
	small, smallPeak := map[int]int{1: 1}, 1000
	if got := shrunk(small, &smallPeak); !same(got, small) {
		t.Error("a map that never held 1,024 was made anew")
	}
}

// same reports whether a and b are one map.
func same(a, b map[int]int) bool {
	a[-1] = 1
	defer delete(a, -1)
	_, ok := b[-1]
	return ok
}
