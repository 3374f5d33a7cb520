package moveload

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Report is what the load saw.
type Report struct {
	Enqueues   int // calls answered 2xx
	Jobs       int // jobs they acknowledged
	Unanswered int // jobs of enqueues answered otherwise
	EnqErrs    map[string]int
	// Of the enqueues started within the window asked for: their latency
	// and the longest a producer went without a successful enqueue.
	WindowEnqueues       int
	P50, P99, MaxLatency time.Duration
	MaxGap               time.Duration
	// Slow counts them at 25 ms or more, the gateway's first pause
	// before it sends a refused request again.
	Slow int

	Delivered        int      // deliveries of jobs to workers
	Completed        int      // jobs acked (2xx) at least once
	Lost             []string // acknowledged jobs never acked
	Doubles          int      // jobs acked twice or more
	DoublesUnexcused []string // of them, those without a lease that ran out
	LeaseExpiries    int      // jobs delivered again after a lease ran out
	Batches          int      // batches acknowledged or whose callback came
	BatchesMissed    []string // batches acknowledged whose callback never came
	BatchesTwice     []string // callbacks delivered more than once
	AckErrs          map[string]int
	FetchErrs        map[string]int
}

func (r Report) String() string {
	return fmt.Sprintf("enqueues %d (jobs %d, unanswered %d %v); in the window %d (%d of 25 ms or more): p50 %v p99 %v max %v, max gap %v; "+
		"delivered %d, completed %d, lost %d, doubles %d (unexcused %d), lease expiries %d; batches %d (missed %d, twice %d); "+
		"ack errors %v, fetch errors %v",
		r.Enqueues, r.Jobs, r.Unanswered, r.EnqErrs, r.WindowEnqueues, r.Slow, r.P50, r.P99, r.MaxLatency, r.MaxGap,
		r.Delivered, r.Completed, len(r.Lost), r.Doubles, len(r.DoublesUnexcused), r.LeaseExpiries,
		r.Batches, len(r.BatchesMissed), len(r.BatchesTwice), r.AckErrs, r.FetchErrs)
}

// Report sums up the books; from and to bound the window the pause is
// measured in.
func (l *Load) Report(from, to time.Time) Report {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := Report{Enqueues: len(l.enqueues), Jobs: len(l.enqueued), Unanswered: len(l.unanswered),
		EnqErrs: clone(l.enqErrs), AckErrs: clone(l.ackErrs), FetchErrs: clone(l.fetchErrs)}

	var lat []time.Duration
	ends := map[int][]time.Time{}
	for _, s := range l.enqueues {
		if s.end.Before(from) || s.start.After(to) {
			continue
		}
		lat = append(lat, s.end.Sub(s.start))
		if s.end.Sub(s.start) >= 25*time.Millisecond {
			r.Slow++
		}
		ends[s.producer] = append(ends[s.producer], s.end)
	}
	r.WindowEnqueues = len(lat)
	if len(lat) > 0 {
		slices.Sort(lat)
		r.P50, r.P99, r.MaxLatency = quantile(lat, 0.50), quantile(lat, 0.99), lat[len(lat)-1]
	}
	for _, e := range ends {
		slices.SortFunc(e, func(a, b time.Time) int { return a.Compare(b) })
		for i := 1; i < len(e); i++ {
			r.MaxGap = max(r.MaxGap, e[i].Sub(e[i-1]))
		}
	}

	for _, n := range l.delivered {
		r.Delivered += n
	}
	r.LeaseExpiries = len(l.expired)
	for id, n := range l.acked {
		r.Completed++
		if n > 1 {
			r.Doubles++
			if !l.expired[id] {
				r.DoublesUnexcused = append(r.DoublesUnexcused, id)
			}
		}
	}
	for id := range l.enqueued {
		if l.acked[id] == 0 {
			r.Lost = append(r.Lost, id)
		}
	}
	for b, n := range l.batches {
		r.Batches++
		switch {
		case n == 0:
			r.BatchesMissed = append(r.BatchesMissed, b)
		case n > 1:
			r.BatchesTwice = append(r.BatchesTwice, b)
		}
	}
	sort.Strings(r.Lost)
	return r
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q * float64(len(sorted)-1))
	return sorted[i]
}

func clone(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Tap is a client transport that counts every 5xx answer, and those that
// came without Retry-After (a client not told to retry).
type Tap struct {
	Base http.RoundTripper

	mu     sync.Mutex
	all    int
	bare   []string // the 5xx answers without Retry-After
	byCode map[string]int
}

// RoundTrip implements http.RoundTripper.
func (t *Tap) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.Base.RoundTrip(req)
	if err != nil || res.StatusCode < 500 {
		return res, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.all++
	if t.byCode == nil {
		t.byCode = map[string]int{}
	}
	t.byCode[fmt.Sprintf("%d %s", res.StatusCode, req.URL.Path)]++
	if res.Header.Get("Retry-After") == "" {
		t.bare = append(t.bare, fmt.Sprintf("%s %s: %d", req.Method, req.URL.Path, res.StatusCode))
	}
	return res, nil
}

// Counts are the 5xx answers seen, by status and path, and those without
// Retry-After.
func (t *Tap) Counts() (all int, byStatus map[string]int, bare []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.all, clone(t.byCode), append([]string(nil), t.bare...)
}

// String sums the counts up.
func (t *Tap) String() string {
	all, by, bare := t.Counts()
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s ×%d;", k, by[k])
	}
	return fmt.Sprintf("5xx %d (without Retry-After %d):%s", all, len(bare), b.String())
}
