package gateway

import (
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// TestRouteMetricsCountEachStatus checks that a route's cached counters
// count each status under its own labels, from many goroutines at once.
func TestRouteMetricsCountEachStatus(t *testing.T) {
	rt := route{method: post, path: "/api/v1/metrics-test"}
	m := newRouteMetrics(rt)
	count := func(status string) float64 {
		var d dto.Metric
		if err := requestsTotal.WithLabelValues(rt.method, rt.path, status).Write(&d); err != nil {
			t.Fatal(err)
		}
		return d.GetCounter().GetValue()
	}
	before201, before429 := count("201"), count("429")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				m.observe(201, 0)
			}
			m.observe(429, 0)
		}()
	}
	wg.Wait()
	if got := count("201") - before201; got != 400 {
		t.Errorf("201s counted %v, want 400", got)
	}
	if got := count("429") - before429; got != 8 {
		t.Errorf("429s counted %v, want 8", got)
	}
}
