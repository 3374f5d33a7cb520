package console

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

func usageStat(meter string) string {
	return fmt.Sprintf(`#usage-totals [data-stat=%q] .v`, meter)
}

// A fresh tenant enqueues 5 jobs, a worker runs and acks 2: the usage
// screen shows those counts once metering has pulled them (refreshing
// until then), a chart per meter, and the plan; the invoices screen lists
// the upcoming invoice first and its detail opens with a CSV link that
// downloads.
func TestConsoleUsage(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	tn.seed(t, "use.q", 5)
	wk := tn.owner.ForWorker("usage-worker-1")
	for range 2 {
		j, err := wk.Fetch(ctx(t), client.FetchRequest{Queues: []string{"use.q"}, Hostname: "host-usage", Timeout: 5 * time.Second})
		require.NoError(t, err)
		require.NotNil(t, j)
		require.NoError(t, wk.Ack(ctx(t), j.ID, nil))
	}

	p := signedIn(t, tn.ownerKey, "/console/usage", "usage")
	want := map[string]string{"jobs_enqueued": "5", "executions": "2", "jobs_completed": "2"}
	seen := func() bool {
		for m, v := range want {
			if p.text(usageStat(m)) != v {
				return false
			}
		}
		return true
	}
	// Metering lags by a pull interval (2 s in dev) and a pull's requests.
	deadline := time.Now().Add(30 * time.Second)
	for !seen() {
		if time.Now().After(deadline) {
			p.fail("usage not shown within 30 s: %v", eval[map[string]string](p,
				`Object.fromEntries([...document.querySelectorAll('#usage-totals [data-stat]')].map((s) => [s.dataset.stat, s.querySelector('.v').textContent]))`))
		}
		p.poll(time.Second, "false")
		p.click("#usage-refresh")
		p.waitScreen("usage")
	}
	assert.Equal(t, 10, p.count(`#usage-charts svg[role="img"]`), "a chart per meter")
	label := eval[string](p, `document.querySelector('#usage-charts [data-meter="jobs_enqueued"] svg').getAttribute('aria-label')`)
	assert.Contains(t, label, "Jobs enqueued per hour")
	assert.Contains(t, label, "total 5")
	assert.Positive(t, p.count(`#usage-charts [data-meter="jobs_enqueued"] rect.bar`), "bars drawn")
	// The running hour is open: its bar is hatched (a pattern fill) and said to be incomplete.
	assert.Positive(t, p.count(`#usage-charts [data-meter="jobs_enqueued"] rect.bar-open[data-incomplete="true"]`), "the open hour marked")
	assert.Contains(t, eval[string](p, `getComputedStyle(document.querySelector('#usage-charts rect.bar-open')).fill`), "url(")
	assert.Contains(t, label, "incomplete")
	assert.Equal(t, "5", p.text(fmt.Sprintf(`#usage-namespaces tr[data-namespace=%q] td[data-col="jobs_enqueued"]`, tn.namespace)))
	p.waitFor("#usage-plan #plan-name")
	assert.NotEmpty(t, p.text("#plan-name"))

	// The range and granularity live in the URL.
	p.setValue("#usage-granularity", "day")
	p.until(waitTimeout, `location.search.includes('granularity=day')`, "granularity in the URL")
	p.waitScreen("usage")
	p.until(waitTimeout, `document.querySelector('#usage-range-text')?.textContent.includes('by day')`, "usage by day")
	p.setValue("#usage-range", "7d")
	p.until(waitTimeout, `location.search.includes('range=7d')`, "range in the URL")
	p.waitScreen("usage")
	p.shot("usage")
	p.setViewport(390, 844)
	p.until(waitTimeout, `document.documentElement.scrollWidth <= 390`, "the usage screen fits a phone")
	p.shot("usage-phone")
	p.setViewport(1280, 800)

	p.click(mainNav + ` a[href="/console/invoices"]`)
	p.waitScreen("invoices")
	p.waitFor("#invoices tbody tr")
	assert.Equal(t, "true", eval[string](p, `document.querySelector('#invoices tbody tr').dataset.upcoming || ''`), "the upcoming invoice first")
	id := eval[string](p, `document.querySelector('#invoices tbody tr').dataset.invoice`)
	require.True(t, strings.HasPrefix(id, "inv_"), "invoice id %q", id)
	p.click(`#invoices tbody tr a`)
	p.waitScreen("invoice")
	assert.Equal(t, id, p.text("#invoice-id"))
	assert.NotEmpty(t, p.text(`#invoice-totals [data-total="total"]`))
	href := eval[string](p, `document.querySelector('#invoice-csv').getAttribute('href')`)
	assert.Equal(t, "/api/v1/invoices/"+id+"/csv", href)
	csv := p.apiJSON("GET", href, nil, nil)
	assert.Equal(t, 200, csv.Status, "the CSV downloads with the session: %s", csv.Body)
	assert.True(t, strings.HasPrefix(csv.Body, "invoice_id,"), "CSV header: %.80s", csv.Body)
	p.shot("invoice")

	p.goTo("/console/invoices/inv_nope_2020-01")
	p.waitScreen("invoice")
	p.waitFor("#invoice-missing")
}

// A billing key sees Usage and Invoices and nothing of the queues; its
// screens work. A viewer gets no Usage.
func TestConsoleUsageRoles(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	billing := tn.key(t, tenancy.RoleBilling, "*") // plans and invoices cover the whole tenant
	p := signedIn(t, billing.Token, "/console/", "dashboard")
	assert.Equal(t, 1, p.count(mainNav+` a[href="/console/usage"]`), "billing: Usage in the nav")
	assert.Equal(t, 1, p.count(mainNav+` a[href="/console/invoices"]`), "billing: Invoices in the nav")
	assert.Equal(t, 0, p.count(mainNav+` a[href="/console/queues"]`), "billing: no Queues")
	p.click(mainNav + ` a[href="/console/usage"]`)
	p.waitScreen("usage")
	assert.Equal(t, 0, p.count("#usage-error"), "billing reads usage")
	p.waitFor("#usage-plan")
	p.click(mainNav + ` a[href="/console/invoices"]`)
	p.waitScreen("invoices")
	p.waitFor("#invoices tbody tr")

	viewer := tn.key(t, tenancy.RoleViewer)
	v := signedIn(t, viewer.Token, "/console/", "dashboard")
	assert.Equal(t, 0, v.count(mainNav+` a[href="/console/usage"]`), "viewer: no Usage")
	assert.Equal(t, 0, v.count(mainNav+` a[href="/console/invoices"]`), "viewer: no Invoices")
}
