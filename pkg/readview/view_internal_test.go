package readview

import (
	"fmt"
	"runtime"
	"testing"
)

// TestPutKeepsNoWholeKey bounds the heap an entry's name takes in the
// view: the leaf's few digits, not the whole key it was cut from (a
// fleet's million task groups are a million entries). Keeping each
// whole key, 40 bytes here, held 195 bytes per entry; its leaf, 163.
func TestPutKeepsNoWholeKey(t *testing.T) {
	const n, bound = 100_000, 180
	dirs := map[string]*dir{}
	before := heapAlloc()
	for _, update := range []bool{false, true} { // a put of a key held already stores its name again
		for i := range n {
			put(dirs, fmt.Sprintf("taskgroups/game-servers/app-%03d/%d", i%100, i), Entry{Revision: int64(i)})
		}
		if perEntry := float64(heapAlloc()-before) / n; perEntry > bound {
			t.Errorf("after puts (again: %v) the view holds %.0f bytes per entry; want at most %d", update, perEntry, bound)
		}
	}
	runtime.KeepAlive(dirs)
}

func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
