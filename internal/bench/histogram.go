package bench

import (
	"math/bits"
	"time"
)

// subBits sets the histogram's precision: values below 2^subBits ns are
// exact, larger ones fall in buckets 1/2^(subBits-1) of their magnitude
// wide (under 1% here).
const subBits = 8

const (
	subCount = 1 << subBits       // exact buckets, and where log buckets start
	subHalf  = 1 << (subBits - 1) // buckets per power of two above that
	buckets  = subCount + (64-subBits)*subHalf
)

// histogram records durations in log-linear buckets (HDR-style): constant
// memory, relative error under 1%, and cheap to merge. It is not safe for
// concurrent use; each goroutine keeps its own and they are merged at the
// end.
type histogram struct {
	counts []uint64
	n      uint64
	sum    uint64
	max    uint64
}

func newHistogram() *histogram { return &histogram{counts: make([]uint64, buckets)} }

// bucketOf maps a value to its bucket.
func bucketOf(v uint64) int {
	if v < subCount {
		return int(v)
	}
	shift := bits.Len64(v) - subBits // v>>shift is in [subHalf, subCount)
	return subCount + (shift-1)*subHalf + int(v>>shift) - subHalf
}

// bucketMid is a representative value of bucket i: its midpoint.
func bucketMid(i int) uint64 {
	if i < subCount {
		return uint64(i)
	}
	shift := (i-subCount)/subHalf + 1
	low := uint64((i-subCount)%subHalf+subHalf) << shift
	return low + (uint64(1)<<shift)/2
}

func (h *histogram) record(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[bucketOf(v)]++
	h.n++
	h.sum += v
	h.max = max(h.max, v)
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// quantile returns the value at quantile q (0..1), never above the
// largest value recorded.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(min(bucketMid(i), h.max))
		}
	}
	return time.Duration(h.max)
}

// Latency summarizes a latency distribution.
type Latency struct {
	Count int64
	Mean  time.Duration
	P50   time.Duration
	P90   time.Duration
	P99   time.Duration
	Max   time.Duration
}

func (h *histogram) summary() Latency {
	if h.n == 0 {
		return Latency{}
	}
	return Latency{
		Count: int64(h.n),
		Mean:  time.Duration(h.sum / h.n),
		P50:   h.quantile(0.50),
		P90:   h.quantile(0.90),
		P99:   h.quantile(0.99),
		Max:   time.Duration(h.max),
	}
}
