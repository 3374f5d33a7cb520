package selfhosted

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/jobbie/jobbie/internal/controlclient"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/wire"
)

// A self-hosted node's certificate lasts what control's
// --selfhosted-cert-validity says (a year by default) from its join or
// its last renewal. The node renews it itself, at control's renewal
// endpoint, once less than a third of its lifetime is left, and swaps it
// in place: the tunnel agents, Raft and the node's listener take the new
// one at their next handshake (pki.Credentials.Reload, as on SIGHUP).

// StartRenewal keeps the certificate of the node of dataDir renewed at
// controls (Record.Controls) until ctx ends, trusting for control the
// hosted CA of hostedCAFile, or without it the one its ca.crt holds. With
// no control URL it only warns: a node that joined before its record
// kept them renews nothing.
func StartRenewal(ctx context.Context, dataDir string, controls []string, hostedCAFile string, creds *pki.Credentials, log *slog.Logger) error {
	if len(controls) == 0 {
		log.Warn("certificate renewal is off: this node joined before its join record kept control's URL; start it with --control-url",
			"not_after", creds.NotAfter())
		return nil
	}
	var hostedCA []byte
	if hostedCAFile != "" {
		b, err := os.ReadFile(hostedCAFile)
		if err != nil {
			return err
		}
		hostedCA = b
	}
	r, err := newRenewer(dataDir, controls, hostedCA, creds, log)
	if err != nil {
		return fmt.Errorf("certificate renewal: %w", err)
	}
	go r.run(ctx)
	return nil
}

// renewer keeps a self-hosted node's certificate fresh.
type renewer struct {
	certFile, keyFile, caFile string
	controls                  []string
	cc                        *controlclient.Client
	creds                     *pki.Credentials
	log                       *slog.Logger
}

// newRenewer renews at controls, trusting hostedCA (PEM) for control's
// certificate; without it, the hosted CA is what the node's ca.crt holds
// beside the self-hosted CA (the one that signed node.crt), so the
// node's own peers' CA never vouches for control.
func newRenewer(dataDir string, controls []string, hostedCA []byte, creds *pki.Credentials, log *slog.Logger) (*renewer, error) {
	r := &renewer{certFile: File(dataDir, CertFile), keyFile: File(dataDir, KeyFile),
		caFile: File(dataDir, TrustFile), controls: controls, creds: creds, log: log}
	for _, u := range controls {
		if !strings.HasPrefix(u, "https://") {
			return nil, fmt.Errorf("control URL %q: control is reached over TLS (https://)", u)
		}
	}
	roots := x509.NewCertPool()
	if hostedCA != nil {
		if !roots.AppendCertsFromPEM(hostedCA) {
			return nil, errors.New("--ca-file holds no certificate")
		}
	} else {
		leaf, _, err := r.current()
		if err != nil {
			return nil, err
		}
		all, err := os.ReadFile(r.caFile)
		if err != nil {
			return nil, err
		}
		n := 0
		for rest := all; ; {
			var blk *pem.Block
			if blk, rest = pem.Decode(rest); blk == nil {
				break
			}
			c, err := x509.ParseCertificate(blk.Bytes)
			if err != nil || leaf.CheckSignatureFrom(c) == nil {
				continue // the self-hosted CA: its own peers', not control's
			}
			roots.AddCert(c)
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("%s holds no hosted CA certificate for control: pass --ca-file", r.caFile)
		}
	}
	r.cc = controlClient(controls, roots)
	return r, nil
}

// current is node.crt's certificate and when the node got it: the
// file's modification time (the node writes it as it gets it), within
// the certificate's validity. Not NotBefore: the CA backdates that for
// clock skew, which would shorten a short lifetime's last third to
// nothing.
func (r *renewer) current() (*x509.Certificate, time.Time, error) {
	b, err := os.ReadFile(r.certFile)
	if err != nil {
		return nil, time.Time{}, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, time.Time{}, fmt.Errorf("%s holds no PEM certificate", r.certFile)
	}
	leaf, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil, time.Time{}, err
	}
	got := leaf.NotBefore
	if st, err := os.Stat(r.certFile); err == nil && st.ModTime().After(got) {
		got = st.ModTime()
	}
	if got.After(leaf.NotAfter) {
		got = leaf.NotAfter
	}
	return leaf, got, nil
}

