package e2e

import (
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Namespaces as objects, through the gateway to control and the shard:
// settings, deletion protection, and a delete that needs force while the
// namespace holds anything and leaves nothing behind.
func TestNamespaceObjects(t *testing.T) {
	t.Parallel()
	a, ctA := shared.tenant(t)
	b, _ := shared.tenant(t)
	g := shared.gateway + "/api/v1"

	ns, err := a.CreateNamespaceWith(ctx(t), client.CreateNamespaceRequest{Name: "billing", Description: "invoices",
		Retention: 7 * 24 * time.Hour, DeletionProtection: true})
	require.NoError(t, err)
	require.Equal(t, "invoices", ns.Description)
	require.Equal(t, "168h", ns.Retention)
	require.True(t, ns.DeletionProtection)
	got, err := a.GetNamespace(ctx(t), "billing")
	require.NoError(t, err)
	require.Equal(t, ns, got)

	// Another tenant's namespace is not found; a producer may not manage one.
	_, err = b.GetNamespace(ctx(t), "billing")
	require.True(t, client.IsNotFound(err), "%v", err)
	require.True(t, client.IsNotFound(b.DeleteNamespace(ctx(t), "billing", true)))
	on := false
	_, err = b.UpdateNamespace(ctx(t), "billing", client.UpdateNamespaceRequest{DeletionProtection: &on})
	require.True(t, client.IsNotFound(err), "%v", err)
	producer, err := a.CreateKey(ctx(t), client.CreateKeyRequest{Name: "p", Role: tenancy.RoleProducer, Namespaces: []string{"*"}})
	require.NoError(t, err)
	pc := client.New(shared.gateway, producer.Token)
	_, err = pc.GetNamespace(ctx(t), "billing")
	require.True(t, client.IsForbidden(err), "%v", err)
	require.True(t, client.IsForbidden(pc.DeleteNamespace(ctx(t), "billing", true)))
	r := call(t, "POST", g+"/keys/"+producer.ID+"/rotate", producer.Token, nil)
	require.Equal(t, 403, r.Status, string(r.Raw))
	dflt, err := a.CreateKey(ctx(t), client.CreateKeyRequest{Name: "d", Role: tenancy.RoleAdmin, Namespaces: []string{"default"}})
	require.NoError(t, err)
	_, err = client.New(shared.gateway, dflt.Token).GetNamespace(ctx(t), "billing")
	require.True(t, client.IsNotFound(err), "a key sees only its namespaces: %v", err)

	// Each bad field is a 400 naming it, and changes nothing.
	for body, field := range map[string]string{
		`{"description":"` + strings.Repeat("x", 1025) + `"}`: "description",
		`{"retention":"5s"}`:           "retention",
		`{"deletion_protection":"no"}`: "deletion_protection",
		`{"shard":"s2"}`:               "shard",
	} {
		r := call(t, "PATCH", g+"/namespaces/billing", ctA.OwnerKey, body)
		require.Equal(t, 400, r.Status, "%s: %s", body, r.Raw)
		require.Equal(t, field, r.field(), string(r.Raw))
	}
	r = call(t, "POST", g+"/namespaces", ctA.OwnerKey, map[string]any{"name": "x", "retention": "forever"})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "retention", r.field())
	got, err = a.GetNamespace(ctx(t), "billing")
	require.NoError(t, err)
	require.Equal(t, ns, got)

	inBilling := a.WithNamespace("billing")
	job, err := inBilling.Enqueue(ctx(t), client.EnqueueRequest{Queue: "invoices.send", Payload: "x"})
	require.NoError(t, err)

	err = a.DeleteNamespace(ctx(t), "billing", true)
	require.Equal(t, client.CodeDeletionProtected, client.ErrorCode(err), "%v", err)
	none := time.Duration(0)
	ns, err = a.UpdateNamespace(ctx(t), "billing", client.UpdateNamespaceRequest{DeletionProtection: &on, Retention: &none})
	require.NoError(t, err)
	require.False(t, ns.DeletionProtection)
	require.Equal(t, "", ns.Retention)
	require.Equal(t, "invoices", ns.Description, "untouched")

	err = a.DeleteNamespace(ctx(t), "billing", false)
	require.Equal(t, client.CodeNamespaceNotEmpty, client.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "1 jobs")
	_, err = inBilling.GetJob(ctx(t), job.JobID)
	require.NoError(t, err, "refused: nothing was deleted")

	require.NoError(t, a.DeleteNamespace(ctx(t), "billing", true))
	_, err = a.GetNamespace(ctx(t), "billing")
	require.True(t, client.IsNotFound(err), "%v", err)
	_, err = inBilling.Enqueue(ctx(t), client.EnqueueRequest{Queue: "invoices.send", Payload: "x"})
	require.True(t, client.IsNotFound(err), "%v", err)

	// Made again, it starts empty.
	_, err = a.CreateNamespace(ctx(t), "billing")
	require.NoError(t, err)
	_, err = inBilling.GetJob(ctx(t), job.JobID)
	require.True(t, client.IsNotFound(err), "%v", err)
	queues, err := inBilling.ListQueues(ctx(t))
	require.NoError(t, err)
	require.Empty(t, queues)
	require.NoError(t, a.DeleteNamespace(ctx(t), "billing", false), "an empty namespace needs no force")
}

