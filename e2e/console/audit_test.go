package console

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// auditPauses is one more than a page of the Audit screen, so the queue's
// records take two.
const auditPauses = 51

// The Audit screen: queue pauses by the owner's key appear, filtered by
// action and object, newest first over two pages by the API's cursor,
// each record once;
// a record's detail shows its route and result; the export reads them
// all; a time range the API refuses is told and the screen goes on. A
// developer (no audit.read) has no link to it, is told it is not allowed,
// and the console goes on working.
func TestConsoleAudit(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	for range auditPauses {
		_, err := tn.owner.PauseQueue(ctx(t), "au.mail")
		require.NoError(t, err)
	}
	p := signedIn(t, tn.ownerKey, "/console/", "dashboard")
	require.Equal(t, 1, p.count(mainNav+` a[href="/console/audit"]`), "the owner has the audit log in the navigation")
	p.click(mainNav + ` a[href="/console/audit"]`)
	p.waitScreen("audit")
	p.setValue("#audit-f-action", "queue.manage")
	p.setValue("#audit-f-object", "queue/au.mail")
	p.click("#audit-apply")
	p.until(waitTimeout, `location.search.includes('object=queue%2Fau.mail')`, "the filters in the URL")

	rows := `#audit tr[data-record][data-action="queue.manage"][data-result="ok"]`
	p.until(waitTimeout, fmt.Sprintf(`document.querySelectorAll('%s').length > 0 && !document.querySelector('#audit-next').disabled`, rows), "a first page with a next one")
	ids := map[string]bool{}
	collect := func() {
		for _, id := range eval[[]string](p, `[...document.querySelectorAll('#audit tr[data-record]')].map((r) => r.dataset.record)`) {
			assert.False(t, ids[id], "record %s on two pages", id)
			ids[id] = true
		}
	}
	for _, obj := range eval[[]string](p, `[...document.querySelectorAll('#audit .audit-object')].map((c) => c.innerText)`) {
		assert.Equal(t, "queue/au.mail", obj)
	}
	collect()
	// Newest first: the API's newest record of the filter heads page 1,
	// and every page's times go down.
	newest, err := tn.owner.Audit(ctx(t), client.AuditQuery{AuditFilter: wire.AuditFilter{Action: "queue.manage", Object: "queue/au.mail"},
		Limit: 1, Newest: true})
	require.NoError(t, err)
	require.Len(t, newest.Records, 1)
	newestFirst := func() {
		t.Helper()
		times := eval[[]float64](p, `[...document.querySelectorAll('#audit tr[data-record] .audit-time')].map((c) => Date.parse(c.innerText))`)
		for i := 1; i < len(times); i++ {
			assert.GreaterOrEqual(t, times[i-1], times[i], "newest first")
		}
	}
	newestFirst()
	firstID := func() string {
		return eval[string](p, `document.querySelector('#audit tr[data-record]')?.dataset.record ?? ""`)
	}
	first := firstID()
	assert.Equal(t, newest.Records[0].ID, first, "the newest record first")
	p.click(`#audit tr[data-record] .audit-detail`)
	p.waitText("#audit-record-route", "POST /api/v1/queues/:name/pause")
	p.waitText("#audit-record-result", "ok (200)")
	p.waitText("#audit-record-object", "queue/au.mail")
	p.shot("audit-record")
	p.click("#audit-record-close")
	p.waitNoDialog("#audit-record-kv")

	for page := 2; !eval[bool](p, `document.querySelector('#audit-next').disabled`); page++ {
		require.LessOrEqual(t, page, auditPauses, "more pages than records")
		p.click("#audit-next")
		p.waitText(`nav[aria-label="Audit pages"] [aria-current="page"]`, fmt.Sprintf("Page %d", page))
		// The old page stays until the new one arrives.
		p.until(waitTimeout, fmt.Sprintf(`(document.querySelector('#audit tr[data-record]')?.dataset.record ?? "") !== %q`, first), "another page shown")
		first = firstID()
		collect()
		newestFirst()
	}
	assert.Len(t, ids, auditPauses, "each pause once over the pages")
	// The export walks the same filtered log through its JSON-lines pages.
	p.click("#audit-export")
	p.waitText("#audit-export-notice", fmt.Sprintf("Exported %d records.", auditPauses))

	p.click("#audit-prev")
	p.waitText(`nav[aria-label="Audit pages"] [aria-current="page"]`, fmt.Sprintf("Page %d", 1))

	p.setValue("#audit-f-from", "2026-11-29T06:00")
	p.setValue("#audit-f-to", "2026-11-29T05:00")
	p.click("#audit-apply")
	p.waitText("#audit-error", "to must be after from")
	p.click("#audit-clear")
	p.until(waitTimeout, `location.search === ''`, "the filters cleared")
	p.waitFor(`#audit tr[data-record]`)

	// A developer may not read the audit log: told so, and the console goes on.
	dev := tn.key(t, tenancy.RoleDeveloper)
	v := signedIn(t, dev.Token, "/console/", "dashboard")
	assert.Zero(t, v.count(mainNav+` a[href="/console/audit"]`), "a developer has no link to the audit log")
	v.goTo("/console/audit")
	v.waitScreen("audit")
	v.waitText("#audit-forbidden", "Not allowed")
	assert.Zero(t, v.count("#audit-filters"))
	v.click(mainNav + ` a[href="/console/queues"]`)
	v.waitScreen("queues")
	v.waitText(`[data-screen="queues"]`, "au.mail")
}
