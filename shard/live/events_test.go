package live

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
)

// entry runs the hub's observer over one entry that changes the jobs ids
// of ns, then commits it.
func entry(h *Events, idx uint64, ns string, ids ...string) {
	obs := h.Observer()
	tx := replica.NewTx(nil, time.Unix(1_800_000_000, int64(idx)), idx)
	for _, id := range ids {
		obs(tx, ns, &job.Job{ID: id, Queue: "q", State: job.Pending}, 0)
	}
	tx.RunAfterCommit()
}

func TestEventStreamsAreNudgedForTheirNamespaceOnly(t *testing.T) {
	t.Parallel()
	h := NewEvents()
	mine, err := h.Subscribe(testNS)
	require.NoError(t, err)
	defer h.Unsubscribe(mine)
	other := "t_01hx0000000000000000000001/default"
	theirs, err := h.Subscribe(other)
	require.NoError(t, err)
	defer h.Unsubscribe(theirs)

	entry(h, 1, testNS, "a", "b")
	require.Len(t, mine.Wake(), 1, "an entry that changed the namespace nudges its stream")
	require.Empty(t, theirs.Wake(), "and not another namespace's")
	<-mine.Wake()
	entry(h, 2, other, "c")
	require.Empty(t, mine.Wake())
	require.Len(t, theirs.Wake(), 1)
}

func TestSlowSubscriberNeverBlocksPublish(t *testing.T) {
	t.Parallel()
	h := NewEvents()
	sub, err := h.Subscribe(testNS)
	require.NoError(t, err)
	defer h.Unsubscribe(sub)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := uint64(1); i <= 5000; i++ { // never read by the subscriber
			entry(h, i, testNS, "j")
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("publishing waited on a subscriber that does not read")
	}
	require.Len(t, sub.wake, 1, "the subscriber holds one nudge, however many entries came")
}

func TestEventStreamsPerNamespaceAreBounded(t *testing.T) {
	t.Parallel()
	h := NewEvents()
	for i := 0; i < maxEventStreams; i++ {
		_, err := h.Subscribe(testNS)
		require.NoError(t, err)
	}
	_, err := h.Subscribe(testNS)
	require.Error(t, err)
}
