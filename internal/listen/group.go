package listen

import "sync"

// Group is a process's listeners, for its /readyz: Failing is the first
// of them that cannot accept. A nil Group holds none.
type Group struct {
	mu sync.Mutex
	ls []*Listener
}

// NewGroup returns an empty group.
func NewGroup() *Group { return &Group{} }

// Failing is the failure of the first listener of the group that is not
// accepting, or nil while all are.
func (g *Group) Failing() *Failure {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, l := range g.ls {
		if f := l.Failing(); f != nil {
			return f
		}
	}
	return nil
}

func (g *Group) add(l *Listener) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ls = append(g.ls, l)
}

func (g *Group) remove(l *Listener) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, x := range g.ls {
		if x == l {
			g.ls = append(g.ls[:i], g.ls[i+1:]...)
			return
		}
	}
}
