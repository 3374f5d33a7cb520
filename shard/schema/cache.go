package schema

import (
	"sync"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// maxCached bounds the compiled schemas a node keeps.
const maxCached = 4096

// Cache keeps compiled schemas by namespace, queue and version, so a
// schema is compiled once per version, not per enqueue. A version's
// schema never changes, so an entry is never stale: a newer version is
// another key, and old ones are dropped when the cache is full.
type Cache struct {
	mu sync.Mutex
	m  map[key]*Schema
}

type key struct {
	ns, queue string
	version   uint32
}

// Get returns the compiled schema of (ns, queue, version). On a miss it
// loads the schema in force with its version (they may be newer than
// version: the caller checks against what it gets) and compiles it;
// a nil schema and version 0 when the queue has none.
func (c *Cache) Get(ns, queue string, version uint32, load func() ([]byte, uint32, error)) (*Schema, uint32, error) {
	c.mu.Lock()
	s, ok := c.m[key{ns, queue, version}]
	c.mu.Unlock()
	if ok {
		return s, version, nil
	}
	raw, v, err := load()
	if err != nil || v == 0 {
		return nil, 0, err
	}
	if s, err = Compile(raw); err != nil {
		return nil, 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[key]*Schema)
	}
	if len(c.m) >= maxCached {
		for old := range c.m { // any entry: a miss costs one compile
			delete(c.m, old)
			break
		}
	}
	c.m[key{ns, queue, v}] = s
	return s, v, nil
}