// A rotated key keeps its id, name and role; its old secret works for the
// grace period and is refused after it, by the gateway that reads the
// rotation from control's revocation list.
func TestKeyRotationGracePeriod(t *testing.T) {
	t.Parallel()
	a, _ := shared.tenant(t)
	b, _ := shared.tenant(t)
	k, err := a.CreateKey(ctx(t), client.CreateKeyRequest{Name: "ci", Role: tenancy.RoleProducer, Description: "CI pipeline"})
	require.NoError(t, err)
	got, err := a.GetKey(ctx(t), k.ID)
	require.NoError(t, err)
	require.Equal(t, "CI pipeline", got.Description)
	_, err = b.GetKey(ctx(t), k.ID)
	require.True(t, client.IsNotFound(err), "%v", err)
	_, err = b.RotateKey(ctx(t), k.ID, 0)
	require.True(t, client.IsNotFound(err), "%v", err)
	_, err = a.RotateKey(ctx(t), k.ID, 8*24*time.Hour)
	require.Equal(t, "grace_period", fieldOf(err), "%v", err)

	old := client.New(shared.gateway, k.Token)
	enqueue := func(c *client.Client) error {
		_, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "rotate.me", Payload: 1})
		return err
	}
	require.NoError(t, enqueue(old))
	rot, err := a.RotateKey(ctx(t), k.ID, 2*time.Second)
	require.NoError(t, err)
	require.Equal(t, k.ID, rot.ID)
	require.Equal(t, k.Name, rot.Name)
	require.Equal(t, k.Role, rot.Role)
	require.NotEqual(t, k.Token, rot.Token)
	fresh := client.New(shared.gateway, rot.Token)
	require.NoError(t, enqueue(fresh))

	var refusedAt time.Time
	eventually(t, 15*time.Second, func() bool {
		err := enqueue(old)
		if err == nil {
			require.True(t, time.Now().Before(rot.PreviousKeyValidUntil.Add(2*time.Second)),
				"the old secret still works %s after its grace period", time.Since(rot.PreviousKeyValidUntil))
			return false
		}
		require.True(t, client.IsUnauthenticated(err), "%v", err)
		require.Contains(t, err.Error(), "rotated")
		refusedAt = time.Now()
		return true
	}, "the old secret is refused once its grace period ends")
	require.False(t, refusedAt.Before(rot.PreviousKeyValidUntil), "refused %s before its grace period ended",
		rot.PreviousKeyValidUntil.Sub(refusedAt))
	require.NoError(t, enqueue(fresh), "the new secret works on")
	got, err = a.GetKey(ctx(t), k.ID)
	require.NoError(t, err)
	require.NotNil(t, got.RotatedAt)
}

// last_used_at comes from the gateways' reports (every 30 s).
func TestKeyLastUsedAt(t *testing.T) {
	t.Parallel()
	a, _ := shared.tenant(t)
	k, err := a.CreateKey(ctx(t), client.CreateKeyRequest{Name: "used", Role: tenancy.RoleProducer})
	require.NoError(t, err)
	got, err := a.GetKey(ctx(t), k.ID)
	require.NoError(t, err)
	require.Nil(t, got.LastUsedAt, "never used")
	before := time.Now().Add(-time.Second)
	_, err = client.New(shared.gateway, k.Token).Enqueue(ctx(t), client.EnqueueRequest{Queue: "used", Payload: 1})
	require.NoError(t, err)
	eventually(t, 75*time.Second, func() bool {
		got, err = a.GetKey(ctx(t), k.ID)
		require.NoError(t, err)
		return got.LastUsedAt != nil
	}, "the gateway reports the key's use")
	require.True(t, got.LastUsedAt.After(before) && got.LastUsedAt.Before(time.Now()), "%v", got.LastUsedAt)
}

