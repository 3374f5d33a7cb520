package replica

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/stretchr/testify/require"
)

// AppliedIndexOf reads the applied index a state holds: 0 for an empty
// one, the node's applied index on its state, and on a Pebble snapshot the
// index of the state it froze, however far the node went on since.
func TestAppliedIndexOf(t *testing.T) {
	t.Parallel()
	empty, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	defer empty.Close()
	i, err := AppliedIndexOf(empty)
	require.NoError(t, err)
	require.Zero(t, i)

	n := open(t, t.TempDir(), &counter{})
	defer n.Close()
	_, err = n.Propose(context.Background(), Command(cmdAdd, []byte{7}))
	require.NoError(t, err)
	at := n.AppliedIndex()
	require.NotZero(t, at)
	i, err = AppliedIndexOf(n.DB())
	require.NoError(t, err)
	require.Equal(t, at, i)

	snap := n.DB().NewSnapshot()
	defer snap.Close()
	_, err = n.Propose(context.Background(), Command(cmdAdd, []byte{5}))
	require.NoError(t, err)
	require.Greater(t, n.AppliedIndex(), at)
	i, err = AppliedIndexOf(snap)
	require.NoError(t, err)
	require.Equal(t, at, i, "the snapshot's own index")
	i, err = AppliedIndexOf(n.DB())
	require.NoError(t, err)
	require.Equal(t, n.AppliedIndex(), i)
}
