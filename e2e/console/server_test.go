package console

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jobbie/jobbie/e2e/internal/freeport"
)

// devServer is the running `jobbie dev`.
type devServer struct {
	dir                   string
	gateway, control      string // base URLs: http:// for the gateway, https:// for control
	tunnel                string // host:port where self-hosted shard nodes dial the gateway
	ownerKey, operatorKey string // of tenant "default" and of the operator
	ops                   *http.Client
	cmd                   *exec.Cmd
	exited                chan struct{}
}

// launch starts `jobbie dev` on fresh loopback ports (with a tunnel
// listener for self-hosted shards), with its front end from consoleDir
// when set, and waits until it says it is running.
func launch(dir, consoleDir string) (*devServer, error) {
	ports, err := freeport.Loopback(4)
	if err != nil {
		return nil, err
	}
	args := []string{"dev", "--data-dir", dir, "--addr", ports[0], "--control-addr", ports[1], "--shard-addr", ports[2],
		"--tunnel-addr", ports[3]}
	if consoleDir != "" {
		args = append(args, "--console-dir", consoleDir)
	}
	cmd := exec.Command(binary, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(dir+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	d := &devServer{dir: dir, gateway: "http://" + ports[0], control: "https://" + ports[1], tunnel: ports[3],
		cmd: cmd, exited: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if !signalled && strings.HasPrefix(sc.Text(), "Jobbie is running.") {
				signalled = true
				close(ready)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { _ = cmd.Wait(); logf.Close(); close(d.exited) }()
	select {
	case <-ready:
	case <-d.exited:
		return nil, fmt.Errorf("jobbie dev exited before it was ready: %s", d.logTail(20))
	case <-time.After(60 * time.Second):
		d.stop()
		return nil, fmt.Errorf("jobbie dev not ready after 60s: %s", d.logTail(20))
	}
	if d.ownerKey, err = readKey(filepath.Join(dir, "owner.key")); err != nil {
		d.stop()
		return nil, err
	}
	if d.operatorKey, err = readKey(filepath.Join(dir, "operator.key")); err != nil {
		d.stop()
		return nil, err
	}
	pki := filepath.Join(dir, "pki")
	cfg, err := clientTLS(filepath.Join(pki, "operator.crt"), filepath.Join(pki, "operator.key"), filepath.Join(pki, "ca.crt"))
	if err != nil {
		d.stop()
		return nil, err
	}
	d.ops = &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	return d, nil
}

func readKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}

// clientTLS presents certFile and trusts caFile.
func clientTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	raw, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(raw) {
		return nil, fmt.Errorf("%s holds no certificate", caFile)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}, nil
}

// stop ends the process gracefully and waits for it.
func (d *devServer) stop() {
	select {
	case <-d.exited:
		return
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
	if d.ops != nil {
		d.ops.CloseIdleConnections()
	}
}

// logTail is the last n lines of the server's log.
func (d *devServer) logTail(n int) string {
	b, _ := os.ReadFile(d.dir + ".log")
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func (d *devServer) printLogTail(w io.Writer, n int) {
	fmt.Fprintf(w, "--- last lines of the jobbie dev log:\n%s\n---\n", d.logTail(n))
}
