package fuzz

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/wire"
)

// The restore apply path: a stream that passes every checksum (control
// wrote it, or someone with the store's credentials did) but whose
// records hold anything at all. Restored into a fresh namespace, then
// read every way a tenant can, the answers are 2xx or 4xx with the error
// shape, never a 5xx or a crash of the node.

var (
	restoreOnce    sync.Once
	restoreHeader  backup.Header
	restoreRecords []backup.Record // a real backup of a namespace with a job, a queue and a schedule
	restored       atomic.Int64    // names each input's namespace
)

// realBackup fills the namespace seeds with a little of everything and
// takes its backup, as control would.
func realBackup(t *testing.T) {
	restoreOnce.Do(func() {
		start(t)
		for _, body := range []string{
			`{"queue":"q","payload":{"a":1},"tags":{"k":"v"}}`,
			`{"queue":"q","unique_key":"u","unique_period":60,"scheduled_at":"2030-01-01T00:00:00Z"}`,
			`{"queue":"q","chain":{"steps":[{},{"queue":"q2"}]}}`,
		} {
			send(t, client, seedNS, http.MethodPost, "/api/v1/enqueue", body)
		}
		send(t, client, seedNS, http.MethodPost, "/api/v1/schedules", `{"name":"nightly","cron":"0 2 * * *","queue":"q","payload":{"b":2}}`)
		send(t, client, seedNS, http.MethodPut, "/api/v1/queues/q", `{"concurrency":2,"defaults":{"max_retries":4}}`)
		send(t, client, seedNS, http.MethodPost, "/api/v1/fetch", `{"queues":["q"],"worker_id":"w","timeout":0}`)
		resp := do(t, controlClient, seedNS, http.MethodGet, "/internal/v1/backup", nil)
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			raw, _ := io.ReadAll(resp.Body)
			t.Fatalf("backup: %d %s", resp.StatusCode, raw)
		}
		r, err := backup.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		restoreHeader = r.Header()
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			restoreRecords = append(restoreRecords, rec)
		}
	})
	if len(restoreRecords) == 0 {
		t.Fatal("the seed namespace's backup holds nothing")
	}
}

func FuzzRestore(f *testing.F) {
	f.Add(uint16(0), []byte(nil), []byte(nil), false)
	f.Add(uint16(1), []byte{}, []byte(nil), false)
	f.Add(uint16(2), []byte{0xff, 0, 1}, []byte(nil), false)
	f.Add(uint16(3), []byte(`{"x":1}`), []byte{0}, true)
	f.Add(uint16(5), []byte(nil), []byte{1, 2, 3}, false)
	f.Fuzz(func(t *testing.T, which uint16, value, keySuffix []byte, drop bool) {
		realBackup(t)
		recs := make([]backup.Record, 0, len(restoreRecords))
		i := int(which) % len(restoreRecords)
		for j, rec := range restoreRecords {
			if j == i {
				if drop {
					continue
				}
				if value != nil {
					rec.Value = value
				}
				rec.Key = append(bytes.Clone(rec.Key), keySuffix...)
			}
			recs = append(recs, rec)
		}
		var buf bytes.Buffer
		w, err := backup.NewWriter(&buf, restoreHeader)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			if err := w.Write(rec); err != nil {
				t.Skip() // a record the writer refuses (sizes): no stream
			}
		}
		if _, err := w.Close(nil); err != nil {
			t.Fatal(err)
		}
		target := fmt.Sprintf("t_01hx0000000000000000000000/r%d", restored.Add(1))
		resp := do(t, controlClient, target, http.MethodPost, "/internal/v1/restore?mode=new", buf.Bytes())
		if value == nil && len(keySuffix) == 0 && !drop && resp.StatusCode != http.StatusOK {
			raw, _ := io.ReadAll(resp.Body)
			t.Fatalf("the backup itself does not restore: %d %s", resp.StatusCode, raw)
		}
		answered(t, resp, "restore")
		for _, r := range []struct{ method, path, body string }{
			{http.MethodGet, "/api/v1/queues", ""},
			{http.MethodGet, "/api/v1/queues/q", ""},
			{http.MethodGet, "/api/v1/schedules", ""},
			{http.MethodGet, "/api/v1/dead", ""},
			{http.MethodPost, "/api/v1/jobs/search", `{"limit":50}`},
			{http.MethodPost, "/api/v1/jobs/search", `{"queue":"q","payload_jq":".a","tags":{"k":"v"}}`},
			{http.MethodPost, "/api/v1/fetch", `{"queues":["q","q2"],"worker_id":"w2","timeout":0}`},
			{http.MethodPost, "/api/v1/enqueue", `{"queue":"q","unique_key":"u","unique_period":60}`},
			{http.MethodGet, "/internal/v1/backup", ""},
		} {
			c := client
			if r.path == "/internal/v1/backup" {
				c = controlClient
			}
			var body []byte
			if r.body != "" {
				body = []byte(r.body)
			}
			answered(t, do(t, c, target, r.method, r.path, body), r.method+" "+r.path)
		}
	})
}

// do sends body in namespace ns with c.
func do(t *testing.T, c *http.Client, ns, method, path string, body []byte) *http.Response {
	req, err := http.NewRequest(method, baseURL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(wire.ShardNamespaceHeader, ns)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v (has the node died?)", method, path, err)
	}
	return resp
}

// seedNS is the namespace whose backup the inputs change.
const seedNS = "t_01hx0000000000000000000000/seeds"

// send does a request that must succeed.
func send(t *testing.T, c *http.Client, ns, method, path, body string) {
	resp := do(t, c, ns, method, path, []byte(body))
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
}

// answered fails on a 5xx; a stream (a backup) is read to its end.
func answered(t *testing.T, resp *http.Response, what string) {
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading the answer: %v", what, err)
	}
	if resp.StatusCode >= 500 {
		t.Fatalf("%s: %d %s", what, resp.StatusCode, raw)
	}
}
