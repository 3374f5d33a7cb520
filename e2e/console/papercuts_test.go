package console

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// Papercuts a newcomer met: wide tables on a laptop, badges drawn with a
// glyph no font has, "1 jobs", and no screen to search every queue.

// tablesFit is a JavaScript condition: no table of the screen scrolls
// sideways, and neither does the screen.
const tablesFit = `[...document.querySelectorAll('.table-wrap')].every((w) => w.scrollWidth <= w.clientWidth) && ` + screenFits

// On a 1440 px laptop the dead letter and the schedules fit beside the
// sidebar without scrolling sideways, with a 46-character queue name, long
// errors, a long schedule name and a long time zone.
func TestConsoleWideTablesFitALaptop(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	const queue = "billing.invoices.monthly-statement-generation"
	searchMakeDead(t, tn, queue, 3, strings.Repeat("SMTP connection refused by upstream relay mx.example.com ", 3))
	five, on := 5, true
	_, err := tn.owner.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "nightly digest of everything for every subscriber", Queue: queue,
		Cron: "0 3 * * 1-5", Timezone: "America/Argentina/Buenos_Aires", Payload: []byte(`{"template":"digest"}`), MaxRetries: &five, Enabled: &on})
	require.NoError(t, err)

	p := signedIn(t, tn.ownerKey, "/console/dead", "dead")
	p.setViewport(1440, 900)
	p.until(waitTimeout, query(".search-table tbody tr"), "the dead jobs")
	p.until(waitTimeout, tablesFit, "the dead letter's table fits 1440 px")
	p.goTo("/console/dead?sort=updated_at") // a column more: when each changed
	p.waitScreen("dead")
	p.until(waitTimeout, query(".search-table tbody tr"), "the dead jobs, by update")
	p.until(waitTimeout, tablesFit, "the dead letter's table fits 1440 px with its Updated column")
	p.goTo("/console/schedules")
	p.waitScreen("schedules")
	p.waitFor("tr[data-schedule]")
	p.until(waitTimeout, tablesFit, "the schedules table fits 1440 px")
	p.shot("schedules-1440")
}

// glyphsDrawn is a JavaScript expression: the glyphs of the page's badges
// that no font draws (each is drawn on a canvas in the badge's font and
// compared with a code point no font has, which comes out as a box).
const glyphsMissing = `(() => {
  const draw = (ch, font) => {
    const c = document.createElement('canvas');
    c.width = 48; c.height = 48;
    const x = c.getContext('2d');
    x.font = font;
    x.fillText(ch, 8, 32);
    return c.toDataURL();
  };
  const out = [];
  for (const g of document.querySelectorAll('.badge > [aria-hidden="true"]')) {
    const font = getComputedStyle(g).font;
    if (draw(g.textContent, font) === draw('\u{10FFFD}', font)) out.push(g.textContent + ' (' + g.parentElement.textContent.trim() + ')');
  }
  return out;
})()`

// Every badge's glyph is one a font has: a disabled schedule's, and a
// paused, draining or drained queue's on the dashboard.
func TestConsoleBadgeGlyphsAreDrawn(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	off := false
	_, err := tn.owner.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "off", Queue: "g.paused", Cron: "@daily", Enabled: &off})
	require.NoError(t, err)
	tn.seed(t, "g.paused", 1)
	tn.seed(t, "g.draining", 2)
	tn.seed(t, "g.drained", 1)
	_, err = tn.owner.PauseQueue(ctx(t), "g.paused")
	require.NoError(t, err)
	require.NotNil(t, fetchOne(t, tn, "g.draining")) // active, so the drain waits for it
	_, err = tn.owner.DrainQueue(ctx(t), "g.draining")
	require.NoError(t, err)
	_, err = tn.owner.DrainQueue(ctx(t), "g.drained")
	require.NoError(t, err)

	p := signedIn(t, tn.ownerKey, "/console/schedules", "schedules")
	p.waitFor(`tr[data-schedule="off"] .badge`)
	assert.Empty(t, eval[[]string](p, glyphsMissing), "badges whose glyph shows as a box on the schedules screen")
	p.goTo("/console/")
	p.waitScreen("dashboard")
	for _, st := range []string{"paused", "draining", "drained"} {
		p.waitFor(".qstate-" + st)
	}
	assert.Empty(t, eval[[]string](p, glyphsMissing), "badges whose glyph shows as a box on the dashboard")
}

// Clearing a queue of one job says "Delete 1 job".
func TestConsoleClearOneJobIsSingular(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	tn.seed(t, "qd.one", 1)
	p := signedIn(t, tn.ownerKey, "/console/queues/qd.one", "queue")
	p.waitText(`#queue-counts [data-state="pending"]`, "1")
	p.click("button#queue-clear")
	p.waitFor("#confirm-ok")
	assert.Equal(t, "Delete 1 job", strings.TrimSpace(p.text("#confirm-ok")))
}

// /console/jobs searches every queue of the namespace, from the sidebar.
func TestConsoleJobsScreenSearchesEveryQueue(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	a := tn.seed(t, "js.a", 2)
	b := tn.seed(t, "js.b", 1)
	dead := searchMakeDead(t, tn, "js.c", 1, "boom")
	p := signedIn(t, tn.ownerKey, "/console/", "dashboard")
	p.click(`.sidebar a[href="/console/jobs"]`)
	p.waitScreen("jobs")
	p.until(waitTimeout, "document.querySelectorAll('.search-table tbody tr').length === 4", "the jobs of every queue")
	ids := eval[[]string](p, `[...document.querySelectorAll('.search-table tbody tr a[href*="/jobs/"]')].map((a) => a.textContent)`)
	assert.ElementsMatch(t, append(append(append([]string{}, a...), b...), dead...), ids)
	queues := eval[[]string](p, `[...document.querySelectorAll('.search-table tbody td.queue-cell')].map((td) => td.textContent)`)
	assert.ElementsMatch(t, []string{"js.a", "js.a", "js.b", "js.c"}, queues)
	assert.Equal(t, "page", eval[string](p, query(`.sidebar a[href="/console/jobs"]`)+".getAttribute('aria-current')"))
}

// A failed job whose retry is due at once is pending again: the dashboard
// counts it in Pending, and its retry stat says it counts only the jobs
// waiting out a backoff (it said "Retrying 0" beside a retry due).
func TestConsoleDueRetriesAreExplained(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	three := 3
	_, err := tn.owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "due", MaxRetries: &three, RetryBackoff: "none"})
	require.NoError(t, err)
	j := fetchOne(t, tn, "due")
	require.NotNil(t, j)
	res, err := tn.owner.ForWorker("qw-1").Fail(ctx(t), j.ID, "boom", "")
	require.NoError(t, err)
	require.Equal(t, "pending", res.Status, "a zero backoff makes the retry due at once")

	p := signedIn(t, tn.ownerKey, "/console/", "dashboard")
	p.waitText(`#dash-totals [data-stat="pending"] .v`, "1")
	assert.Equal(t, "0", p.text(`#dash-totals [data-stat="retrying"] .v`))
	assert.Equal(t, "Waiting to retry", p.text(`#dash-totals [data-stat="retrying"] .k`))
	assert.Contains(t, eval[string](p, query(`#dash-totals [data-stat="retrying"] .k`)+".title"), "A retry that is due is pending again")
}
