package console

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// receiverCert is the certificate of the push handlers the tests start on
// 127.0.0.1: jobbie dev trusts it (its SSL_CERT_FILE).
var receiverCert tls.Certificate

// writeReceiverCert makes receiverCert, self-signed for 127.0.0.1, and
// writes it to a PEM file in dir.
func writeReceiverCert(dir string) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "push receiver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	receiverCert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	path := filepath.Join(dir, "receiver.pem")
	return path, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
}

// The queue page's delivery: a pull queue says so; the push dialog makes
// it a push queue (a header line without a name, and a timeout the server
// refuses, are shown in the dialog and change nothing); a handler's 410
// shows as the push-disabled badge and notice with its reason, and
// "Enable push again" enables it; a description change keeps push; the
// dialog makes it a pull queue again.
func TestConsoleQueuePush(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	var calls atomic.Int64
	recv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusGone) // once; then the handler is back and acks
		}
	}))
	recv.TLS = &tls.Config{Certificates: []tls.Certificate{receiverCert}}
	recv.StartTLS()
	t.Cleanup(recv.Close)
	url := recv.URL + "/jobs"
	two := int64(2)
	_, err := tn.owner.PutQueue(ctx(t), "qp.push", client.QueueSpec{Concurrency: &two})
	require.NoError(t, err)
	queue := func() *client.Queue {
		t.Helper()
		q, err := tn.owner.GetQueue(ctx(t), "qp.push")
		require.NoError(t, err)
		return q
	}

	p := signedIn(t, tn.ownerKey, "/console/queues/qp.push", "queue")
	p.waitText("#queue-delivery-pull", "Pull")
	assert.Equal(t, 0, p.count(`#queue-status [data-push]`))

	p.click("button#queue-push")
	p.setValue("#push-url", url)
	p.setValue("#push-headers", "Authorization: Bearer s3cret\nno colon")
	p.click("#push-form-save")
	p.waitText("#push-form .error", "push.headers: line 2")
	p.setValue("#push-headers", "Authorization: Bearer s3cret")
	p.setValue("#push-timeout", "1h")
	p.click("#push-form-save")
	p.waitText("#push-form .error", "push.timeout")
	assert.Equal(t, "true", eval[string](p, `document.querySelector('#push-timeout').getAttribute('aria-invalid')`))
	assert.Nil(t, queue().Push, "a refused push changed the queue")
	p.setValue("#push-timeout", "45s")
	p.click("#push-form-save")
	p.waitNoDialog("#push-form")
	p.waitText(`#queue-push-settings [data-field="url"]`, url)
	p.waitText(`#queue-push-settings [data-field="headers"]`, "Authorization")
	assert.NotContains(t, p.text("#queue-push-settings"), "s3cret", "header values stay hidden")
	p.waitFor(`#queue-status [data-push="on"]`)
	q := queue()
	require.NotNil(t, q.Push)
	assert.Equal(t, client.QueuePush{URL: url, Mode: "always", Timeout: "45s", MaxInFlight: 10,
		Headers: map[string]string{"Authorization": "Bearer s3cret"}}, *q.Push)
	require.NotNil(t, q.Concurrency)
	assert.EqualValues(t, 2, *q.Concurrency, "the push's PUT kept the concurrency")

	// A job meets the handler's 410: push disabled, and the page says why.
	tn.seed(t, "qp.push", 1)
	deadline := time.Now().Add(time.Minute)
	for q = queue(); q.Push.Disabled == nil; q = queue() {
		require.False(t, time.Now().After(deadline), "push not disabled within a minute of the 410")
		time.Sleep(100 * time.Millisecond)
	}
	p.reload()
	p.waitScreen("queue")
	p.waitText("#queue-push-disabled", "410")
	p.waitFor(`#queue-status [data-push="disabled"]`)
	p.shot("queue-push-disabled")
	p.click("#queue-push-enable")
	p.waitGone("#queue-push-disabled")
	p.waitFor(`#queue-status [data-push="on"]`)
	assert.Nil(t, queue().Push.Disabled)

	// The description is a PUT of the whole spec: push stays.
	p.click("button#queue-description")
	p.setValue("#description-text", "Receipts")
	p.click("#description-form-save")
	p.waitNoDialog("#description-form")
	p.waitText("#queue-description-text", "Receipts")
	q = queue()
	require.NotNil(t, q.Push, "the description's PUT lost push")
	assert.Equal(t, url, q.Push.URL)

	p.click("button#queue-push")
	p.click("#push-remove")
	p.waitNoDialog("#push-form")
	p.waitText("#queue-delivery-pull", "Pull")
	assert.Nil(t, queue().Push)
	assert.Positive(t, calls.Load(), "the handler was called")
}
