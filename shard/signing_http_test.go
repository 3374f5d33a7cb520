package shard

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// A namespace's first signing key is made on first read and kept; a
// rotation adds one and leaves the old signing for the overlap; another
// namespace has keys of its own; a key limited to some queues may read
// the public keys but not rotate them.
func TestSigningKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.call("GET", "/api/v1/signing-keys", nil)
	require.Equal(t, 200, first.Status, string(first.Raw))
	keys := first.Body["keys"].([]any)
	require.Len(t, keys, 1)
	k := keys[0].(map[string]any)
	require.Equal(t, "v1a", k["scheme"])
	require.True(t, strings.HasPrefix(k["public_key"].(string), "whpk_"), k)
	require.Nil(t, k["not_after"])
	require.NotContains(t, string(first.Raw), "whsk_", "never a secret")
	require.Equal(t, first.Raw, b.call("GET", "/api/v1/signing-keys", nil).Raw, "made once")

	require.Equal(t, 403, b.withScope("a*").call("POST", "/api/v1/signing-keys/rotate", nil).Status)
	rot := b.call("POST", "/api/v1/signing-keys/rotate", nil)
	require.Equal(t, 200, rot.Status, string(rot.Raw))
	keys = rot.Body["keys"].([]any)
	require.Len(t, keys, 2)
	old, cur := keys[0].(map[string]any), keys[1].(map[string]any)
	require.Equal(t, k["public_key"], old["public_key"])
	require.NotNil(t, old["not_after"], "the old key signs until the overlap ends")
	require.Nil(t, cur["not_after"])
	require.NotEqual(t, old["public_key"], cur["public_key"])

	other := b.call("GET", "/api/v1/signing-keys", nil, wire.ShardNamespaceHeader, "t_01hx0000000000000000000001/default")
	require.Equal(t, 200, other.Status, string(other.Raw))
	require.NotContains(t, string(other.Raw), k["public_key"].(string))
	require.NotContains(t, string(other.Raw), cur["public_key"].(string))
}
