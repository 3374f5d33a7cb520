package backup

import "runtime"

// runtimeMem samples the heap, for tests that bound what an operation
// allocates or holds.
type runtimeMem struct{ total, inuse uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.total, m.inuse = s.TotalAlloc, s.HeapAlloc
}
