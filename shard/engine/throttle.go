package engine

// A throttle lets at most Rate fetches of a queue happen in any window of
// Period. It is a sliding window kept in bounded space: the period is cut
// into throttleSlices slices, and a ring of throttleSlices+1 counters holds
// the fetches of the slices that overlap the last period. Counting the
// whole oldest slice errs on the safe side: the rate is never exceeded, and
// a slot frees at most one slice (Period/64) late. Every change happens in
// apply with the entry's clock, so replicas agree.
type Throttle struct {
	Rate   int64   `codec:"r"`
	Period int64   `codec:"p"` // ns
	Slots  []int64 `codec:"s,omitempty"`
	Head   int64   `codec:"h,omitempty"` // slice number of the newest slot
}

const throttleSlices = 64

// newThrottle is an empty window of rate fetches per period (ns).
func newThrottle(rate, period int64) *Throttle {
	return &Throttle{Rate: rate, Period: period}
}

func (t *Throttle) width() int64 {
	if w := t.Period / throttleSlices; w > 0 {
		return w
	}
	return 1
}

// slot returns the ring index of slice s.
func slot(s int64) int { return int(s % (throttleSlices + 1)) }

// room reports how many fetches the window allows at now, and when it is
// full, the time the oldest counted slice leaves it. It does not change t.
func (t *Throttle) room(now int64) (room int64, freeAt int64) {
	w := t.width()
	cur := now / w
	var n int64
	oldest := int64(-1)
	if len(t.Slots) > 0 {
		for s := t.Head - throttleSlices; s <= t.Head; s++ {
			if s < cur-throttleSlices {
				continue // out of the window (later slices count: a clock that stepped back)
			}
			if c := t.Slots[slot(s)]; c > 0 {
				n += c
				if oldest < 0 {
					oldest = s
				}
			}
		}
	}
	room = t.Rate - n
	if room <= 0 && oldest >= 0 {
		freeAt = (oldest + throttleSlices + 1) * w
	}
	return room, freeAt
}

// take records one fetch at now.
func (t *Throttle) take(now int64) {
	cur := now / t.width()
	if len(t.Slots) != throttleSlices+1 {
		t.Slots, t.Head = make([]int64, throttleSlices+1), cur
	}
	if cur-t.Head > throttleSlices {
		clear(t.Slots)
		t.Head = cur
	}
	for t.Head < cur {
		t.Head++
		t.Slots[slot(t.Head)] = 0
	}
	if cur >= t.Head-throttleSlices {
		t.Slots[slot(cur)]++
	}
}
