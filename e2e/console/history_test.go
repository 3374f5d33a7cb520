package console

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// chartPeak is a JavaScript expression: how far above the baseline (in
// the chart's units of height) the highest point of one series' line is;
// 0 when the line lies flat on it.
func chartPeak(chart, series string) string {
	return `((l) => { const ys = l.getAttribute('points').trim().split(' ').map((p) => +p.split(',')[1]);` +
		` return Math.max(...ys) - Math.min(...ys); })(document.querySelector('#queue-history [data-chart="` + chart + `"] polyline[data-series="` + series + `"]'))`
}

// Jobs enqueued and completed show on the queue's history charts: the
// throughput chart's completed line and the processing time's p50 rise
// above the baseline, the axes carry units; a range switch asks again in
// hour steps; a queue with no history says so; and the dashboard's row
// for the queue draws its hour of completions.
func TestConsoleQueueHistoryCharts(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	const n = 4
	tn.seed(t, "hist.busy", n)
	w := tn.owner.ForWorker("hist-worker")
	for done := 0; done < n; {
		jobs, err := w.FetchBatch(ctx(t), client.FetchBatchRequest{Queues: []string{"hist.busy"}, Max: n, Timeout: 5 * time.Second})
		require.NoError(t, err)
		for _, j := range jobs {
			require.NoError(t, w.Ack(ctx(t), j.ID, nil))
			done++
		}
	}
	_, err := tn.owner.PutQueue(ctx(t), "hist.quiet", client.QueueSpec{})
	require.NoError(t, err)

	p := signedIn(t, tn.ownerKey, "/console/queues/hist.busy", "queue")
	p.waitFor(`#queue-history [data-chart="throughput"] polyline[data-series="completed"]`)
	assert.Equal(t, "true", eval[string](p, `document.querySelector('#queue-history [data-range="1h"]').getAttribute('aria-pressed')`))
	assert.Greater(t, eval[float64](p, chartPeak("throughput", "completed")), 0.0, "the completed line draws the jobs")
	assert.Greater(t, eval[float64](p, chartPeak("throughput", "enqueued")), 0.0, "the enqueued line draws the jobs")
	assert.Equal(t, 0.0, eval[float64](p, chartPeak("throughput", "dead")), "nothing died")
	assert.Greater(t, eval[float64](p, chartPeak("processing", "p50")), 0.0, "the acks' processing time")
	assert.Equal(t, 60, eval[int](p, `document.querySelector('#queue-history [data-chart="throughput"] polyline[data-series="completed"]').getAttribute('points').trim().split(' ').length`), "an hour of minutes")
	assert.Contains(t, p.text(`#queue-history [data-chart="throughput"] figcaption`), "jobs per minute")
	assert.Contains(t, eval[string](p, `document.querySelector('#queue-history [data-chart="processing"] svg').textContent`), " ms", "the value axis has its unit")
	assert.Regexp(t, `completed peak [1-4]\b`, eval[string](p, `document.querySelector('#queue-history [data-chart="throughput"] svg').getAttribute('aria-label')`))
	p.shot("queue-history")

	p.click(`#queue-history button[data-range="7d"]`)
	p.until(waitTimeout, `document.querySelector('#queue-history').dataset.range === '7d' && document.querySelector('#queue-history').dataset.loaded === 'true'`, "the 7 day range loaded")
	p.waitFor(`#queue-history [data-chart="throughput"] polyline[data-series="completed"]`)
	assert.Contains(t, p.text(`#queue-history [data-chart="throughput"] figcaption`), "jobs per hour")
	assert.Greater(t, eval[float64](p, chartPeak("throughput", "completed")), 0.0, "the hour's completions")

	p.goTo("/console/queues/hist.quiet")
	p.waitScreen("queue")
	p.waitText("#queue-history-empty", "No history in the last 1 h")
	assert.Equal(t, 0, p.count(`#queue-history polyline`))

	p.goTo("/console/")
	p.waitScreen("dashboard")
	p.waitFor(`#dash-queues tr[data-queue="hist.busy"] td[data-col="hour"] svg.sparkline`)
	assert.Regexp(t, `^completed per minute, last hour: (0, ){50,}.*[1-9]`,
		eval[string](p, `document.querySelector('#dash-queues tr[data-queue="hist.busy"] td[data-col="hour"] svg').getAttribute('aria-label')`))
}
