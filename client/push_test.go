package client_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/internal/whsign"
	"github.com/jobbie/jobbie/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pushBundle is a push handler served over real TLS and the signing keys
// the server side signs with (the server's own signing package).
type pushBundle struct {
	srv  *httptest.Server
	keys whsign.KeySet
}

func newPushBundle(t *testing.T, keys whsign.KeySet, trusted []string, h client.Handler) *pushBundle {
	t.Helper()
	v, err := client.NewWebhookVerifier(trusted...)
	require.NoError(t, err)
	srv := httptest.NewTLSServer(client.PushHandler(v, h))
	t.Cleanup(srv.Close)
	return &pushBundle{srv: srv, keys: keys}
}

// deliver POSTs body signed at ts with the bundle's keys.
func (b *pushBundle) deliver(t *testing.T, ctx context.Context, id string, ts time.Time, body []byte) (int, []byte) {
	t.Helper()
	h, err := b.keys.Headers(id, ts, body)
	require.NoError(t, err)
	return b.post(t, ctx, h, body)
}

func (b *pushBundle) post(t *testing.T, ctx context.Context, h http.Header, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.srv.URL+"/jobs", bytes.NewReader(body))
	require.NoError(t, err)
	for k, vs := range h {
		req.Header[k] = vs
	}
	res, err := b.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, out
}

func edKey(t *testing.T, id string) whsign.Key {
	t.Helper()
	k, err := whsign.NewEd25519Key(id)
	require.NoError(t, err)
	return k
}

func delivery(t *testing.T, d wire.PushDelivery) []byte {
	t.Helper()
	b, err := json.Marshal(d)
	require.NoError(t, err)
	return b
}

