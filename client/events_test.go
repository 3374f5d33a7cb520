package client

import (
	"bufio"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadEventsParsesFramesAndGaps(t *testing.T) {
	t.Parallel()
	stream := ": jobbie events\n\n" +
		": events were missed: the stream resumes at the oldest event this node still keeps\n\n" +
		"id: 1048576\nevent: enqueued\ndata: {\"type\":\"enqueued\",\"job_id\":\"job_1\",\"queue\":\"q\",\"state\":\"pending\",\"at\":\"2026-01-01T00:00:00Z\",\"attempt\":0}\n\n" +
		": heartbeat\n\n" +
		"id: 2097152\r\nevent: started\r\ndata: {\"type\":\"started\",\"job_id\":\"job_1\",\"queue\":\"q\",\"state\":\"active\",\"from\":\"pending\",\"at\":\"2026-01-01T00:00:01Z\",\"attempt\":1,\"worker_id\":\"w1\"}\r\n\r\n"
	out := make(chan Event, 4)
	readEvents(context.Background(), bufio.NewReader(strings.NewReader(stream)), out)
	close(out)
	var got []Event
	for ev := range out {
		got = append(got, ev)
	}
	require.Len(t, got, 2)
	require.Equal(t, "1048576", got[0].ID)
	require.Equal(t, "enqueued", got[0].Type)
	require.True(t, got[0].Missed, "the gap comment marks the next event")
	require.Equal(t, "started", got[1].Type)
	require.Equal(t, "pending", got[1].From)
	require.Equal(t, "w1", got[1].WorkerID)
	require.Equal(t, 1, got[1].Attempt)
	require.False(t, got[1].Missed)
}
