package heaptest

import "runtime"

// Live is the live heap in bytes: the second collection empties what
// sync.Pools kept through the first.
func Live() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