func TestPushHandlerRunsTheJob(t *testing.T) {
	t.Parallel()
	k := edKey(t, "k1")
	seen := make(chan *client.JobContext, 1)
	b := newPushBundle(t, whsign.KeySet{k}, []string{k.Public().Key}, func(ctx context.Context, job *client.JobContext) (any, error) {
		var in struct{ To string }
		if err := job.Decode(&in); err != nil {
			return nil, err
		}
		job.Progress(2, 2, "sent")
		if err := job.Checkpoint(map[string]int{"page": 2}); err != nil {
			return nil, err
		}
		seen <- job
		return map[string]string{"sent_to": in.To}, nil
	})
	body := delivery(t, wire.PushDelivery{JobID: "j1", Queue: "emails", Payload: json.RawMessage(`{"to":"a@example.com"}`),
		Attempt: 2, MaxRetries: 5, Tags: map[string]string{"t": "v"}, Checkpoint: json.RawMessage(`{"page":1}`),
		Timeout: 30, TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	status, out := b.deliver(t, t.Context(), "j1_2", time.Now(), body)
	require.Equal(t, http.StatusOK, status, string(out))

	job := <-seen
	require.Equal(t, "j1", job.ID)
	require.Equal(t, "emails", job.Queue)
	require.Equal(t, 2, job.Attempt)
	require.Equal(t, 5, job.MaxRetries)
	require.Equal(t, map[string]string{"t": "v"}, job.Tags)
	require.JSONEq(t, `{"page":1}`, string(job.LastCheckpoint))
	require.Equal(t, 30*time.Second, job.LeaseDuration)
	require.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", job.TraceParent)
	require.Empty(t, job.LeaseToken)

	a, ok := wire.ReadPushAnswer(true, out)
	require.True(t, ok)
	require.JSONEq(t, `{"sent_to":"a@example.com"}`, string(a.Result))
	require.JSONEq(t, `{"page":2}`, string(a.Checkpoint))
	require.JSONEq(t, `{"current":2,"total":2,"message":"sent"}`, string(a.Progress))
}

func TestPushHandlerAnswersFailures(t *testing.T) {
	t.Parallel()
	k := edKey(t, "k1")
	b := newPushBundle(t, whsign.KeySet{k}, []string{k.Public().Key}, func(ctx context.Context, job *client.JobContext) (any, error) {
		switch job.ID {
		case "nothing":
			return nil, nil
		case "fail":
			_ = job.Checkpoint("half")
			return nil, errors.New("smtp timeout")
		case "permanent":
			return nil, client.Permanent(errors.New("unknown address"))
		default:
			panic("boom")
		}
	})
	status, out := b.deliver(t, t.Context(), "nothing_1", time.Now(), delivery(t, wire.PushDelivery{JobID: "nothing", Queue: "q"}))
	require.Equal(t, http.StatusOK, status)
	require.Empty(t, out, "no result: an empty 200")

	status, out = b.deliver(t, t.Context(), "fail_1", time.Now(), delivery(t, wire.PushDelivery{JobID: "fail", Queue: "q"}))
	require.Equal(t, http.StatusInternalServerError, status)
	a, ok := wire.ReadPushAnswer(false, out)
	require.True(t, ok, string(out))
	require.Equal(t, "smtp timeout", a.Error)
	require.JSONEq(t, `"half"`, string(a.Checkpoint), "the checkpoint rides on the failure for the next attempt")
	require.False(t, a.NonRetryable)

	status, out = b.deliver(t, t.Context(), "permanent_1", time.Now(), delivery(t, wire.PushDelivery{JobID: "permanent", Queue: "q"}))
	require.Equal(t, http.StatusInternalServerError, status)
	a, ok = wire.ReadPushAnswer(false, out)
	require.True(t, ok, string(out))
	require.Equal(t, "unknown address", a.Error)
	require.True(t, a.NonRetryable, string(out))

	status, out = b.deliver(t, t.Context(), "panic_1", time.Now(), delivery(t, wire.PushDelivery{JobID: "panic", Queue: "q"}))
	require.Equal(t, http.StatusInternalServerError, status)
	a, ok = wire.ReadPushAnswer(false, out)
	require.True(t, ok)
	require.Equal(t, "panic: boom", a.Error)
	require.Contains(t, a.Backtrace, "push_test.go")
}

// Nothing unverified runs the handler: another key's signature, a body
// changed after signing, a stale or future timestamp, missing headers.
func TestPushHandlerRefusesUnverified(t *testing.T) {
	t.Parallel()
	k, other := edKey(t, "k1"), edKey(t, "other")
	ran := make(chan string, 10)
	b := newPushBundle(t, whsign.KeySet{k}, []string{k.Public().Key}, func(ctx context.Context, job *client.JobContext) (any, error) {
		ran <- job.ID
		return nil, nil
	})
	body := delivery(t, wire.PushDelivery{JobID: "j1", Queue: "q"})
	now := time.Now()
	signed := func(keys whsign.KeySet, ts time.Time, b []byte) http.Header {
		h, err := keys.Headers("j1_1", ts, b)
		require.NoError(t, err)
		return h
	}
	for name, tc := range map[string]struct {
		h    http.Header
		want string
	}{
		"another key":   {signed(whsign.KeySet{other}, now, body), "no signature matches a trusted key"},
		"tampered body": {signed(whsign.KeySet{k}, now, []byte(`{"job_id":"j0","queue":"q"}`)), "no signature matches"},
		"stale":         {signed(whsign.KeySet{k}, now.Add(-6*time.Minute), body), "more than 5m0s from now"},
		"future":        {signed(whsign.KeySet{k}, now.Add(6*time.Minute), body), "more than 5m0s from now"},
		"no headers":    {http.Header{}, "missing webhook-id"},
		"bad timestamp": {http.Header{"Webhook-Id": {"x"}, "Webhook-Timestamp": {"soon"}, "Webhook-Signature": {"v1a,AAAA"}}, "not a number"},
	} {
		status, out := b.post(t, t.Context(), tc.h, body)
		require.Equal(t, http.StatusUnauthorized, status, name)
		a, ok := wire.ReadPushAnswer(false, out)
		require.True(t, ok, name)
		require.Contains(t, a.Error, tc.want, name)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, b.srv.URL, nil)
	require.NoError(t, err)
	res, err := b.srv.Client().Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)

	status, _ := b.deliver(t, t.Context(), "x", now, []byte(`{"queue":"q"}`))
	require.Equal(t, http.StatusBadRequest, status, "signed, but not a delivery")
	require.Empty(t, ran, "the handler never ran")
}

// During a rotation's overlap a request carries both signatures, so a
// handler trusting only the old key, only the new one, or both verifies;
// after the overlap only the new key signs.
func TestPushHandlerAcrossKeyRotation(t *testing.T) {
	t.Parallel()
	oldKey, newKey := edKey(t, "old"), edKey(t, "new")
	mac, err := whsign.NewHMACKey("mac")
	require.NoError(t, err)
	now := time.Now()
	keys := whsign.KeySet{oldKey}.Rotate(newKey, now.Add(-time.Minute), time.Hour)
	afterOverlap := whsign.KeySet{oldKey}.Rotate(newKey, now.Add(-2*time.Hour), time.Hour)
	handler := func(ctx context.Context, job *client.JobContext) (any, error) { return job.ID, nil }
	body := delivery(t, wire.PushDelivery{JobID: "j1", Queue: "q"})
	for name, tc := range map[string]struct {
		keys    whsign.KeySet
		trusted []string
		want    int
	}{
		"overlap, old trusted":  {keys, []string{oldKey.Public().Key}, 200},
		"overlap, new trusted":  {keys, []string{newKey.Public().Key}, 200},
		"overlap, both trusted": {keys, []string{oldKey.Public().Key, newKey.Public().Key}, 200},
		"after, old trusted":    {afterOverlap, []string{oldKey.Public().Key}, 401},
		"after, new trusted":    {afterOverlap, []string{newKey.Public().Key}, 200},
		"shared secret":         {whsign.KeySet{mac}, []string{mac.Secret()}, 200},
		"secret and ed25519":    {whsign.KeySet{mac, newKey}, []string{"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 32)), newKey.Public().Key}, 200},
	} {
		b := newPushBundle(t, tc.keys, tc.trusted, handler)
		status, out := b.deliver(t, t.Context(), "j1_1", now, body)
		require.Equal(t, tc.want, status, "%s: %s", name, out)
	}
}

// The handler's context ends with ErrDeliveryAborted when the delivery's
// request goes away.
func TestPushHandlerAbortedDelivery(t *testing.T) {
	t.Parallel()
	k := edKey(t, "k1")
	started, stopped := make(chan struct{}), make(chan error, 1)
	b := newPushBundle(t, whsign.KeySet{k}, []string{k.Public().Key}, func(ctx context.Context, job *client.JobContext) (any, error) {
		close(started)
		<-ctx.Done()
		assert.ErrorIs(t, job.Err(), client.ErrDeliveryAborted)
		stopped <- context.Cause(ctx)
		return nil, ctx.Err()
	})
	body := delivery(t, wire.PushDelivery{JobID: "j1", Queue: "q"})
	h, err := b.keys.Headers("j1_1", time.Now(), body)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.srv.URL, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header = h
	done := make(chan error, 1)
	go func() {
		res, err := b.srv.Client().Do(req)
		if err != nil {
			done <- nil // the cancel ended the call
			return
		}
		// The answer can race the cancel on a loaded machine: then it is
		// the aborted handler's failure, never an ack.
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			done <- errors.New("the aborted delivery was answered 200")
			return
		}
		done <- nil
	}()
	<-started
	cancel()
	require.ErrorIs(t, <-stopped, client.ErrDeliveryAborted)
	require.NoError(t, <-done)
}

// The verifier against the vectors published with the Standard Webhooks
// reference libraries, at their timestamp.
func TestVerifyWebhookSpecVectors(t *testing.T) {
	t.Parallel()
	at := time.Unix(1614265330, 0)
	body := []byte(`{"test": 2432232314}`)
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330")

	seed, err := base64.StdEncoding.DecodeString("VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk=")
	require.NoError(t, err)
	pub := "whpk_" + base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))
	for keys, sig := range map[string]string{
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
		pub:                                      "v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag==",
	} {
		v, err := client.NewWebhookVerifier(keys)
		require.NoError(t, err)
		v.Now = func() time.Time { return at.Add(time.Minute) }
		h.Set("webhook-signature", sig)
		require.NoError(t, v.Verify(h, body), keys)
		require.ErrorIs(t, v.Verify(h, []byte(`{"test": 2432232315}`)), client.ErrWebhookUnverified)
		v.Now = func() time.Time { return at.Add(5*time.Minute + time.Second) }
		require.ErrorContains(t, v.Verify(h, body), "more than 5m0s from now")
	}
	h.Set("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	require.NoError(t, client.VerifyWebhook(h, body, []string{pub, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, 100*365*24*time.Hour),
		"any trusted key's signature verifies; a tolerance wide enough accepts the vector's date")
	require.ErrorContains(t, client.VerifyWebhook(h, body, []string{pub}, 100*365*24*time.Hour), "no signature matches")

	for _, bad := range []string{"", "whpk_AAAA", "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 8)), "pk_x"} {
		_, err := client.NewWebhookVerifier(bad)
		require.Error(t, err, bad)
		require.True(t, strings.HasPrefix(err.Error(), "client: webhook verifier: key 0"), err.Error())
	}
}