// checkPeriod is how often the node looks at its certificate: a
// sixtieth of its lifetime, from a tenth of a second (test-sized
// lifetimes) to a minute.
func checkPeriod(life time.Duration) time.Duration {
	return min(max(life/60, 100*time.Millisecond), time.Minute)
}

// maxRetry caps the backoff between failed renewals: a twentieth of the
// lifetime (so a test-sized one retries within a second or so), at most
// five minutes (a year-long one has months left when it starts trying).
func maxRetry(life time.Duration) time.Duration {
	return min(max(life/20, checkPeriod(life)), 5*time.Minute)
}

// jitter spreads wakeups of a fleet of nodes: 80-100% of d.
func jitter(d time.Duration) time.Duration {
	return d - time.Duration(mrand.Int64N(int64(d)/5+1))
}

// run renews the certificate whenever less than a third of its lifetime
// is left, until ctx ends. A failure (control unreachable, most often:
// normal, the certificate has long left) is logged and retried with
// backoff.
func (r *renewer) run(ctx context.Context) {
	defer r.cc.Close()
	var backoff time.Duration
	for {
		var wait time.Duration
		leaf, got, err := r.current()
		if err != nil {
			r.log.Error("certificate renewal: read the certificate", "err", err)
			wait = time.Minute
		} else {
			life := leaf.NotAfter.Sub(got)
			renewAt := leaf.NotAfter.Add(-life / 3)
			if time.Now().Before(renewAt) {
				backoff = 0
				wait = min(checkPeriod(life), time.Until(renewAt))
			} else if err := r.renew(ctx, leaf); err != nil {
				if ctx.Err() != nil {
					return
				}
				backoff = min(max(2*backoff, checkPeriod(life)), maxRetry(life))
				r.log.Warn("certificate renewal failed; retrying", "err", err, "not_after", leaf.NotAfter, "retry_in", backoff.Round(time.Millisecond))
				wait = backoff
			} else {
				backoff = 0
				continue // look at the new one
			}
		}
		t := time.NewTimer(jitter(max(wait, time.Millisecond)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// renew asks control for a new certificate of leaf's identity and key,
// proving it holds the key by signing the request with it; writes it to
// node.crt (0600, by rename) and reloads the credentials in place.
func (r *renewer) renew(ctx context.Context, leaf *x509.Certificate) error {
	keyPEM, err := os.ReadFile(r.keyFile)
	if err != nil {
		return err
	}
	key, err := pki.ParseKey(keyPEM)
	if err != nil {
		return fmt.Errorf("%s: %w", r.keyFile, err)
	}
	// The request names nothing: the identity is the certificate's.
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{Organization: []string{"Jobbie"}}}, key)
	if err != nil {
		return err
	}
	req := wire.RenewRequest{
		Certificate: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw})),
		CSR:         string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})),
	}
	var out wire.RenewResponse
	if err := postControl(ctx, r.cc, "/control/v1/join/renew", req, http.StatusOK, &out); err != nil {
		return err
	}
	// Check it before it replaces anything: the node's identity and key,
	// from a CA its ca.crt trusts, later than the one it has.
	caPEM, err := os.ReadFile(r.caFile)
	if err != nil {
		return err
	}
	check, err := pki.NewCredentials([]byte(out.Certificate), keyPEM, caPEM)
	if err != nil {
		return fmt.Errorf("the renewed certificate: %w", err)
	}
	if check.Identity() != r.creds.Identity() {
		return fmt.Errorf("control renewed the certificate for %s, not %s", check.Identity(), r.creds.Identity())
	}
	if !check.NotAfter().After(leaf.NotAfter) {
		return fmt.Errorf("the renewed certificate expires at %s, no later than the current one", check.NotAfter())
	}
	if err := writeSecretFile(r.certFile, strings.TrimSpace(out.Certificate)); err != nil {
		return err
	}
	if err := r.creds.Reload(); err != nil {
		return fmt.Errorf("reload the renewed certificate: %w", err)
	}
	r.log.Info("certificate renewed", "identity", r.creds.Identity().String(), "not_after", r.creds.NotAfter())
	return nil
}
