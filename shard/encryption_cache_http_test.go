package shard

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/envelope"
	"github.com/jobbie/jobbie/wire"
)

// The service keeps what each namespace's encryption record says in
// memory; a change of the record, a delete of the namespace that takes it
// away and a restore that brings one back are seen by the very next
// request. Each enqueue below
// follows a request that filled the cache with what the record said
// before.
func TestEncryptionChangeIsSeenByTheNextRequest(t *testing.T) {
	t.Parallel()
	b := setup(t, withMasterKey(envelope.NewKey()))
	ns := b.in(testNS)
	sealed := func(id string) bool {
		j, err := engine.ReadJob(b.srv.repl.DB(), testNS, id)
		require.NoError(t, err)
		return envelope.IsSealed(j.Payload)
	}
	enqueue := func(payload string) string {
		return ns.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": payload}, 201).Body["job_id"].(string)
	}

	require.False(t, sealed(enqueue("plain")), "no record yet")
	k := envelope.NewKey()
	ns.ok("PUT", "/api/v1/encryption", map[string]any{"enabled": true, "tenant_key": base64.StdEncoding.EncodeToString(k[:])}, 200)
	on := enqueue("sealed")
	require.True(t, sealed(on), "the enqueue after enabling seals")
	require.Equal(t, "sealed", ns.ok("GET", "/api/v1/jobs/"+on, nil, 200).Body["payload"])

	ns.ok("PUT", "/api/v1/encryption", map[string]any{"revoke_tenant_key": true}, 200)
	e := ns.call("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": "lost"})
	require.Equal(t, 409, e.Status, "the enqueue after the revoke has no key: %s", e.Raw)
	require.Equal(t, string(wire.CodeEncryptionKeyRevoked), errCode(e))
	r := ns.call("GET", "/api/v1/jobs/"+on, nil)
	require.Equal(t, 409, r.Status, "nor does a read open with the revoked key: %s", r.Raw)

	ns.ok("DELETE", "/api/v1/namespace", nil, 204)
	fresh := enqueue("plain again")
	require.False(t, sealed(fresh), "the namespace deleted has no record: nothing seals")
	require.Equal(t, "plain again", ns.ok("GET", "/api/v1/jobs/"+fresh, nil, 200).Body["payload"])

	// A restore over the namespace brings the backup's record back.
	other := b.in(otherNS)
	other.ok("PUT", "/api/v1/encryption", map[string]any{"enabled": true}, 200)
	backup := b.backupOf(otherNS)
	require.Equal(t, 200, b.restoreInto(testNS, wire.RestoreReplace, backup).Status)
	require.True(t, sealed(enqueue("restored")), "the restored record seals")
}
