package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/whsign"
)

// pushFake serves push mode's calls (signing keys, the queue's reads and
// PUTs, enqueues) and is its own dispatcher: each enqueued job is POSTed,
// signed, to the queue's push URL, and completes when the receiver
// answers 2xx. With forgeEvery, every n-th delivery is signed with a key
// the namespace never published.
type pushFake struct {
	srv        *httptest.Server
	keys       whsign.KeySet
	other      whsign.KeySet
	out        *http.Client
	forgeEvery int

	mu        sync.Mutex
	pushURL   string
	puts      []string // the push URL of each PUT ("" for none)
	enqueued  int
	attempted int
	completed int64
	forged    int
	settled   int // deliveries answered or failed
	jobs      chan string
	wg        sync.WaitGroup
}

func newPushFake(t *testing.T, certFile string, forgeEvery int) *pushFake {
	k, err := whsign.NewEd25519Key("whk_1")
	require.NoError(t, err)
	o, err := whsign.NewEd25519Key("whk_other")
	require.NoError(t, err)
	pem, err := os.ReadFile(certFile)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(pem))
	f := &pushFake{keys: whsign.KeySet{k}, other: whsign.KeySet{o}, forgeEvery: forgeEvery, jobs: make(chan string, 1<<16),
		out: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/signing-keys", func(w http.ResponseWriter, _ *http.Request) {
		p := k.Public()
		writeJSON(w, 200, map[string]any{"keys": []map[string]any{{"id": p.ID, "scheme": "v1a", "public_key": p.Key}}})
	})
	mux.HandleFunc("GET /api/v1/queues/{name}", func(w http.ResponseWriter, _ *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		writeJSON(w, 200, map[string]any{"counts": map[string]int64{"completed": f.completed,
			"pending": int64(f.enqueued - f.attempted), "active": int64(f.attempted - f.settled)}})
	})
	mux.HandleFunc("PUT /api/v1/queues/{name}", func(w http.ResponseWriter, r *http.Request) {
		var spec struct {
			Push *struct {
				URL         string `json:"url"`
				MaxInFlight int    `json:"max_in_flight"`
			} `json:"push"`
		}
		if json.NewDecoder(r.Body).Decode(&spec) != nil {
			http.Error(w, "bad spec", 400)
			return
		}
		f.mu.Lock()
		f.pushURL = ""
		if spec.Push != nil {
			f.pushURL = spec.Push.URL
		}
		f.puts = append(f.puts, f.pushURL)
		f.mu.Unlock()
		writeJSON(w, 200, map[string]any{})
	})
	mux.HandleFunc("POST /api/v1/enqueue", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 201, map[string]any{"job_id": f.enqueue()})
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	for range 4 {
		f.wg.Add(1)
		go f.dispatch()
	}
	t.Cleanup(func() { close(f.jobs); f.wg.Wait(); f.out.CloseIdleConnections() })
	return f
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *pushFake) enqueue() string {
	f.mu.Lock()
	f.enqueued++
	id := fmt.Sprintf("job-%d", f.enqueued)
	f.mu.Unlock()
	f.jobs <- id
	return id
}

