package console

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// tenant is a fresh tenant of one test, with its owner's key and client.
type tenant struct {
	name      string
	id        string
	namespace string // its default namespace
	ownerKey  string
	owner     *client.Client // the owner's client of the gateway
}

var tenantSeq atomic.Int64

// newTenant creates a tenant (as the operator, on control) for t alone.
func newTenant(t *testing.T) *tenant {
	t.Helper()
	op := client.New(srv.control, srv.operatorKey, client.WithHTTPClient(srv.ops))
	name := fmt.Sprintf("c%d-%d", time.Now().UnixNano()%1e9, tenantSeq.Add(1))
	ct, err := op.CreateTenant(ctx(t), name)
	require.NoError(t, err)
	return &tenant{name: name, id: ct.Tenant.ID, namespace: ct.Namespace, ownerKey: ct.OwnerKey,
		owner: client.New(srv.gateway, ct.OwnerKey)}
}

// key mints a key of role for namespaces (none: the tenant's default
// namespace; "*": all of them), made by the owner.
func (tn *tenant) key(t *testing.T, role tenancy.Role, namespaces ...string) *client.CreatedKey {
	t.Helper()
	if len(namespaces) == 0 {
		namespaces = []string{tn.namespace}
	}
	k, err := tn.owner.CreateKey(ctx(t), client.CreateKeyRequest{
		Name: fmt.Sprintf("%s-%d", role, tenantSeq.Add(1)), Role: role, Namespaces: namespaces})
	require.NoError(t, err)
	return k
}

// client is a client of the gateway with key.
func (tn *tenant) client(key string) *client.Client { return client.New(srv.gateway, key) }

// revoke revokes key id (as the owner).
func (tn *tenant) revoke(t *testing.T, id string) {
	t.Helper()
	require.NoError(t, tn.owner.DeleteKey(ctx(t), id))
}

// enqueue adds a job to queue in the owner's default namespace and
// returns its id.
func (tn *tenant) enqueue(t *testing.T, queue string, payload any) string {
	t.Helper()
	res, err := tn.owner.Enqueue(ctx(t), client.EnqueueRequest{Queue: queue, Payload: payload})
	require.NoError(t, err)
	return res.JobID
}

// seed enqueues n jobs to queue ({"n": i} each) and returns their ids.
func (tn *tenant) seed(t *testing.T, queue string, n int) []string {
	t.Helper()
	reqs := make([]client.EnqueueRequest, n)
	for i := range reqs {
		reqs[i] = client.EnqueueRequest{Queue: queue, Payload: map[string]int{"n": i}}
	}
	res, err := tn.owner.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: reqs})
	require.NoError(t, err)
	require.Len(t, res.JobIDs, n)
	return res.JobIDs
}

// spread enqueues one job ({"n": i}) to each of n queues, named by format
// with i, in one batch.
func (tn *tenant) spread(t *testing.T, format string, n int) {
	t.Helper()
	reqs := make([]client.EnqueueRequest, n)
	for i := range reqs {
		reqs[i] = client.EnqueueRequest{Queue: fmt.Sprintf(format, i), Payload: map[string]int{"n": i}}
	}
	_, err := tn.owner.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: reqs})
	require.NoError(t, err)
}

// ctx is a context for one call of the test, bounded at 30 s.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}
