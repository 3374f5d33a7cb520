// Package fuzz throws arbitrary request bodies at every decoding endpoint
// of a real shard node: whatever the body, the answer is a 2xx or a 4xx
// with the error shape, never a 5xx or a crash. `make fuzz` runs each
// target for a while; `make test` runs their seeds.
package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/leakcheck"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/shard"
	"github.com/jobbie/jobbie/wire"
)

const ns = "t_01hx0000000000000000000000/default"

var (
	once    sync.Once
	dir     string
	node    *shard.Node
	baseURL string
	client  *http.Client // a gateway's certificate
	// controlClient has control's certificate: backups and restores
	// are control's alone.
	controlClient *http.Client
)

// stops undo what the targets started besides the shared node.
var stops []func()

func TestMain(m *testing.M) {
	code := m.Run()
	for _, stop := range stops {
		stop()
	}
	if node != nil {
		_ = node.Stop()
		_ = os.RemoveAll(dir)
	}
	if client != nil {
		client.CloseIdleConnections()
		controlClient.CloseIdleConnections()
	}
	if code == 0 {
		if err := leakcheck.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// start runs one single-node shard for the whole process: fuzzing sends
// thousands of requests, and a node per input would measure start-up.
func start(t *testing.T) {
	once.Do(func() {
		var err error
		if dir, err = os.MkdirTemp("", "jobbie-fuzz-"); err != nil {
			t.Fatal(err)
		}
		ca := pkitest.New(t)
		client = ca.HTTPClient(t, pkitest.Gateway, nil)
		controlClient = ca.HTTPClient(t, pkitest.Control, nil)
		n, err := shard.New(shard.Config{DataDir: dir, HTTPAddr: "127.0.0.1:0", Bootstrap: true, TLS: ca.Creds(t, pkitest.Shard("s1", "n1")),
			Fast: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := n.WaitLeader(ctx); err != nil {
			t.Fatal(err)
		}
		node, baseURL = n, "https://"+n.Addr()
	})
	if node == nil {
		t.Fatal("the shard did not start")
	}
}

// check sends body and fails on a 5xx, an answer that is not JSON, or a
// 4xx without the error shape.
func check(t *testing.T, method, path string, body []byte) {
	checkAt(t, client, method, baseURL+path, body)
}

// post is check of a POST to url with c, and returns the answer.
func post(t *testing.T, c *http.Client, url string, body []byte) (int, []byte) {
	return checkAt(t, c, http.MethodPost, url, body)
}

func checkAt(t *testing.T, c *http.Client, method, url string, body []byte) (int, []byte) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Skip() // a path the fuzzer made unrepresentable
	}
	req.Header.Set(wire.ShardNamespaceHeader, ns)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 500 {
		t.Fatalf("%s %s %q: %d %s", method, url, body, resp.StatusCode, raw)
	}
	if resp.StatusCode == http.StatusNoContent {
		return resp.StatusCode, raw
	}
	if !json.Valid(raw) {
		t.Fatalf("%s %s %q: %d answered with invalid JSON %q", method, url, body, resp.StatusCode, raw)
	}
	if resp.StatusCode >= 400 {
		var e wire.ErrorBody
		if json.Unmarshal(raw, &e) != nil || e.Error == nil || e.Error.Code == "" {
			t.Fatalf("%s %s %q: %d without the error shape: %s", method, url, body, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, raw
}

// noWait skips a fetch body that asks to long-poll: the fuzzer would
// spend its time waiting.
func noWait(t *testing.T, body []byte) {
	var f struct {
		Timeout any `json:"timeout"`
	}
	if json.Unmarshal(body, &f) == nil {
		if n, ok := f.Timeout.(float64); !ok || n > 0.05 {
			t.Skip()
		}
	}
}

func seeds(f *testing.F, bodies ...string) {
	for _, b := range bodies {
		f.Add([]byte(b))
	}
}

func FuzzEnqueue(f *testing.F) {
	seeds(f, `{"queue":"q","payload":{"a":1}}`, `{"queue":"q","priority":"high","scheduled_at":"2030-01-01T00:00:00Z","tags":{"k":"v"}}`,
		`{"queue":"q","unique_key":"u","unique_period":60,"max_retries":2,"retry_backoff":"linear","retry_base_delay":"1s"}`,
		`{"queue":"q","chain":{"steps":[{},{"queue":"q2"}],"on_failure":{"queue":"q3"}}}`, `{"queue":"q","depends_on":["job_x"]}`,
		`{"queue":"q","expire_after":"10m","payload":"\xff"}`, `{"queue":`, `[]`, `{"queue":"q","prority":1}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		start(t)
		check(t, http.MethodPost, "/api/v1/enqueue", body)
	})
}

func FuzzEnqueueBatch(f *testing.F) {
	seeds(f, `{"jobs":[{"queue":"q"},{"queue":"q","payload":[1,2]}]}`, `{"jobs":[{"queue":"q"}],"batch":{"callback_queue":"done"}}`,
		`{"jobs":[]}`, `{"jobs":null}`, `{"jobs":[{"queue":"bad name"}]}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		start(t)
		check(t, http.MethodPost, "/api/v1/enqueue/batch", body)
	})
}

func FuzzFetch(f *testing.F) {
	seeds(f, `{"queues":["q"],"worker_id":"w","timeout":0}`, `{"queues":["q","r"],"timeout":0,"lease_duration":5}`,
		`{"queues":[],"timeout":0}`, `{"queues":["q"],"timeout":0,"lease_duration":0.5}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		start(t)
		noWait(t, body)
		check(t, http.MethodPost, "/api/v1/fetch", body)
		check(t, http.MethodPost, "/api/v1/fetch/batch", body)
	})
}

func FuzzAck(f *testing.F) {
	f.Add("job_01hx0000000000000000000000", []byte(`{"worker_id":"w","result":{"ok":true}}`))
	f.Add("x", []byte(`{"results":[]}`))
	f.Add("job_01hx0000000000000000000000", []byte(`{"worker_id":"w","error":"boom","backtrace":["a"]}`))
	f.Fuzz(func(t *testing.T, id string, body []byte) {
		start(t)
		check(t, http.MethodPost, "/api/v1/ack/"+id, body)
		check(t, http.MethodPost, "/api/v1/fail/"+id, body)
	})
}

func FuzzAckBatchAndHeartbeat(f *testing.F) {
	seeds(f, `{"worker_id":"w","acks":[{"job_id":"job_01hx0000000000000000000000","result":1}]}`,
		`{"worker_id":"w","jobs":[{"job_id":"job_01hx0000000000000000000000","progress":{"pct":5},"checkpoint":{"i":3}}]}`, `{}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		start(t)
		check(t, http.MethodPost, "/api/v1/ack/batch", body)
		check(t, http.MethodPost, "/api/v1/heartbeat", body)
	})
}

func FuzzSearch(f *testing.F) {
	seeds(f, `{"queue":"q","state":["pending"],"limit":10}`, `{"tags":{"k":"v"},"payload_jq":".a > 1","sort":"created_at","order":"desc"}`,
		`{"payload_contains":"x","created_after":"2020-01-01T00:00:00Z","cursor":"AQ"}`, `{"attempt_min":1,"attempt_max":0}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		start(t)
		check(t, http.MethodPost, "/api/v1/jobs/search", body)
	})
}

func FuzzBulk(f *testing.F) {
	seeds(f, `{"job_ids":["job_01hx0000000000000000000000"],"action":"cancel"}`,
		`{"filter":{"queue":"nothing-here","state":["dead"]},"action":"retry"}`,
		`{"filter":{"queue":"nothing-here"},"action":"change_priority","priority":"critical"}`, `{"action":"delete"}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		start(t)
		check(t, http.MethodPost, "/api/v1/jobs/bulk", body)
	})
}

func FuzzSchedule(f *testing.F) {
	seeds(f, `{"name":"nightly","cron":"0 2 * * *","timezone":"Europe/Paris","queue":"q","payload":{}}`,
		`{"name":"often","cron":"@every 30s","queue":"q"}`, `{"name":"x","cron":"@every 0s","queue":"q"}`,
		`{"name":"y","cron":"61 * * * *","queue":"q"}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		start(t)
		check(t, http.MethodPost, "/api/v1/schedules", body)
		check(t, http.MethodPut, "/api/v1/schedules/sch_01hx0000000000000000000000", body)
	})
}
