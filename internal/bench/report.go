package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Report is the outcome of a run. Rates are over the measured window
// (Elapsed); counts include the calls that finished after it ended.
type Report struct {
	Mode        string // "throughput" or "latency"
	Target      string // the URL the load went to
	Direct      bool   // straight to a shard, bypassing the gateway
	Transport   string
	Producers   int
	Workers     int
	Batch       int // jobs per enqueue call
	FetchBatch  int // most jobs per fetch call
	AckBatch    int // most jobs per ack call
	PayloadSize int
	Rate        float64 // the producers' pace, jobs/s (0: flat out)
	Elapsed     time.Duration
	// Push mode: the queue's max_in_flight, and the receiver's URL.
	PushInFlight int
	PushURL      string

	Enqueued     int64 // jobs the server accepted
	EnqueueCalls int64
	Delivered    int64 // jobs fetched (push mode: deliveries the receiver verified)
	Acked        int64 // jobs completed (push mode: by the queue's counts)
	EmptyFetches int64 // long-polls that timed out with no job
	Unmatched    int64 // deliveries of jobs this run did not enqueue

	EnqueueRate float64 // jobs accepted per second
	JobRate     float64 // jobs completed (enqueue, fetch, ack) per second

	EnqueueLatency  Latency // one enqueue call
	DeliveryLatency Latency // enqueue call returned → fetch returned the job (push: the handler got it)
	PickupLatency   Latency // enqueue call started → fetch returned the job (push: the handler got it)
	AckLatency      Latency // one ack call

	Errors map[string]int64 // failed calls by error code
}

func (r *runner) report() *Report {
	merged := func(pick func(*loopStats) *histogram) Latency {
		all := newHistogram()
		for _, s := range r.stats {
			all.merge(pick(s))
		}
		return all.summary()
	}
	errs := map[string]int64{}
	for _, s := range r.stats {
		for code, n := range s.errors {
			errs[code] += n
		}
	}
	cfg := r.cfg
	mode := "throughput"
	if cfg.Latency {
		mode = "latency"
	}
	var pushURL string
	if r.push != nil {
		mode, pushURL = "push", r.push.url
	}
	rate := func(n int64) float64 {
		if r.end.elapsed <= 0 {
			return 0
		}
		return float64(n) / r.end.elapsed.Seconds()
	}
	return &Report{
		Mode: mode, Target: cfg.target(), Direct: cfg.DirectURL != "", Transport: cfg.Transport,
		Producers: cfg.Producers, Workers: cfg.Workers, Batch: cfg.Batch,
		FetchBatch: cfg.FetchBatch, AckBatch: cfg.AckBatch, PayloadSize: cfg.PayloadSize, Rate: cfg.Rate,
		PushInFlight: pushInFlight(cfg), PushURL: pushURL,
		Elapsed:  r.end.elapsed,
		Enqueued: r.counter.enqueued.Load(), EnqueueCalls: r.counter.calls.Load(),
		Delivered: r.counter.delivered.Load(), Acked: r.counter.acked.Load(),
		EmptyFetches: r.counter.empty.Load(), Unmatched: r.track.unmatched(),
		EnqueueRate:     rate(r.end.enqueued),
		JobRate:         rate(r.end.acked),
		EnqueueLatency:  merged(func(s *loopStats) *histogram { return s.enqueue }),
		DeliveryLatency: merged(func(s *loopStats) *histogram { return s.delivery }),
		PickupLatency:   merged(func(s *loopStats) *histogram { return s.pickup }),
		AckLatency:      merged(func(s *loopStats) *histogram { return s.ack }),
		Errors:          errs,
	}
}

