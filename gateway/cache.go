package gateway

import "sync"

// boundedMap is a concurrent map capped at max entries. When full, an
// eighth of it is dropped in map order, which Go randomizes: cheap,
// lock-short, and good enough for caches whose misses are just slower.
type boundedMap[K comparable, V any] struct {
	mu  sync.RWMutex
	m   map[K]V
	max int
}

func newBoundedMap[K comparable, V any](max int) *boundedMap[K, V] {
	return &boundedMap[K, V]{m: make(map[K]V), max: max}
}

func (b *boundedMap[K, V]) get(k K) (V, bool) {
	b.mu.RLock()
	v, ok := b.m[k]
	b.mu.RUnlock()
	return v, ok
}

func (b *boundedMap[K, V]) put(k K, v V) {
	b.mu.Lock()
	if _, ok := b.m[k]; !ok && len(b.m) >= b.max {
		drop := b.max/8 + 1
		for old := range b.m {
			delete(b.m, old)
			if drop--; drop == 0 {
				break
			}
		}
	}
	b.m[k] = v
	b.mu.Unlock()
}

func (b *boundedMap[K, V]) remove(k K) {
	b.mu.Lock()
	delete(b.m, k)
	b.mu.Unlock()
}

func (b *boundedMap[K, V]) clear() {
	b.mu.Lock()
	clear(b.m)
	b.mu.Unlock()
}

func (b *boundedMap[K, V]) len() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.m)
}
