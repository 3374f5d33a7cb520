package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// A custom role limited to the emails.* queues, through the real
// gateway, control and shard: its key works on emails.send and is
// refused on billing.charge, cannot see a billing job by id or in a
// search, and a change of the role holds on the next request.
func TestCustomRoleLimitedToQueues(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	other, _ := shared.tenant(t)

	bill, err := owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: "billing.charge", Payload: map[string]int{"amount": 5}})
	require.NoError(t, err)

	mailer := client.Role{Name: "mailer", Description: "mail workers", Permissions: []client.Permission{{
		Actions: []string{"job.enqueue", "job.work", "job.read", "queue.*"}, Namespaces: []string{"default"}, Queues: []string{"emails.*"},
	}}}
	role, err := owner.CreateRole(ctx(t), mailer)
	require.NoError(t, err)
	require.False(t, role.Builtin)
	require.NotNil(t, role.CreatedAt)
	roles, err := owner.ListRoles(ctx(t))
	require.NoError(t, err)
	require.Len(t, roles, len(tenancy.TenantRoles)+1)
	require.Equal(t, "mailer", roles[len(roles)-1].Name)
	_, err = other.GetRole(ctx(t), "mailer")
	require.True(t, client.IsNotFound(err), "another tenant's role: %v", err)

	key, err := owner.CreateKey(ctx(t), client.CreateKeyRequest{Name: "mail", Role: "mailer", Namespaces: []string{"default"}})
	require.NoError(t, err)
	require.Equal(t, "mailer", key.Role)
	mc := client.New(shared.gateway, key.Token)
	t.Cleanup(mc.CloseIdleConnections)

	// Refused on billing.charge.
	_, err = mc.Enqueue(ctx(t), client.EnqueueRequest{Queue: "billing.charge", Payload: 1})
	require.True(t, client.IsForbidden(err), "enqueue: %v", err)
	_, err = mc.Fetch(ctx(t), client.FetchRequest{Queues: []string{"billing.charge"}, WorkerID: "w1", Timeout: 1})
	require.True(t, client.IsForbidden(err), "fetch: %v", err)
	_, err = mc.PutQueue(ctx(t), "billing.charge", client.QueueSpec{Paused: true})
	require.True(t, client.IsForbidden(err), "put queue: %v", err)
	_, err = mc.GetJob(ctx(t), bill.JobID)
	require.True(t, client.IsNotFound(err), "a job outside its queues is not found: %v", err)
	_, err = mc.CreateRole(ctx(t), client.Role{Name: "more", Permissions: mailer.Permissions})
	require.True(t, client.IsForbidden(err), "roles are key.manage's: %v", err)

	// Allowed on emails.send: enqueue, fetch, ack by id, get the job.
	sent, err := mc.Enqueue(ctx(t), client.EnqueueRequest{Queue: "emails.send", Payload: map[string]string{"to": "a@example.com"}})
	require.NoError(t, err)
	_, err = mc.PutQueue(ctx(t), "emails.send", client.QueueSpec{Description: "outbound"})
	require.NoError(t, err)
	job, err := mc.Fetch(ctx(t), client.FetchRequest{Queues: []string{"emails.send"}, WorkerID: "w1"})
	require.NoError(t, err)
	require.NotNil(t, job)
	require.Equal(t, sent.JobID, job.ID)
	require.NoError(t, mc.Ack(ctx(t), job.ID, map[string]bool{"sent": true}))
	detail, err := mc.GetJob(ctx(t), sent.JobID)
	require.NoError(t, err)
	require.Equal(t, "completed", string(detail.State))

	// A search shows its queues' jobs only.
	page, err := mc.Search(ctx(t), client.SearchRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, page.Jobs)
	for _, j := range page.Jobs {
		require.NotEqual(t, bill.JobID, j.ID)
		require.Equal(t, "emails.send", j.Queue)
	}
	all, err := owner.Search(ctx(t), client.SearchRequest{})
	require.NoError(t, err)
	require.Len(t, all.Jobs, 2, "the owner sees both")

	// A change of the role holds on the next request through this gateway.
	mailer.Permissions[0].Queues = []string{"billing.*"}
	_, err = owner.UpdateRole(ctx(t), mailer)
	require.NoError(t, err)
	_, err = mc.Enqueue(ctx(t), client.EnqueueRequest{Queue: "emails.send", Payload: 2})
	require.True(t, client.IsForbidden(err), "emails.* is no longer the role's: %v", err)
	_, err = mc.GetJob(ctx(t), bill.JobID)
	require.NoError(t, err, "billing.* is")

	// A role its live keys carry stays.
	require.Equal(t, client.CodeRoleInUse, client.ErrorCode(owner.DeleteRole(ctx(t), "mailer")))
	require.NoError(t, owner.DeleteKey(ctx(t), key.ID))
	require.NoError(t, owner.DeleteRole(ctx(t), "mailer"))
	_, err = owner.GetRole(ctx(t), "mailer")
	require.True(t, client.IsNotFound(err), "%v", err)
}
