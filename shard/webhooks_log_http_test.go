package shard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// deliveryLog is an endpoint's delivery log as b answers it, each
// attempt as "<event id or type> #<attempt> <status> <ok>".
func deliveryLog(t *testing.T, b *bundle, hook string) []string {
	r := b.call("GET", "/api/v1/webhooks/"+hook+"/deliveries", nil)
	if r.Status != 200 {
		return nil
	}
	var out []string
	for _, d := range r.Body["deliveries"].([]any) {
		d := d.(map[string]any)
		name := d["event_id"].(string)
		if d["type"] == wire.WebhookTestType {
			name = "test"
		}
		out = append(out, fmt.Sprintf("%s #%v %v %v", name, d["attempt"], d["status"], d["ok"]))
	}
	return out
}

// The delivery log is replicated: every node answers it from its own
// state, and a leader change keeps it (the new leader's attempts come on
// top of the old leader's). A refused attempt, the deliveries and a test
// event, recorded by the first leader, read the same on the survivors.
func TestWebhookDeliveryLogSurvivesALeaderChange(t *testing.T) {
	t.Parallel()
	rcv := newHookReceiver(t, func(n int) int {
		if n == 1 {
			return 500
		}
		return 204
	})
	g := newShardGroup(t, 3, hookConfig(rcv))
	rcv.keys.Store(publicKeys(t, g.nodes[0], testNS))
	r := retry(t, g.nodes[1], "POST", "/api/v1/webhooks", map[string]any{"url": rcv.srv.URL, "events": []string{"job.enqueued"}})
	created(t, r)
	hook := r.Body["id"].(string)
	var jobs []string
	for range 3 {
		jobs = append(jobs, retry(t, g.nodes[1], "POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": 1}).Body["job_id"].(string))
	}
	rcv.waitJob(t, "dev.jobbie.job.enqueued", jobs[0]) // refused first: the test comes after
	test := retry(t, g.nodes[2], "POST", "/api/v1/webhooks/"+hook+"/test", nil)
	require.Equal(t, 200, test.Status, string(test.Raw))

	// Four attempts of three events (the first refused) and the test,
	// on every node (a loaded machine may see an election meanwhile, and
	// an event sent again: at least these).
	complete := func(log []string) bool {
		ok, refused, tested := map[string]bool{}, false, false
		for _, a := range log {
			id, rest, _ := strings.Cut(a, " ")
			switch {
			case a == "test #1 204 true":
				tested = true
			case strings.HasSuffix(rest, " 500 false"):
				refused = true
			case strings.HasSuffix(rest, " 204 true"):
				ok[id] = true
			}
		}
		return len(ok) == 3 && refused && tested
	}
	var before, seen []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		before = deliveryLog(t, g.nodes[0], hook)
		seen = []string{fmt.Sprint(before)}
		same := complete(before)
		for _, b := range g.nodes[1:] {
			other := fmt.Sprint(deliveryLog(t, b, hook))
			seen, same = append(seen, other), same && other == fmt.Sprint(before)
		}
		if same {
			break
		}
		require.True(t, time.Now().Before(deadline), "every node answers the same delivery log, with the three events delivered, the refusal and the test; they answer %q", seen)
	}

	lead := -1
	for i, b := range g.nodes {
		if b.srv.IsLeader() {
			lead = i
		}
	}
	require.GreaterOrEqual(t, lead, 0)
	require.NoError(t, g.nodes[lead].srv.Stop())
	var left []*bundle
	for i, b := range g.nodes {
		if i != lead {
			left = append(left, b)
		}
	}
	eventually(t, 20*time.Second, func() bool { return left[0].srv.IsLeader() || left[1].srv.IsLeader() }, "a new leader")
	for _, b := range left {
		require.Equal(t, before, deliveryLog(t, b, hook), "the log survives the leader that wrote it")
	}

	job := retry(t, left[0], "POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": 1}).Body["job_id"].(string)
	c := rcv.waitJob(t, "dev.jobbie.job.enqueued", job)
	eventually(t, 30*time.Second, func() bool {
		for _, b := range left {
			got := deliveryLog(t, b, hook)
			if len(got) == 0 || got[0] != c.ev.ID+" #1 204 true" {
				return false
			}
			require.Equal(t, before, got[len(got)-len(before):], "the old leader's attempts stay below the new one's")
		}
		return true
	}, "the new leader's delivery is logged on top")
}
