package shard

import (
	"bufio"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// A progress stream keeps reading its own operation while the node
// serves other requests: the operation's id is not read from a request
// buffer that the next request reuses once the handler has returned (the
// stream then asked for "sulk_…" of a /api/v1/search, and said "not
// found" after the operation had completed).
func TestBulkProgressStreamOutlivesItsRequest(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.BulkSyncMax, c.BulkChunk = 10, 10 })
	enqueueMany(b, "src", 1500)
	r := b.bulk(map[string]any{"filter": map[string]any{"queue": "src", "state": []string{"pending"}}, "action": "move", "move_to_queue": "dst"})
	require.Equal(t, 202, r.Status, string(r.Raw))
	op := r.Body["bulk_operation_id"].(string)

	req, err := http.NewRequest("GET", b.url+"/api/v1/bulk/"+op+"/progress", nil)
	require.NoError(t, err)
	b.setHeaders(req)
	res, err := b.client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, 200, res.StatusCode)

	// Other requests, with other paths, while the stream runs.
	stop := make(chan struct{})
	var busy sync.WaitGroup
	for range 2 {
		busy.Add(1)
		go func() {
			defer busy.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				b.call("POST", "/api/v1/jobs/search", map[string]any{"queue": "dst", "limit": 1})
			}
		}()
	}
	defer func() { close(stop); busy.Wait() }()

	var events []string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			events = append(events, ev)
		}
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && events[len(events)-1] == "error" {
			t.Fatalf("the stream of %s said: %s", op, data)
		}
	}
	require.NotEmpty(t, events)
	require.Equal(t, "done", events[len(events)-1], "events: %v", events)
}
