package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A gateway that stops while a worker's fetch waits answers the worker at
// once with no job (a pod's grace is shorter than a long-poll), and gives
// back what the shard leased for that fetch when its answer comes.
func TestStopAnswersWaitingFetchesAndGivesBackWhatTheyLeased(t *testing.T) {
	for _, batch := range []bool{false, true} {
		path := "/api/v1/fetch"
		if batch {
			path = "/api/v1/fetch/batch"
		}
		t.Run(path, func(t *testing.T) {
			b := setup(t)
			parked, answer := make(chan struct{}), make(chan struct{})
			released := make(chan wire.ReleaseRequest, 1)
			b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case strings.HasPrefix(r.URL.Path, "/api/v1/fetch"):
					close(parked)
					<-answer // the shard found a job only after the worker was answered
					j := wire.FetchedJob{JobID: "job_01hx0000000000000000000001", Queue: "q", Attempt: 1}
					if batch {
						writeJSON(w, 200, wire.FetchBatchResponse{Jobs: []wire.FetchedJob{j}})
					} else {
						writeJSON(w, 200, j)
					}
				case r.URL.Path == "/api/v1/release":
					last := b.shard.last(t)
					var rel wire.ReleaseRequest
					_ = json.Unmarshal([]byte(last.Body), &rel)
					released <- rel
					writeJSON(w, 200, map[string]any{"released": 1})
				default:
					w.WriteHeader(404)
				}
			})
			key := b.key(t, tenancy.RoleWorker, "default")
			got := make(chan reply, 1)
			go func() {
				got <- b.do(t, "POST", path, key, map[string]any{"queues": []string{"q"}, "worker_id": "w1", "timeout": 30})
			}()
			<-parked
			stopped := make(chan error, 1)
			began := time.Now()
			go func() { stopped <- b.gw.Stop() }()
			var r reply
			select {
			case r = <-got:
			case <-time.After(10 * time.Second):
				close(answer)
				t.Fatal("the waiting fetch was not answered within 10 s of Stop")
			}
			t.Logf("the worker was answered %s after Stop began", time.Since(began).Round(time.Millisecond))
			if batch {
				require.Equal(t, 200, r.status, "body: %s", r.body)
				require.JSONEq(t, `{"jobs":[]}`, string(bytes.TrimSpace(r.body)))
			} else {
				require.Equal(t, 204, r.status, "body: %s", r.body)
			}
			close(answer)
			select {
			case rel := <-released:
				require.Equal(t, "w1", rel.WorkerID)
				require.Len(t, rel.Jobs, 1)
				require.Equal(t, "job_01hx0000000000000000000001", rel.Jobs[0].JobID)
			case <-time.After(10 * time.Second):
				t.Fatal("the job leased for the answered worker was not given back")
			}
			require.NoError(t, <-stopped)
		})
	}
}
