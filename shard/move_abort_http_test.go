package shard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// moveInto copies testNS from src into dst as control does, up to the
// target's end: begin, snapshot, fence, last delta, end.
func moveInto(t *testing.T, src, dst *bundle, token string) {
	t.Helper()
	dst.mvOK("POST", "begin", testNS, token, nil)
	copyStream(t, src, dst, "snapshot", token)
	src.mvOK("POST", "fence", testNS, token, map[string]any{"ttl_ms": 30000})
	copyStream(t, src, dst, "delta", token)
	dst.mvOK("POST", "end", testNS, token, nil)
}

// A move that fails after the target's end (its answer lost, control's
// leader changed, a cancel raced it) is aborted on the target by control:
// while no client reached the namespace there, the abort removes it, even
// though the target's leader loops worked on it meanwhile (a job came due
// and was promoted), and a later move of the namespace into that shard
// begins. The end again with its token answers 200. Once a client's
// command changed the namespace there (placement switched), the abort
// answers 409 and removes nothing.
func TestMoveAbortAfterEnd(t *testing.T) {
	t.Parallel()
	src, dst := setup(t), setup(t)
	s, d := src.in(testNS), dst.in(testNS)
	s.fillAll()
	due := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	soon := s.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "soon", "scheduled_at": due}, 201).Body["job_id"].(string)
	const tok, tok2 = "mov_01JD00000000000000000000A1", "mov_01JD00000000000000000000A2"

	moveInto(t, src, dst, tok)
	dst.mvOK("POST", "end", testNS, tok, nil) // a retry after a lost answer
	r := dst.mv("POST", "end", testNS, "mov_other", nil)
	require.Equal(t, 409, r.Status, "another move's end: %s", r.Raw)
	eventually(t, 10*time.Second, func() bool {
		j, err := engine.ReadJob(dst.srv.repl.DB(), testNS, soon)
		return err == nil && j.State == job.Pending
	}, "the target's leader promotes the job that came due")

	dst.mvOK("POST", "abort", testNS, "mov_other", nil) // not its move: nothing to abort
	require.NotEmpty(t, dst.dump(testNS))
	dst.mvOK("POST", "abort", testNS, tok, nil)
	// The unplaced copy is gone; its event log's floor stays, so a stream
	// resuming from before is told it missed events.
	require.Empty(t, dst.dumpWithout(testNS, keys.EventFloor(testNS)), "the unplaced copy is gone")
	require.False(t, engine.HasData(dst.srv.repl.DB(), testNS))
	dst.mvOK("POST", "abort", testNS, tok, nil) // idempotent
	src.mvOK("POST", "unfence", testNS, tok, nil)
	s.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, 201) // the source goes on

	// The namespace moves into that shard again; a client reaches it there.
	moveInto(t, src, dst, tok2)
	id := d.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, 201).Body["job_id"].(string)
	held := dst.dump(testNS)
	r = dst.mv("POST", "abort", testNS, tok2, nil)
	require.Equal(t, 409, r.Status, "the abort of a move whose namespace is live here: %s", r.Raw)
	require.Equal(t, "conflict", errCode(r))
	require.Contains(t, string(r.Raw), "live on this shard")
	require.Equal(t, held, dst.dump(testNS), "nothing removed")
	d.ok("GET", "/api/v1/jobs/"+id, nil, 200)
	dst.mvOK("POST", "end", testNS, tok2, nil) // still done
}
