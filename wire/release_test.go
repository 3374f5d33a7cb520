package wire

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A gone worker's leases are given back by their tokens, so a release
// that comes late cannot take back a later lease of the same attempt.
func TestFetchedLeasesCarryTheirTokens(t *testing.T) {
	t.Parallel()
	fetch := []byte(`{"queues":["q"],"worker_id":"w1"}`)
	rel, ok := FetchedLeases(true, fetch, []byte(`{"jobs":[{"job_id":"job_1","attempt":2,"lease_token":"t1"},{"job_id":"job_2","attempt":1}]}`))
	require.True(t, ok)
	require.Equal(t, &ReleaseRequest{WorkerID: "w1", Jobs: []ReleaseEntry{{JobID: "job_1", Attempt: 2, LeaseToken: "t1"}, {JobID: "job_2", Attempt: 1}}}, rel)
	rel, ok = FetchedLeases(false, fetch, []byte(`{"job_id":"job_3","attempt":1,"lease_token":"t3"}`))
	require.True(t, ok)
	require.Equal(t, []ReleaseEntry{{JobID: "job_3", Attempt: 1, LeaseToken: "t3"}}, rel.Jobs)
}
