package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// The SDK's alert rule calls against a real gateway: create, read,
// list, replace and delete a rule; a bad rule is a 400 naming its field
// and leaves nothing; another tenant's key finds no such rule.
func TestAlertRulesThroughTheSDK(t *testing.T) {
	t.Parallel()
	a, _ := shared.tenant(t)
	b, _ := shared.tenant(t)
	c := ctx(t)

	r, err := a.CreateAlertRule(c, client.AlertRuleRequest{Name: "backlog", Kind: client.AlertQueueDepth, Queue: "emails", Threshold: 100, For: "5m"})
	require.NoError(t, err)
	require.Equal(t, "backlog", r.Name)
	require.Equal(t, "ok", r.State)
	require.True(t, r.Enabled)

	got, err := a.GetAlertRule(c, "backlog")
	require.NoError(t, err)
	require.Equal(t, float64(100), got.Threshold)

	off := false
	r, err = a.UpdateAlertRule(c, "backlog", client.AlertRuleRequest{Kind: client.AlertQueueDepth, Queue: "emails", Threshold: 500, For: "10m", Enabled: &off})
	require.NoError(t, err)
	require.Equal(t, float64(500), r.Threshold)
	require.Equal(t, "10m", r.For)
	require.False(t, r.Enabled)

	_, err = a.CreateAlertRule(c, client.AlertRuleRequest{Name: "rate", Kind: client.AlertFailureRate, Threshold: 150, For: "5m"})
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, 400, e.Status)
	require.Equal(t, "threshold", e.Field)

	l, err := a.ListAlertRules(c)
	require.NoError(t, err)
	require.Len(t, l, 1, "the refused rule was not stored")
	require.Equal(t, "backlog", l[0].Name)

	_, err = b.GetAlertRule(c, "backlog")
	require.True(t, client.IsNotFound(err), "another tenant's rule: %v", err)
	require.True(t, client.IsNotFound(b.DeleteAlertRule(c, "backlog")))
	l, err = b.ListAlertRules(c)
	require.NoError(t, err)
	require.Empty(t, l)

	require.NoError(t, a.DeleteAlertRule(c, "backlog"))
	_, err = a.GetAlertRule(c, "backlog")
	require.True(t, client.IsNotFound(err), "%v", err)
}

// The SDK's audit calls against a real gateway: the tenant's own actions
// are read page by page (a page of one record carries a cursor), with
// filters; AuditAll follows the cursors to the same records; a bad
// filter is a 400 naming it; another tenant reads none of them.
func TestAuditThroughTheSDK(t *testing.T) {
	t.Parallel()
	a, _ := shared.tenant(t)
	b, _ := shared.tenant(t)
	c := ctx(t)
	for _, q := range []string{"q1", "q2", "q3"} {
		_, err := a.PauseQueue(c, q)
		require.NoError(t, err)
	}

	q := client.AuditQuery{AuditFilter: wire.AuditFilter{Action: "queue.manage", Object: "queue"}, Limit: 1}
	var want []string
	eventually(t, 30*time.Second, func() bool {
		want = want[:0]
		for r, err := range a.AuditAll(c, q) {
			require.NoError(t, err)
			want = append(want, r.ObjectID)
		}
		return len(want) == 3
	}, "three pause records")
	require.Equal(t, []string{"q1", "q2", "q3"}, want, "oldest first")

	p, err := a.Audit(c, q)
	require.NoError(t, err)
	require.Len(t, p.Records, 1)
	require.NotEmpty(t, p.Cursor, "a page of one of three carries a cursor")
	require.Equal(t, "q1", p.Records[0].ObjectID)
	require.Equal(t, "ok", p.Records[0].Result)
	q.Cursor = p.Cursor
	p, err = a.Audit(c, q)
	require.NoError(t, err)
	require.Equal(t, "q2", p.Records[0].ObjectID)

	p, err = a.Audit(c, client.AuditQuery{AuditFilter: wire.AuditFilter{Object: "queue/q3"}})
	require.NoError(t, err)
	require.Len(t, p.Records, 1)
	require.Equal(t, "q3", p.Records[0].ObjectID)

	_, err = a.Audit(c, client.AuditQuery{Limit: wire.MaxAuditLimit + 1})
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, 400, e.Status)
	require.Equal(t, "limit", e.Field)

	p, err = b.Audit(c, client.AuditQuery{AuditFilter: wire.AuditFilter{Action: "queue.manage"}})
	require.NoError(t, err)
	require.Empty(t, p.Records, "another tenant reads none of them")
}
