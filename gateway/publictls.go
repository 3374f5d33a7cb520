package gateway

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// The public listener's own TLS (Config.PublicCertFile/PublicKeyFile):
// an ordinary server certificate for the clients' side (a public CA's,
// or the tenant network's for a local API), nothing to do with the
// deployment's internal CA. Without it the port speaks plain HTTP, for a
// load balancer that ends TLS in front.
//
// The files are read at start and again when they change (checked at
// most every certReloadEvery, on a handshake), so a renewed certificate
// is served without a restart; files that fail to load keep the last
// good pair serving, and the failure is logged.

const certReloadEvery = 5 * time.Second

type certReloader struct {
	certFile, keyFile string
	logf              func(msg string, args ...any)
	every             time.Duration // certReloadEvery; tests shorten it

	mu      sync.Mutex
	cert    *tls.Certificate
	checked time.Time
	stamp   [2]fileStamp
}

// fileStamp tells a changed file: its modification time and size.
type fileStamp struct {
	mod  time.Time
	size int64
}

func newCertReloader(certFile, keyFile string, logf func(string, ...any)) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, logf: logf, every: certReloadEvery}
	if err := r.load(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *certReloader) stamps() ([2]fileStamp, error) {
	var out [2]fileStamp
	for i, f := range []string{r.certFile, r.keyFile} {
		st, err := os.Stat(f)
		if err != nil {
			return out, err
		}
		out[i] = fileStamp{st.ModTime(), st.Size()}
	}
	return out, nil
}

// load reads the pair; the caller holds mu or owns r alone.
func (r *certReloader) load() error {
	stamps, err := r.stamps()
	if err != nil {
		return fmt.Errorf("gateway: public TLS: %w", err)
	}
	c, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("gateway: public TLS: %w", err)
	}
	r.cert, r.stamp, r.checked = &c, stamps, time.Now()
	return nil
}

// get is tls.Config.GetCertificate: the pair, reloaded if its files changed.
func (r *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) >= r.every {
		r.checked = time.Now()
		if stamps, err := r.stamps(); err == nil && stamps != r.stamp {
			if err := r.load(); err != nil {
				r.logf("gateway: the public certificate changed but does not load; serving the last one", "err", err)
			}
		}
	}
	return r.cert, nil
}

// publicTLS is the public listener's TLS config, nil without the files.
func publicTLS(cfg Config) (*tls.Config, error) {
	if cfg.PublicCertFile == "" {
		return nil, nil
	}
	r, err := newCertReloader(cfg.PublicCertFile, cfg.PublicKeyFile, cfg.Logger.Warn)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.get, NextProtos: []string{"http/1.1"}}, nil
}
