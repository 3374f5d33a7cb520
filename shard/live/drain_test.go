package live

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/tenancy"
)

// A drain marks one worker of one namespace; a limited scope drains only
// a worker all of whose queues it allows, and an unseen or another
// namespace's worker is not there.
func TestWorkerDrainWithinAScope(t *testing.T) {
	t.Parallel()
	ws, _, clock := setupWorkers(t)
	ws.Seen(testNS, "both", "h", []string{"emails.send", "billing"})
	ws.Seen(testNS, "emails-only", "h", []string{"emails.send"})
	other := "t_01hx0000000000000000000001/default"
	ws.Seen(other, "emails-only", "h", []string{"emails.send"})

	emails := tenancy.ParseQueueScope("emails.*")
	require.False(t, ws.Drain(testNS, "both", emails), "it also serves billing")
	require.False(t, ws.Drain(testNS, "nobody", tenancy.AllQueues()))
	require.True(t, ws.Drain(testNS, "emails-only", emails))
	require.True(t, ws.Draining(testNS, "emails-only"))
	require.False(t, ws.Draining(testNS, "both"))
	require.False(t, ws.Draining(other, "emails-only"), "another namespace's worker of the same id")
	for _, w := range ws.List(testNS, tenancy.AllQueues()) {
		require.Equal(t, w.ID == "emails-only", w.Draining, w.ID)
	}

	clock.Advance(WorkerDropAfter)
	require.False(t, ws.Drain(other, "emails-only", tenancy.AllQueues()), "forgotten once unseen that long")
	require.False(t, ws.Drain(testNS, "both", tenancy.AllQueues()))
}
