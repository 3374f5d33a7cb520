package console

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// alertFireTimeout bounds waiting for a rule to fire: the leader evaluates
// every 15 s and the screen reads the rules as often, with room for a
// loaded machine.
const alertFireTimeout = 90 * time.Second

// alerts is the namespace's rules as the API answers them, read from
// inside the page.
func alerts(t *testing.T, p *page) []wire.AlertRule {
	t.Helper()
	var l wire.AlertRuleList
	p.apiJSON("GET", "/api/v1/alerts", nil, nil).decode(t, &l)
	return l.Alerts
}

// The Alerts screen: a rule made in the dialog (a duration the API
// refuses is shown under its field, and makes nothing) is listed, fires
// on a queue with jobs pending (its state, since and value in the list,
// and on the dashboard's card), is disabled and edited (the API keeps
// what the form sent) and deleted after a confirmation. A viewer
// (namespace.read, no queue.manage) reads the rules without the forms;
// a key of some queues is told it may not read them.
func TestConsoleAlerts(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	tn.seed(t, "al.mail", 3)
	p := signedIn(t, tn.ownerKey, "/console/alerts", "alerts")
	p.waitText(`[data-screen="alerts"] .empty`, "No alert rules")

	p.click("#alert-new")
	p.setValue("#alert-name", "mail-backlog")
	p.setValue("#alert-kind", "queue_depth_above")
	p.setValue("#alert-queue", "al.mail")
	p.setValue("#alert-threshold", "1")
	p.setValue("#alert-for", "forever")
	p.click("#alert-save")
	p.waitFor("#alert-for-error")
	assert.Equal(t, "true", eval[string](p, `document.querySelector('#alert-for').getAttribute('aria-invalid')`))
	assert.Zero(t, p.count("#alert-error"), "an error naming a field is shown on that field alone")
	assert.Empty(t, alerts(t, p), "a refused create made a rule")
	p.shot("alerts-field-error")

	p.setValue("#alert-for", "0s")
	p.click("#alert-save")
	p.waitNoDialog("#alert-form")
	p.waitText("#alerts-notice", "Rule mail-backlog created")
	row := `#alerts tr[data-alert="mail-backlog"]`
	p.waitText(row+" .alert-queue", "al.mail")
	p.waitText(row+" .alert-condition", "more than 1 pending for 0s")
	got := alerts(t, p)
	require.Len(t, got, 1)
	assert.Equal(t, "queue_depth_above", got[0].Kind)
	assert.Equal(t, "al.mail", got[0].Queue)
	assert.Equal(t, 1.0, got[0].Threshold)
	assert.True(t, got[0].Enabled)

	// Three jobs pend, more than 1: it fires at the leader's next evaluation.
	p.until(alertFireTimeout, `document.querySelector('`+row+`')?.dataset.state === "firing"`, "the rule shown firing")
	p.waitText(row+" .alert-value", "3 jobs")
	assert.Equal(t, 1, p.count(row+" .alert-since time"), "since when it fires")
	assert.Empty(t, eval[[]string](p, glyphsMissing), "a badge glyph no font draws")
	p.shot("alerts")
	p.click(mainNav + ` a[href="/console/"]`)
	p.waitScreen("dashboard")
	p.waitText(`#dash-alerts li[data-alert="mail-backlog"]`, "al.mail")

	// A viewer reads the rules, and has no forms.
	viewer := tn.key(t, tenancy.RoleViewer)
	v := signedIn(t, viewer.Token, "/console/alerts", "alerts")
	v.waitFor(`#alerts tr[data-alert="mail-backlog"]`)
	for _, sel := range []string{"#alert-new", ".alert-edit", ".alert-toggle", ".alert-delete"} {
		assert.Zero(t, v.count(sel), "%s shown to a viewer", sel)
	}

	// A key of some queues may not read rules that may watch every queue
	// (403): the screen says so, and the dashboard leaves the card out.
	_, err := tn.owner.CreateRole(ctx(t), client.Role{Name: "al-scoped", Permissions: []client.Permission{
		{Actions: []string{"namespace.read", "queue.read", "job.read"}, Namespaces: []string{"*"}, Queues: []string{"al.*"}}}})
	require.NoError(t, err)
	scoped, err := tn.owner.CreateKey(ctx(t), client.CreateKeyRequest{Name: "al-scoped", Role: wire.RoleName("al-scoped"), Namespaces: []string{tn.namespace}})
	require.NoError(t, err)
	s := signedIn(t, scoped.Token, "/console/alerts", "alerts")
	s.waitText("#alerts-forbidden", "may not read")
	assert.Zero(t, s.count("#alert-new"))
	s.click(mainNav + ` a[href="/console/"]`)
	s.waitScreen("dashboard")
	s.waitText(`[data-screen="dashboard"]`, "al.mail")
	// The card shows "…" while its request is out and leaves once the 403
	// is in; the queues' answer may come first.
	s.waitGone("#dash-alerts")

	p.click(mainNav + ` a[href="/console/alerts"]`)
	p.waitScreen("alerts")
	p.click(row + " .alert-toggle")
	p.waitText("#alerts-notice", "Rule mail-backlog disabled")
	p.until(waitTimeout, `document.querySelector('`+row+`')?.dataset.state === "off"`, "the rule shown off")
	assert.Empty(t, eval[[]string](p, glyphsMissing), "a badge glyph no font draws")
	got = alerts(t, p)
	require.Len(t, got, 1)
	assert.False(t, got[0].Enabled)
	assert.Equal(t, "0s", got[0].For, "disabling kept the settings")

	p.click(row + " .alert-edit")
	p.waitFor("#alert-form")
	assert.Equal(t, "1", eval[string](p, `document.querySelector('#alert-threshold').value`))
	p.setValue("#alert-kind", "failure_rate_above")
	p.setValue("#alert-threshold", "25")
	p.setValue("#alert-for", "10m")
	p.setValue("#alert-min-count", "40")
	p.click("#alert-save")
	p.waitNoDialog("#alert-form")
	p.waitText("#alerts-notice", "Rule mail-backlog saved")
	got = alerts(t, p)
	require.Len(t, got, 1)
	assert.Equal(t, "failure_rate_above", got[0].Kind)
	assert.Equal(t, 25.0, got[0].Threshold)
	assert.Equal(t, "10m", got[0].For)
	assert.Equal(t, 40, got[0].MinCount)
	assert.False(t, got[0].Enabled, "the edit kept it disabled")

	p.click(row + " .alert-delete")
	p.click("#confirm-ok")
	p.waitText("#alerts-notice", "Rule mail-backlog deleted")
	p.waitText(`[data-screen="alerts"] .empty`, "No alert rules")
	assert.Empty(t, alerts(t, p))
}
