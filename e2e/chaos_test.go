package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Chaos against `jobbie dev --shards N --replicas R`. The short runs are
// part of `make test`; JOBBIE_CHAOS_LONG=1 (`make chaos`) kills a leader
// every 10 s for 60 s.

func TestClusterTwoShardsBehindOneGateway(t *testing.T) {
	c := launchCluster(t, 2, 3)
	key := c.ownerKey
	names := []string{"na", "nb", "nc", "nd"}
	for _, n := range names {
		r := call(t, "POST", c.gateway+"/api/v1/namespaces", key, map[string]string{"name": n})
		require.Equal(t, 201, r.Status, string(r.Raw))
	}
	tid := tenantOf(t, key)
	r := callVia(t, c.ops, "GET", c.control+"/control/v1/tenants/"+tid+"/namespaces", c.operatorKey, nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	used := map[string]bool{}
	for _, ns := range r.Body["namespaces"].([]any) {
		used[ns.(map[string]any)["shard_id"].(string)] = true
	}
	require.Len(t, used, 2, "namespaces are placed on both shard clusters: %s", r.Raw)

	jobs := map[string][]string{}
	for _, n := range names {
		for i := range 10 {
			e := call(t, "POST", c.gateway+"/api/v1/enqueue", key, map[string]any{"queue": "mix", "payload": map[string]any{"ns": n, "i": i}},
				"X-Jobbie-Namespace", n)
			require.Equal(t, 201, e.Status, string(e.Raw))
			jobs[n] = append(jobs[n], e.Body["job_id"].(string))
		}
	}
	for _, n := range names {
		for range jobs[n] {
			f := call(t, "POST", c.gateway+"/api/v1/fetch", key, map[string]any{"queues": []string{"mix"}, "worker_id": "w", "timeout": 5},
				"X-Jobbie-Namespace", n)
			require.Equal(t, 200, f.Status, string(f.Raw))
			require.Equal(t, n, f.Body["payload"].(map[string]any)["ns"], "a namespace only hands out its own jobs")
			a := call(t, "POST", c.gateway+"/api/v1/ack/"+f.Body["job_id"].(string), key, map[string]any{"worker_id": "w"}, "X-Jobbie-Namespace", n)
			require.Equal(t, 200, a.Status, string(a.Raw))
		}
		s := call(t, "POST", c.gateway+"/api/v1/jobs/search", key, map[string]any{"queue": "mix", "state": []string{"completed"}}, "X-Jobbie-Namespace", n)
		require.Equal(t, 200, s.Status)
		require.Equal(t, 10.0, s.Body["total"], "namespace %s", n)
		other := names[(slices.Index(names, n)+1)%len(names)]
		g := call(t, "GET", c.gateway+"/api/v1/jobs/"+jobs[other][0], key, nil, "X-Jobbie-Namespace", n)
		require.Equal(t, 404, g.Status, "another namespace's job is not found")
	}
}

// tenantOf reads the tenant id from an API key's claims.
func tenantOf(t *testing.T, key string) string {
	parts := strings.Split(key, ".")
	require.Len(t, parts, 3)
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	var claims struct {
		TID string `json:"tid"`
	}
	require.NoError(t, json.Unmarshal(raw, &claims))
	return claims.TID
}

// delivery is one fetch of a job by a worker, as the worker saw it.
type delivery struct {
	job, worker string
	sent, got   time.Time
	ackOK       bool
	ackAt       time.Time
}

func TestClusterLeaderKillUnderLoad(t *testing.T) {
	kills, every, lease := 3, 4*time.Second, 3*time.Second
	if os.Getenv("JOBBIE_CHAOS_LONG") != "" {
		kills, every = 6, 10*time.Second
	}
	c := launchCluster(t, 1, 3)
	key := c.ownerKey
	gw := c.gateway
	if _, ok := c.leader("s1", 0, 30*time.Second); !ok {
		t.Fatal("no leader")
	}

	var (
		mu       sync.Mutex
		accepted = map[int]string{} // seq → job id of an enqueue answered 201
		dups     int                // enqueues whose unique key was already taken by a job we had not seen
		deliv    []*delivery
		stop     atomic.Bool
		wg       sync.WaitGroup
		errs     atomic.Int64
	)
	var seq atomic.Int64
	for p := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				n := int(seq.Add(1))
				for !stop.Load() { // retry one job until the service answers: unique_key makes it safe
					r, err := post(gw+"/api/v1/enqueue", key, map[string]any{"queue": "chaos", "payload": map[string]any{"seq": n, "p": p},
						"unique_key": fmt.Sprint("seq-", n)})
					if err == nil && (r.status == 201 || r.status == 200) {
						mu.Lock()
						if r.body["unique_existing"] == true && accepted[n] == "" {
							dups++
						}
						accepted[n] = r.body["job_id"].(string)
						mu.Unlock()
						break
					}
					errs.Add(1)
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	work := func(w int) {
		defer wg.Done()
		id := fmt.Sprint("w", w)
		for !stop.Load() {
			d := &delivery{worker: id, sent: time.Now()}
			r, err := post(gw+"/api/v1/fetch", key, map[string]any{"queues": []string{"chaos"}, "worker_id": id, "timeout": 1,
				"lease_duration": lease.Seconds()})
			if err != nil || r.status != 200 {
				if err != nil || r.status != 204 {
					errs.Add(1)
					time.Sleep(50 * time.Millisecond)
				}
				continue
			}
			d.got, d.job = time.Now(), r.body["job_id"].(string)
			a, err := post(gw+"/api/v1/ack/"+d.job, key, map[string]any{"worker_id": id})
			d.ackOK, d.ackAt = err == nil && a.status == 200, time.Now()
			mu.Lock()
			deliv = append(deliv, d)
			mu.Unlock()
		}
	}
	for w := range 4 {
		wg.Add(1)
		go work(w)
	}

	var failovers []time.Duration
	for range kills {
		time.Sleep(every)
		l, ok := c.leader("s1", 0, 20*time.Second)
		require.True(t, ok, "a leader before the kill")
		killed := time.Now()
		require.NoError(t, syscall.Kill(l.PID, syscall.SIGKILL))
		// Any leader but the killed process: the node, restarted, may win
		// again if its log was the longest.
		n, ok := c.leader("s1", l.PID, 30*time.Second)
		require.True(t, ok, "a new leader after killing %s", l.NodeID)
		failovers = append(failovers, time.Since(killed))
		t.Logf("killed leader %s (pid %d); %s leads after %s", l.NodeID, l.PID, n.NodeID, time.Since(killed).Round(time.Millisecond))
	}
	time.Sleep(every / 2)
	stop.Store(true)
	wg.Wait()

	// Drain: every accepted job must complete (a lease lost in a kill runs out and is retried).
	stop.Store(false)
	for w := 10; w < 14; w++ {
		wg.Add(1)
		go work(w)
	}
	left := func() float64 {
		r, err := post(gw+"/api/v1/jobs/search", key, map[string]any{"queue": "chaos", "state": []string{"pending", "active", "retrying", "scheduled"}, "limit": 1})
		if err != nil || r.status != 200 {
			return -1
		}
		return r.body["total"].(float64)
	}
	eventually(t, 60*time.Second, func() bool { return left() == 0 }, "every accepted job completes")
	stop.Store(true)
	wg.Wait()

	lost := 0
	for _, id := range accepted {
		r, err := post(gw+"/api/v1/jobs/search", key, map[string]any{"job_id_prefix": id, "state": []string{"completed"}})
		if err != nil || r.status != 200 || r.body["total"].(float64) != 1 {
			lost++
			t.Errorf("job %s was accepted but is not completed", id)
		}
	}

	// No two workers held a job's lease at once: a second delivery of a job
	// came only after the first one's lease had surely run out, and never
	// after an ack that was answered 200.
	byJob := map[string][]*delivery{}
	for _, d := range deliv {
		byJob[d.job] = append(byJob[d.job], d)
	}
	redelivered := 0
	for id, ds := range byJob {
		slices.SortFunc(ds, func(a, b *delivery) int { return a.got.Compare(b.got) })
		for i := 1; i < len(ds); i++ {
			prev, cur := ds[i-1], ds[i]
			redelivered++
			if cur.got.Before(prev.sent.Add(lease)) {
				t.Errorf("job %s: %s got it at %s while %s's lease from %s ran", id, cur.worker, cur.got.Format(time.StampMilli), prev.worker, prev.sent.Format(time.StampMilli))
			}
			if prev.ackOK && cur.got.After(prev.ackAt) {
				t.Errorf("job %s delivered again after an ack answered 200", id)
			}
		}
	}
	slices.Sort(failovers)
	t.Logf("chaos: jobs=%d kills=%d lost=%d redelivered=%d duplicate_enqueues=%d client_retries=%d failover p50=%s max=%s",
		len(accepted), kills, lost, redelivered, dups, errs.Load(),
		failovers[len(failovers)/2].Round(time.Millisecond), failovers[len(failovers)-1].Round(time.Millisecond))
	require.Zero(t, lost)
	require.Greater(t, len(accepted), 100, "the load ran")
}

type postReply struct {
	status int
	body   map[string]any
}

// post sends one JSON call and tolerates failure: under chaos an error is
// an outcome to count, not a test failure.
func post(url, key string, body any) (postReply, error) {
	req, err := newRequest("POST", url, key, body)
	if err != nil {
		return postReply{}, err
	}
	res, err := chaosClient.Do(req)
	if err != nil {
		return postReply{}, err
	}
	defer res.Body.Close()
	out := postReply{status: res.StatusCode}
	_ = json.NewDecoder(res.Body).Decode(&out.body)
	return out, nil
}
