package live

import "github.com/jobbie/jobbie/internal/replica"

// maxKeptStage is the largest buffer a stage keeps for reuse; a rare huge
// entry's buffer goes to the collector instead of being held forever.
const maxKeptStage = 4096

// stage collects what an observer sees during one entry and hands it to
// publish once the entry has committed. An entry applied again (the
// replica replays a group without a refused command) is a new Tx, so it
// starts with an empty buffer and the first attempt's is never published.
// Buffers are reused from entry to entry: observers and after-commit
// functions all run on the apply goroutine, so a stage needs no lock.
type stage[T any] struct {
	tx      *replica.Tx // the entry buf belongs to
	buf     *[]T
	free    []*[]T
	publish func([]T)
}

// add appends v to tx's buffer, starting one (and its publication) on
// the entry's first call.
func (s *stage[T]) add(tx *replica.Tx, v T) {
	if s.tx != tx {
		s.tx, s.buf = tx, s.take()
		p := s.buf
		tx.AfterCommit(func() { s.done(p) })
	}
	*s.buf = append(*s.buf, v)
}

// len is how much tx has staged so far.
func (s *stage[T]) len(tx *replica.Tx) int {
	if s.tx != tx {
		return 0
	}
	return len(*s.buf)
}

func (s *stage[T]) take() *[]T {
	if n := len(s.free); n > 0 {
		p := s.free[n-1]
		s.free = s.free[:n-1]
		return p
	}
	return new([]T)
}

func (s *stage[T]) done(p *[]T) {
	s.publish(*p)
	if s.buf == p {
		s.tx, s.buf = nil, nil
	}
	if cap(*p) <= maxKeptStage {
		clear(*p) // drop references to strings the buffer held
		*p = (*p)[:0]
		s.free = append(s.free, p)
	}
}
