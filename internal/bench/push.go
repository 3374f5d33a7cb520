package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// drainWithin bounds the wait, after a push run's window, for the jobs
// already enqueued to be delivered and completed.
const drainWithin = 30 * time.Second

// pushSide is push mode's half of a run: the HTTPS receiver on 127.0.0.1
// the shard's dispatcher delivers to (keep-alive, verifying every
// signature as a customer's handler would), and the queue's push
// settings, set at the start and taken off at the end so the queue does
// not go on pushing to a receiver that is gone.
type pushSide struct {
	r      *runner
	srv    *http.Server
	url    string
	verify *client.WebhookVerifier
	admin  *http.Client

	mu    sync.Mutex // guards st: handlers run on many goroutines
	st    *loopStats
	start int64 // the queue's completed count before the run
	bad   atomic.Int64
}

// startPush loads (or makes) the receiver's certificate, listens, reads
// the namespace's signing keys and points the queue at the receiver.
func (r *runner) startPush() (*pushSide, error) {
	cert, err := receiverCert(r.cfg.PushCert, r.cfg.PushKey)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &pushSide{r: r, url: "https://" + ln.Addr().String() + "/jobs", st: r.newStats(),
		admin: &http.Client{Timeout: callTimeout, Transport: &http.Transport{TLSClientConfig: r.cfg.TLS}}}
	p.srv = &http.Server{Handler: p, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: nil}
	go func() { _ = p.srv.ServeTLS(ln, "", "") }()
	if err := p.setup(); err != nil {
		_ = p.srv.Close()
		p.admin.CloseIdleConnections()
		return nil, err
	}
	return p, nil
}

func (p *pushSide) setup() error {
	var keys wire.WebhookKeyList
	if err := p.call(http.MethodGet, "/api/v1/signing-keys", nil, &keys); err != nil {
		return fmt.Errorf("bench: read the namespace's signing keys: %w", err)
	}
	pub := make([]string, 0, len(keys.Keys))
	for _, k := range keys.Keys {
		pub = append(pub, k.Key)
	}
	v, err := client.NewWebhookVerifier(pub...)
	if err != nil {
		return fmt.Errorf("bench: signing keys: %w", err)
	}
	p.verify = v
	q, err := p.queue()
	if err != nil {
		return err
	}
	p.start = q.Counts.Completed
	spec := map[string]any{"push": map[string]any{"url": p.url, "max_in_flight": p.r.cfg.PushInFlight}}
	if err := p.call(http.MethodPut, "/api/v1/queues/"+url.PathEscape(p.r.cfg.Queue), spec, nil); err != nil {
		return fmt.Errorf("bench: make %s a push queue: %w", p.r.cfg.Queue, err)
	}
	return nil
}

// ServeHTTP is the handler: verify, match the job with its enqueue, 200.
func (p *pushSide) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	at := p.r.now()
	body, err := io.ReadAll(io.LimitReader(req.Body, wire.MaxPushDeliveryBytes))
	if err != nil {
		http.Error(w, "read: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := p.verify.Verify(req.Header, body); err != nil {
		p.bad.Add(1)
		p.r.counter.errors.Add(1)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var d struct {
		JobID string `json:"job_id"`
	}
	if json.Unmarshal(body, &d) != nil || d.JobID == "" {
		http.Error(w, "not a delivery", http.StatusBadRequest)
		return
	}
	p.r.counter.delivered.Add(1)
	p.r.gate.release(1)
	if s, ok := p.r.track.delivered(d.JobID, at); ok {
		p.mu.Lock()
		p.st.recordSample(s)
		p.mu.Unlock()
	}
	w.WriteHeader(http.StatusOK)
	if n := p.r.counter.acked.Add(1); p.r.cfg.Jobs > 0 && n >= p.r.cfg.Jobs {
		p.r.finish()
	}
}

// completed is how many of the queue's jobs completed since the run
// began, by the queue's own counts.
func (p *pushSide) completed() (int64, error) {
	q, err := p.queue()
	if err != nil {
		return 0, err
	}
	return q.Counts.Completed - p.start, nil
}

// drain waits until every job enqueued was delivered and the queue has
// none pending or active (or drainWithin passed), then takes push off
// the queue and stops the receiver. It returns the final completed count.
func (p *pushSide) drain(enqueued int64) int64 {
	deadline := time.Now().Add(drainWithin)
	done := int64(-1)
	for time.Now().Before(deadline) {
		q, err := p.queue()
		if err == nil {
			done = q.Counts.Completed - p.start
			if done >= enqueued || q.Counts.Pending+q.Counts.Active == 0 {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := p.call(http.MethodPut, "/api/v1/queues/"+url.PathEscape(p.r.cfg.Queue), map[string]any{}, nil); err != nil {
		fmt.Fprintf(p.r.out, "bench: could not take push off queue %s: %v\n", p.r.cfg.Queue, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
	p.admin.CloseIdleConnections()
	if n := p.bad.Load(); n > 0 {
		p.st.errors["unverified"] += n
	}
	return done
}

func (p *pushSide) queue() (*wire.Queue, error) {
	var q wire.Queue
	if err := p.call(http.MethodGet, "/api/v1/queues/"+url.PathEscape(p.r.cfg.Queue), nil, &q); err != nil {
		var ae *adminError
		if errors.As(err, &ae) && ae.status == http.StatusNotFound {
			return &q, nil // not declared yet: nothing completed
		}
		return nil, fmt.Errorf("bench: read queue %s: %w", p.r.cfg.Queue, err)
	}
	return &q, nil
}

// adminError is an answer other than 2xx to one of push mode's calls.
type adminError struct {
	status int
	body   string
}

func (e *adminError) Error() string { return fmt.Sprintf("%d %s", e.status, e.body) }

// call sends one administrative request with the run's headers.
func (p *pushSide) call(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, p.r.cfg.target()+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for _, h := range p.r.cfg.headers() {
		req.Header.Set(h.key, h.value)
	}
	res, err := p.admin.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return err
	}
	if res.StatusCode/100 != 2 {
		return &adminError{status: res.StatusCode, body: string(bytes.TrimSpace(raw))}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}