// The operator rotates the signing key on a server of its own: keys
// signed before keep working until the old signing key retires, new and
// rotated keys are signed by the new one and verify at the gateway at
// once, with no restart; after retirement only they work.
func TestSigningKeyRotation(t *testing.T) {
	t.Parallel()
	d, err := launch(filepath.Join(t.TempDir(), "dev"))
	require.NoError(t, err)
	t.Cleanup(d.stop)
	owner, ct := d.tenant(t)
	before, err := owner.CreateKey(ctx(t), client.CreateKeyRequest{Name: "before", Role: tenancy.RoleWorker})
	require.NoError(t, err)
	toRotate, err := owner.CreateKey(ctx(t), client.CreateKeyRequest{Name: "rotated", Role: tenancy.RoleProducer})
	require.NoError(t, err)
	op := func(method, path, key string, body any) reply {
		return callVia(t, d.ops, method, d.control+path, key, body)
	}

	r := op("GET", "/control/v1/signing-keys", d.operatorKey, nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	var list wire.SigningKeyList
	require.NoError(t, json.Unmarshal(r.Raw, &list))
	require.Len(t, list.SigningKeys, 1)
	oldKid := list.SigningKeys[0].Kid
	require.Equal(t, oldKid, kidOf(t, ct.OwnerKey))

	r = op("POST", "/control/v1/signing-keys/rotate", d.operatorKey, map[string]any{"retire_after": "1h"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	r = op("POST", "/control/v1/signing-keys/rotate", ct.OwnerKey, map[string]any{"retire_after": "3s"})
	require.Equal(t, 403, r.Status, "tenants' keys may not: %s", r.Raw)
	r = op("POST", "/control/v1/signing-keys/rotate", d.operatorKey, map[string]any{"retire_after": "3s"})
	require.Equal(t, 200, r.Status, string(r.Raw))
	var rot wire.RotatedSigningKeys
	require.NoError(t, json.Unmarshal(r.Raw, &rot))
	require.Len(t, rot.SigningKeys, 3)
	current := rot.SigningKeys[2]
	require.True(t, current.Current)
	retires := *rot.SigningKeys[0].RetiresAt
	require.WithinDuration(t, time.Now().Add(3*time.Second), retires, 2*time.Second, "a later rotation cuts the retirement short")

	// New keys come signed by the new key and work at once; old ones still do.
	after, err := owner.CreateKey(ctx(t), client.CreateKeyRequest{Name: "after", Role: tenancy.RoleProducer})
	require.NoError(t, err)
	require.Equal(t, current.Kid, kidOf(t, after.Token))
	enqueue := func(key string) error {
		_, err := client.New(d.gateway, key).Enqueue(ctx(t), client.EnqueueRequest{Queue: "sk", Payload: 1})
		return err
	}
	require.NoError(t, enqueue(after.Token), "a new signing key verifies at the gateway without a restart")
	require.NoError(t, enqueue(toRotate.Token))
	rotated, err := owner.RotateKey(ctx(t), toRotate.ID, time.Hour)
	require.NoError(t, err)
	require.Equal(t, current.Kid, kidOf(t, rotated.Token), "a rotated key is signed again with the current key")
	_, err = client.New(d.gateway, before.Token).ListQueues(ctx(t)) // a worker may read queues
	require.NoError(t, err)

	// Once the old signing key retires, only keys signed since work.
	eventually(t, 20*time.Second, func() bool { return enqueue(ct.OwnerKey) != nil }, "keys of a retired signing key are refused")
	require.False(t, time.Now().Before(retires), "refused only once it retired")
	err = enqueue(toRotate.Token)
	require.True(t, client.IsUnauthenticated(err), "even in its grace period, its old secret's signer is gone: %v", err)
	require.Contains(t, err.Error(), "retired")
	require.NoError(t, enqueue(rotated.Token))
	require.NoError(t, enqueue(after.Token))
	r = op("GET", "/control/v1/signing-keys", d.operatorKey, nil)
	require.Equal(t, 401, r.Status, "the old operator key went with its signer: %s", r.Raw)
	r = op("GET", "/control/v1/signing-keys", rot.OperatorKey, nil)
	require.Equal(t, 200, r.Status, "the operator key the rotation gave back works: %s", r.Raw)
	r = op("GET", "/control/v1/jwks", "", nil)
	require.Equal(t, 200, r.Status)
	var jwks tenancy.JWKS
	require.NoError(t, json.Unmarshal(r.Raw, &jwks))
	require.Len(t, jwks.Keys, 1, "both earlier keys retired: the second rotation cut the first one's hour short")
	require.Equal(t, current.Kid, jwks.Keys[0].Kid)
}

// kidOf reads the signing key id in an API key's header.
func kidOf(t *testing.T, token string) string {
	t.Helper()
	head, _, ok := strings.Cut(token, ".")
	require.True(t, ok)
	raw, err := base64.RawURLEncoding.DecodeString(head)
	require.NoError(t, err)
	var h struct{ Kid string }
	require.NoError(t, json.Unmarshal(raw, &h))
	return h.Kid
}

// fieldOf is the field an API error names.
func fieldOf(err error) string {
	if e, ok := client.AsError(err); ok {
		return e.Field
	}
	return ""
}
