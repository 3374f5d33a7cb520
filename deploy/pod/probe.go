package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// tlsFlags are the pod's own certificate and the deployment's CA.
type tlsFlags struct{ cert, key, ca string }

func (t *tlsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.cert, "cert", "", "client certificate (this process's own)")
	fs.StringVar(&t.key, "key", "", "its key")
	fs.StringVar(&t.ca, "ca", "", "the deployment CA's certificate")
}

// client is an HTTP client that presents the certificate, if any, and
// trusts servers whose certificate chains to the CA. Jobbie's servers
// prove a role, not a host name (their certificates name identities), so
// the chain is checked without a name, as jobbie's own clients do.
func (t *tlsFlags) client(timeout time.Duration) (*http.Client, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.cert != "" || t.key != "" {
		pair, err := tls.LoadX509KeyPair(t.cert, t.key)
		if err != nil {
			return nil, fmt.Errorf("load --cert/--key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if t.ca != "" {
		pem, err := os.ReadFile(t.ca)
		if err != nil {
			return nil, fmt.Errorf("read --ca: %w", err)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca %s: no certificate", t.ca)
		}
		cfg.InsecureSkipVerify = true // replaced by the chain check below, which skips only the host name
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("server sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
				Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			})
			return err
		}
	}
	return &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}, nil
}

func probeCmd(args []string) error {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	var t tlsFlags
	t.register(fs)
	timeout := fs.Duration("timeout", 3*time.Second, "for each request")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("probe: at least one URL")
	}
	for _, u := range fs.Args() {
		if strings.HasPrefix(u, "https://") && t.ca == "" {
			return fmt.Errorf("probe %s: https needs --ca", u)
		}
	}
	c, err := t.client(*timeout)
	if err != nil {
		return err
	}
	for _, u := range fs.Args() {
		if err := get(c, u); err != nil {
			return err
		}
	}
	return nil
}

// get fails unless url answers 2xx.
func get(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