// WriteText prints the report for people.
func (rep *Report) WriteText(w io.Writer) {
	via := "gateway"
	if rep.Direct {
		via = "shard (direct)"
	}
	fmt.Fprintf(w, "\njobbie bench: %s via %s %s (%s)\n", rep.Mode, via, rep.Target, rep.Transport)
	pace := "flat out"
	if rep.Rate > 0 {
		pace = fmt.Sprintf("paced at %.0f jobs/s", rep.Rate)
	}
	fetched, pickedUp := "enqueue→fetch", "fetched"
	if rep.Mode == "push" {
		fetched, pickedUp = "enqueue→handler", "delivered"
		fmt.Fprintf(w, "  %d producers (batch %d, %s), pushed to %s (max_in_flight %d), %d-byte payloads, %.1fs\n",
			rep.Producers, rep.Batch, pace, rep.PushURL, rep.PushInFlight, rep.PayloadSize, rep.Elapsed.Seconds())
	} else {
		fmt.Fprintf(w, "  %d producers (batch %d, %s), %d workers (fetch batch %d, ack batch %d), %d-byte payloads, %.1fs\n",
			rep.Producers, rep.Batch, pace, rep.Workers, rep.FetchBatch, rep.AckBatch, rep.PayloadSize, rep.Elapsed.Seconds())
	}
	fmt.Fprintf(w, "  enqueued   %10d jobs  %10.1f/s  (%d calls)\n", rep.Enqueued, rep.EnqueueRate, rep.EnqueueCalls)
	fmt.Fprintf(w, "  completed  %10d jobs  %10.1f/s  (%s %d, empty fetches %d, not ours %d)\n",
		rep.Acked, rep.JobRate, pickedUp, rep.Delivered, rep.EmptyFetches, rep.Unmatched)
	fmt.Fprintf(w, "  %-15s %9s %9s %9s %9s %9s %9s\n", "latency", "p50", "p90", "p99", "max", "mean", "count")
	for _, l := range []struct {
		name string
		l    Latency
	}{
		{"enqueue call", rep.EnqueueLatency}, {fetched, rep.DeliveryLatency},
		{"pickup", rep.PickupLatency}, {"ack call", rep.AckLatency},
	} {
		fmt.Fprintf(w, "  %-15s %9s %9s %9s %9s %9s %9d\n", l.name,
			ms(l.l.P50), ms(l.l.P90), ms(l.l.P99), ms(l.l.Max), ms(l.l.Mean), l.l.Count)
	}
	fmt.Fprintf(w, "  errors: %s\n", rep.errorList())
}

func (rep *Report) errorList() string {
	if len(rep.Errors) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(rep.Errors))
	for _, code := range slices.Sorted(maps.Keys(rep.Errors)) {
		parts = append(parts, fmt.Sprintf("%s %d", code, rep.Errors[code]))
	}
	return strings.Join(parts, ", ")
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}

// MarshalJSON writes the report with snake_case keys and durations in
// milliseconds.
func (rep *Report) MarshalJSON() ([]byte, error) {
	errs := rep.Errors
	if errs == nil {
		errs = map[string]int64{}
	}
	return json.Marshal(map[string]any{
		"mode": rep.Mode, "target": rep.Target, "direct": rep.Direct, "transport": rep.Transport,
		"producers": rep.Producers, "workers": rep.Workers, "batch": rep.Batch,
		"fetch_batch": rep.FetchBatch, "ack_batch": rep.AckBatch,
		"payload_size": rep.PayloadSize, "elapsed_seconds": rep.Elapsed.Seconds(), "rate": rep.Rate,
		"push_in_flight": rep.PushInFlight, "push_url": rep.PushURL,
		"enqueued": rep.Enqueued, "enqueue_calls": rep.EnqueueCalls, "delivered": rep.Delivered,
		"acked": rep.Acked, "empty_fetches": rep.EmptyFetches, "unmatched": rep.Unmatched,
		"enqueue_per_second": rep.EnqueueRate, "jobs_per_second": rep.JobRate,
		"enqueue_latency": rep.EnqueueLatency, "delivery_latency": rep.DeliveryLatency,
		"pickup_latency": rep.PickupLatency, "ack_latency": rep.AckLatency,
		"errors": errs,
	})
}

// MarshalJSON writes a latency summary in milliseconds.
func (l Latency) MarshalJSON() ([]byte, error) {
	f := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return json.Marshal(map[string]any{
		"count": l.Count, "p50_ms": f(l.P50), "p90_ms": f(l.P90), "p99_ms": f(l.P99),
		"max_ms": f(l.Max), "mean_ms": f(l.Mean),
	})
}

func pushInFlight(cfg Config) int {
	if !cfg.Push {
		return 0
	}
	return cfg.PushInFlight
}
