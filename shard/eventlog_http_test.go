package shard

import (
	"encoding/binary"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// enqueueEach enqueues n jobs through b (retrying an election's 503s) and
// returns their ids.
func enqueueEach(t *testing.T, b *bundle, queue string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		r := retry(t, b, "POST", "/api/v1/enqueue", map[string]any{"queue": queue, "payload": i})
		created(t, r)
		ids[i] = r.Body["job_id"].(string)
	}
	return ids
}

// readEnqueued reads s until it has seen the enqueued events of want,
// failing on a missed-events note, a repeated event or an id out of order;
// it returns the last frame read.
func readEnqueued(t *testing.T, s *sseStream, after uint64, want map[string]bool) sseFrame {
	t.Helper()
	var last sseFrame
	seen := map[string]bool{}
	for len(want) > 0 {
		f := s.next()
		require.NotContains(t, f.Comment, "missed", "nothing within retention is missed")
		if f.Event == "" {
			continue
		}
		seq := seqOf(t, f)
		require.Greater(t, seq, after, "in order, none repeated")
		after, last = seq, f
		require.False(t, seen[f.ID])
		seen[f.ID] = true
		if f.Event == "enqueued" {
			id := f.Data["job_id"].(string)
			require.True(t, want[id], "an event of a job this reader had not yet seen: %s", id)
			delete(want, id)
		}
	}
	return last
}

// A client streaming from a follower, cut off when the leader is killed,
// resumes with its last id on another node under the new leader and gets
// every event after it, in order, none missing, none twice.
func TestEventLogSurvivesALeaderKill(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 3)
	leader, rest := g.leaderAndRest()
	first := enqueueEach(t, rest[0], "ev", 10)
	s := rest[0].stream(wire.LastEventIDHeader, "s1:0") // from the log's start: told once, then everything
	require.Equal(t, "jobbie events", s.next().Comment)
	require.Contains(t, s.next().Comment, "missed", "an id from before the log started")
	want := map[string]bool{}
	for _, id := range first {
		want[id] = true
	}
	last := readEnqueued(t, s, 0, want)
	s.close()

	require.NoError(t, leader.srv.Stop())
	second := enqueueEach(t, rest[1], "ev", 10)
	eventually(t, 20*time.Second, func() bool { return rest[0].srv.IsLeader() || rest[1].srv.IsLeader() }, "a new leader")

	r := rest[1].stream(wire.LastEventIDHeader, last.ID)
	require.Equal(t, "jobbie events", r.next().Comment)
	want = map[string]bool{}
	for _, id := range second {
		want[id] = true
	}
	readEnqueued(t, r, seqOf(t, last), want)
}

// The leader trims each namespace's log by count (and age: the engine's
// tests): a resume from a trimmed event is told it missed events, then
// goes on from the oldest kept.
func TestEventLogRetention(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) {
		c.EventTrimInterval = 10 * time.Millisecond
		c.EventRetention = engine.EventRetention{MaxAge: time.Hour, MaxCount: 3}
	})
	ids := enqueueEach(t, b, "ev", 6)
	s := b.stream(wire.LastEventIDHeader, "s1:0")
	s.next()
	s.next() // told: from before the log started
	var frames []sseFrame
	eventually(t, 20*time.Second, func() bool {
		// Read afresh until the trim has left the 3 newest.
		r := b.stream(wire.LastEventIDHeader, "s1:0")
		defer r.close()
		r.next()
		r.next()
		frames = frames[:0]
		for range 3 {
			frames = append(frames, r.nextEvent())
		}
		return frames[0].Data["job_id"] == ids[3]
	}, "the leader trims the log to its 3 newest events")
	require.Equal(t, ids[5], frames[2].Data["job_id"])
	s.close()

	// A resume from a trimmed event is told, then continues at the oldest
	// kept. Its id is just below the trim's floor (the last event it
	// dropped), which is past the log's start: the first three went.
	v, closer, err := b.srv.repl.DB().Get(keys.EventFloor(testNS))
	require.NoError(t, err)
	floor := binary.BigEndian.Uint64(v)
	require.NoError(t, closer.Close())
	gone := floor - 1
	old := b.stream(wire.LastEventIDHeader, "s1:"+strconv.FormatUint(gone, 10))
	old.next()
	require.Contains(t, old.next().Comment, "events were missed")
	require.Equal(t, frames[0].ID, old.nextEvent().ID)
}
