package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/job"
)

func TestJobCache(t *testing.T) {
	t.Parallel()
	c := newJobCache(2)
	j := &job.Job{ID: "job_a", Queue: "q", State: job.Pending, Timeline: []job.Event{{At: 1}}}
	c.put("ns1", j)
	j.Timeline[0].At = 99 // the caller keeps its copy
	_, ok := c.take("ns2", "job_a")
	require.False(t, ok, "another namespace's job is a miss")
	got, ok := c.take("ns1", "job_a")
	require.True(t, ok)
	require.Equal(t, int64(1), got.Timeline[0].At, "the cache holds a copy")
	_, ok = c.take("ns1", "job_a")
	require.False(t, ok, "a read takes the record out")

	mine := &job.Job{ID: "job_new", State: job.Pending}
	c.own("ns1", mine)
	got, ok = c.take("ns1", "job_new")
	require.True(t, ok)
	require.Same(t, mine, got, "a new job's record is kept itself, not copied")

	c.put("ns1", &job.Job{ID: "job_done", State: job.Completed})
	_, ok = c.take("ns1", "job_done")
	require.False(t, ok, "finished jobs are not kept")
	c.put("ns1", &job.Job{ID: "job_b", State: job.Active})
	c.put("ns1", &job.Job{ID: "job_b", State: job.Completed})
	_, ok = c.take("ns1", "job_b")
	require.False(t, ok, "finishing drops the earlier record")

	for _, id := range []string{"job_1", "job_2", "job_3", "job_4", "job_5"} {
		c.put("ns1", &job.Job{ID: id, State: job.Pending})
	}
	for _, id := range []string{"job_1", "job_2"} {
		_, ok = c.take("ns1", id)
		require.False(t, ok, "two generations of two: the oldest generation is gone")
	}
	for _, id := range []string{"job_3", "job_4", "job_5"} {
		_, ok = c.take("ns1", id)
		require.True(t, ok, id)
	}
	c.put("ns1", &job.Job{ID: "job_5", State: job.Pending})
	c.reset()
	_, ok = c.take("ns1", "job_5")
	require.False(t, ok)
}