// dispatch delivers jobs as the shard's dispatcher would.
func (f *pushFake) dispatch() {
	defer f.wg.Done()
	for id := range f.jobs {
		f.mu.Lock()
		url := f.pushURL
		f.attempted++
		n := f.attempted
		f.mu.Unlock()
		body, _ := json.Marshal(map[string]any{"job_id": id, "queue": "bench", "payload": map[string]string{"d": "x"}, "attempt": 1})
		keys := f.keys
		if f.forgeEvery > 0 && n%f.forgeEvery == 0 {
			keys = f.other
		}
		hdr, err := keys.Headers(id+"_1", time.Now(), body)
		if err != nil || url == "" {
			f.settle(0)
			continue
		}
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
		req.Header = hdr
		res, err := f.out.Do(req)
		if err != nil {
			f.settle(0)
			continue
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		f.settle(res.StatusCode)
	}
}

// settle records a delivery's outcome: completed on 2xx.
func (f *pushFake) settle(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settled++
	switch {
	case status/100 == 2:
		f.completed++
	case status == http.StatusUnauthorized:
		f.forged++
	}
}

// pushConfig is a push run against f with the receiver's files in dir.
func pushConfig(url, dir string, tweak func(*Config)) Config {
	cfg := Config{URL: url, Key: "k", Push: true, Producers: 2, Duration: 20 * time.Second, ProgressEvery: 10 * time.Millisecond,
		PushCert: filepath.Join(dir, "receiver.crt"), PushKey: filepath.Join(dir, "receiver.key")}
	if tweak != nil {
		tweak(&cfg)
	}
	return cfg
}

// The first push run writes the receiver's certificate and stops; the
// next one serves it, points the queue at itself, counts what the server
// completed, matches every delivery with its enqueue, and takes push off
// the queue at the end.
func TestPushRun(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	_, err := Run(context.Background(), pushConfig("http://127.0.0.1:1", dir, nil), &out)
	require.ErrorIs(t, err, ErrNewReceiverCert)
	require.FileExists(t, filepath.Join(dir, "receiver.crt"))
	require.FileExists(t, filepath.Join(dir, "receiver.key"))

	f := newPushFake(t, filepath.Join(dir, "receiver.crt"), 0)
	rep, err := Run(context.Background(), pushConfig(f.srv.URL, dir, func(c *Config) { c.Jobs = 300 }), &out)
	require.NoError(t, err, out.String())
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Equal(t, "push", rep.Mode)
	require.EqualValues(t, 300, rep.Enqueued)
	require.EqualValues(t, f.enqueued, rep.Enqueued)
	require.Equal(t, f.completed, rep.Acked, "completed is the server's count")
	require.EqualValues(t, 300, rep.Delivered)
	require.EqualValues(t, 300, rep.DeliveryLatency.Count, "every delivery matched its enqueue")
	require.Zero(t, rep.Unmatched)
	require.Empty(t, rep.Errors)
	require.Len(t, f.puts, 2)
	require.Equal(t, rep.PushURL, f.puts[0])
	require.Empty(t, f.puts[1], "push is taken off the queue at the end")
	require.Contains(t, out.String(), "enqueue→handler")
}

// A delivery that does not verify is refused 401 and counted, never as
// a delivered job; --rate paces the producers.
func TestPushRunRefusesForgedDeliveries(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	_, err := Run(context.Background(), pushConfig("http://127.0.0.1:1", dir, nil), &out)
	require.True(t, errors.Is(err, ErrNewReceiverCert))
	f := newPushFake(t, filepath.Join(dir, "receiver.crt"), 5)
	rep, err := Run(context.Background(), pushConfig(f.srv.URL, dir, func(c *Config) {
		c.Duration, c.Rate = time.Second, 200
	}), &out)
	require.NoError(t, err, out.String())
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Positive(t, f.forged)
	require.EqualValues(t, f.forged, rep.Errors["unverified"])
	require.Equal(t, f.completed, rep.Delivered)
	require.Equal(t, f.completed, rep.Acked)
	require.LessOrEqual(t, rep.Enqueued, int64(260), "paced at 200/s for a second")
}

func TestPushConfigRefusesWorkers(t *testing.T) {
	for _, tweak := range []func(*Config){
		func(c *Config) { c.Workers = 4 },
		func(c *Config) { c.Latency = true },
		func(c *Config) { c.PushInFlight = 1001 },
		func(c *Config) { c.Rate = -1 },
	} {
		cfg := pushConfig("http://127.0.0.1:1", t.TempDir(), tweak).WithDefaults()
		require.Error(t, cfg.Validate())
	}
	require.NoError(t, pushConfig("http://127.0.0.1:1", t.TempDir(), nil).WithDefaults().Validate())
}
