package devproc

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Config is how to start `jobbie dev`. An address left empty leaves its
// flag out (the binary's default).
type Config struct {
	Dir         string // --data-dir
	Log         string // where its output goes; Dir+".log" when empty
	Addr        string // --addr: the gateway
	ControlAddr string // --control-addr
	ShardAddr   string // --shard-addr
	MetricsAddr string // --metrics-addr: the gateway's metrics
	TunnelAddr  string // --tunnel-addr: where self-hosted shard nodes dial
	Flags       []string
	Env         []string      // added to the environment it inherits ("SSL_CERT_FILE=…")
	ReadyWithin time.Duration // 60 s when 0
	StopGrace   time.Duration // Stop's wait before SIGKILL; 20 s when 0
}

// Dev is a running `jobbie dev`.
type Dev struct {
	*Proc
	Config
	// Base URLs: http:// for the gateway, https:// for the others; empty
	// for an address not given.
	Gateway, Control, Shard, Metrics string
	OwnerKey, OperatorKey            string // of tenant "default" and of the operator
	Ops                              *http.Client
}

// StartDev starts `jobbie dev` as c says, waits until it says it is
// running, and reads its keys and operator certificate; on an error the
// process is ended.
func StartDev(bin string, c Config) (*Dev, error) {
	if c.Log == "" {
		c.Log = c.Dir + ".log"
	}
	if c.ReadyWithin == 0 {
		c.ReadyWithin = 60 * time.Second
	}
	args := []string{"dev", "--data-dir", c.Dir}
	for _, f := range []struct{ flag, addr string }{{"--addr", c.Addr}, {"--control-addr", c.ControlAddr},
		{"--shard-addr", c.ShardAddr}, {"--metrics-addr", c.MetricsAddr}, {"--tunnel-addr", c.TunnelAddr}} {
		if f.addr != "" {
			args = append(args, f.flag, f.addr)
		}
	}
	cmd := exec.Command(bin, append(args, c.Flags...)...)
	if len(c.Env) > 0 {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	p, err := Start(cmd, c.Log, "Jobbie is running")
	if err != nil {
		return nil, err
	}
	if c.StopGrace > 0 {
		p.Grace = c.StopGrace
	}
	d := &Dev{Proc: p, Config: c, Gateway: base("http://", c.Addr), Control: base("https://", c.ControlAddr),
		Shard: base("https://", c.ShardAddr), Metrics: base("https://", c.MetricsAddr)}
	if err := d.load(); err != nil {
		p.Kill()
		return nil, err
	}
	return d, nil
}

func (d *Dev) load() error {
	if err := d.WaitReady(d.ReadyWithin); err != nil {
		return err
	}
	var err error
	if d.OwnerKey, err = ReadKey(filepath.Join(d.Dir, "owner.key")); err != nil {
		return err
	}
	if d.OperatorKey, err = ReadKey(filepath.Join(d.Dir, "operator.key")); err != nil {
		return err
	}
	cfg, err := OperatorTLS(d.Dir)
	if err != nil {
		return err
	}
	d.Ops = &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	return nil
}

func base(scheme, addr string) string {
	if addr == "" {
		return ""
	}
	return scheme + addr
}

// Stop ends the process gracefully and waits for it.
func (d *Dev) Stop() {
	d.Proc.Stop()
	d.Ops.CloseIdleConnections()
}

// Kill ends the process with SIGKILL, as a crash would.
func (d *Dev) Kill() {
	d.Proc.Kill()
	d.Ops.CloseIdleConnections()
}

// ReadKey is the key kept in a file, without its line end.
func ReadKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}

// OperatorTLS presents the operator certificate of a `jobbie dev` data
// directory (<dataDir>/pki) and trusts its CA.
func OperatorTLS(dataDir string) (*tls.Config, error) {
	dir := filepath.Join(dataDir, "pki")
	return ClientTLS(filepath.Join(dir, "operator.crt"), filepath.Join(dir, "operator.key"), filepath.Join(dir, "ca.crt"))
}

// ClientTLS presents certFile (none when empty) and trusts caFile.
func ClientTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	raw, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(raw) {
		return nil, fmt.Errorf("%s holds no certificate", caFile)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
