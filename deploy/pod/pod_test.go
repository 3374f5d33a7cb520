package main

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestOrdinal(t *testing.T) {
	for host, want := range map[string]int{
		"jobbie-shard-s1-0": 0, "jobbie-control-2": 2, "gw-7d9f-x": -1, "plain": -1, "x-": -1,
	} {
		if got := ordinal(host); got != want {
			t.Errorf("ordinal(%q) = %d, want %d", host, got, want)
		}
	}
}

// TestPKIAndProbe makes a PKI with the real jobbie, starts a real shard
// node with it, and probes the node's /healthz and /readyz over mutual
// TLS: with its certificate they answer, without one the node refuses.
func TestPKIAndProbe(t *testing.T) {
	dir := t.TempDir()
	bin := jobbieBin(t, dir)
	pki, ca := filepath.Join(dir, "pki"), filepath.Join(dir, "ca")
	for _, d := range []string{pki, ca} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ids := []string{"shard/s1/n1", "gateway/gw1", "operator/ops", "control/c1"}
	sh := filepath.Join(dir, "selfhosted")
	if err := pkiCmd(append([]string{"--dir", pki, "--ca-dir", ca, "--selfhosted-ca-dir", sh, "--control-host", "control.example.com",
		"--jobbie", bin}, ids...)); err != nil {
		t.Fatal(err)
	}
	// The self-hosted CA is its own, its certificate beside the others;
	// control's certificate carries the name joining nodes use.
	shCrt, _ := os.ReadFile(filepath.Join(sh, "ca.crt"))
	caCrt, _ := os.ReadFile(filepath.Join(ca, "ca.crt"))
	if copied, _ := os.ReadFile(filepath.Join(pki, "selfhosted-ca.crt")); len(shCrt) == 0 || string(copied) != string(shCrt) || string(shCrt) == string(caCrt) {
		t.Error("pki: the self-hosted CA is missing, not copied as selfhosted-ca.crt, or the deployment's")
	}
	if _, err := os.Stat(filepath.Join(sh, "ca.key")); err != nil {
		t.Errorf("pki: the self-hosted CA's key: %v", err)
	}
	if names := certNames(t, filepath.Join(pki, "c1.crt")); !slices.Contains(names, "control.example.com") || !slices.Contains(names, "c1") {
		t.Errorf("pki: control's certificate names %v", names)
	}
	if names := certNames(t, filepath.Join(pki, "gw1.crt")); slices.Contains(names, "control.example.com") {
		t.Errorf("pki: a gateway's certificate names control's host: %v", names)
	}
	if err := pkiCmd([]string{"--dir", pki, "--ca-dir", ca, "--selfhosted-ca-dir", ca, "--jobbie", bin, "gateway/gw1"}); err == nil {
		t.Error("pki: the self-hosted CA in the deployment CA's directory was accepted")
	}
	for _, f := range []string{"ca.crt", "s1-n1.crt", "s1-n1.key", "gw1.crt", "ops.key", "gossip.key"} {
		if _, err := os.Stat(filepath.Join(pki, f)); err != nil {
			t.Errorf("pki: %s missing: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(pki, "ca.key")); err == nil {
		t.Error("pki: ca.key copied beside the certificates; it belongs in --ca-dir only")
	}
	gossip, _ := os.ReadFile(filepath.Join(pki, "gossip.key"))
	// A second run changes nothing that exists.
	if err := pkiCmd(append([]string{"--dir", pki, "--ca-dir", ca, "--jobbie", bin}, ids...)); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(pki, "gossip.key")); string(again) != string(gossip) {
		t.Error("pki: a second run replaced the gossip key")
	}
	// cat prints a file as it is (how an operator reads a key the image
	// holds, having no shell).
	pod := filepath.Join(dir, "jobbie-pod")
	build := exec.Command("go", "build", "-o", pod, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build jobbie-pod: %v\n%s", err, out)
	}
	if out, err := exec.Command(pod, "cat", filepath.Join(pki, "gossip.key")).Output(); err != nil || string(out) != string(gossip) {
		t.Errorf("jobbie-pod cat: %q %v, want %q", out, err, gossip)
	}
	if err := exec.Command(pod, "cat", filepath.Join(pki, "missing")).Run(); err == nil {
		t.Error("jobbie-pod cat of a missing file succeeded")
	}
	if err := pkiCmd([]string{"--dir", pki, "shard/s1"}); err == nil || !strings.Contains(err.Error(), "shard/s1") {
		t.Errorf("pki with a bad identity: %v", err)
	}

	ports := freePorts(t, 3)
	http, raft, gsp := ports[0], ports[1], ports[2]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node := exec.CommandContext(ctx, bin, "shard", "--shard-id", "s1", "--node-id", "n1", "--bootstrap",
		"--data-dir", filepath.Join(dir, "data"), "--http", http, "--raft", raft, "--gossip", gsp,
		"--tls-cert", filepath.Join(pki, "s1-n1.crt"), "--tls-key", filepath.Join(pki, "s1-n1.key"),
		"--tls-ca", filepath.Join(pki, "ca.crt"), "--gossip-key-file", filepath.Join(pki, "gossip.key"))
	node.Stdout, node.Stderr = os.Stderr, os.Stderr
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = node.Wait() }()

	with := []string{"--cert", filepath.Join(pki, "gw1.crt"), "--key", filepath.Join(pki, "gw1.key"), "--ca", filepath.Join(pki, "ca.crt")}
	urls := []string{"https://" + http + "/healthz", "https://" + http + "/readyz"}
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := probeCmd(append(with, urls...))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("probe never passed: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := probeCmd([]string{"--ca", filepath.Join(pki, "ca.crt"), urls[0]}); err == nil {
		t.Error("probe without a client certificate passed; the shard node should refuse it")
	}
	if err := probeCmd(urls[:1]); err == nil || !strings.Contains(err.Error(), "--ca") {
		t.Errorf("https probe without --ca: %v", err)
	}
	if err := probeCmd(append(with, "https://"+http+"/no-such-route")); err == nil {
		t.Error("probe of a 404 passed")
	}
}

func certNames(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s: no PEM", file)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c.DNSNames
}

// freePorts picks n distinct loopback ports free for TCP and UDP (gossip
// takes both), below Linux's ephemeral range so no outgoing connection
// takes one before the node binds it.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for tries := 0; len(out) < n; tries++ {
		if tries == 1000 {
			t.Fatalf("no %d free ports on 127.0.0.1 between 10000 and 32000", n)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", 10000+rand.IntN(22000))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		u, err := net.ListenPacket("udp", addr)
		if err != nil {
			l.Close()
			continue
		}
		u.Close()
		defer l.Close() // held until all n are picked: no duplicates
		out = append(out, addr)
	}
	return out
}

// jobbieBin is $JOBBIE_BIN, or jobbie built from this repository.
func jobbieBin(t *testing.T, dir string) string {
	t.Helper()
	if b := os.Getenv("JOBBIE_BIN"); b != "" {
		return b
	}
	bin := filepath.Join(dir, "jobbie")
	build := exec.Command("go", "build", "-o", bin, "./cmd/jobbie")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build jobbie: %v\n%s", err, out)
	}
	return bin
}

// TestStartDecides runs start's decision against a real HTTP server as
// the one peer (loopback, which the test does not count as the pod's
// own address).
func TestStartDecides(t *testing.T) {
	var ready atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" && ready.Load() {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	peer := "127.0.0.1:" + port
	empty, full := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "raft.db"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := func(host, dir string) *startOptions {
		return &startOptions{peers: "dns:127.0.0.1:" + port, dataDir: dir, first: "--bootstrap",
			joinFlag: "--join-http", every: 20 * time.Millisecond, host: host, own: map[string]bool{}}
	}
	decide := func(o *startOptions, timeout time.Duration) ([]string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return o.decide(ctx, io.Discard)
	}
	// No peer ready: ordinal 0 starts the group; another with state
	// resumes; another without state waits.
	if got, err := decide(opts("jobbie-shard-s1-0", empty), time.Second); err != nil || !reflect.DeepEqual(got, []string{"--bootstrap"}) {
		t.Errorf("ordinal 0, no peer ready: %v %v, want [--bootstrap]", got, err)
	}
	if got, err := decide(opts("jobbie-shard-s1-1", full), time.Second); err != nil || got != nil {
		t.Errorf("ordinal 1 with state, no peer ready: %v %v, want nothing added", got, err)
	}
	if got, err := decide(opts("jobbie-shard-s1-1", empty), 200*time.Millisecond); err == nil {
		t.Errorf("ordinal 1 without state, no peer ready: %v, want it to wait", got)
	}
	// A peer becomes ready while ordinal 2 waits: it joins through it.
	go func() { time.Sleep(100 * time.Millisecond); ready.Store(true) }()
	if got, err := decide(opts("jobbie-shard-s1-2", empty), 10*time.Second); err != nil || !reflect.DeepEqual(got, []string{"--join-http=" + peer}) {
		t.Errorf("ordinal 2 once a peer is ready: %v %v", got, err)
	}
	// Ordinal 0 with an empty volume joins the group its peers hold.
	if got, err := decide(opts("jobbie-shard-s1-0", empty), time.Second); err != nil || !reflect.DeepEqual(got, []string{"--join-http=" + peer}) {
		t.Errorf("ordinal 0 beside a ready peer: %v %v, want to join it", got, err)
	}
	// Peers given as a list.
	o := opts("jobbie-shard-s1-1", empty)
	o.peers = "127.0.0.1:1," + peer
	if got, err := decide(o, time.Second); err != nil || !reflect.DeepEqual(got, []string{"--join-http=" + peer}) {
		t.Errorf("peers as a list: %v %v", got, err)
	}
	o.peers = "no-port"
	if _, err := decide(o, time.Second); err == nil || !strings.Contains(err.Error(), "no-port") {
		t.Errorf("bad --peers: %v", err)
	}
	// No peers to ask: ordinal 0 starts the group, the others at once.
	for host, want := range map[string][]string{"dc1-0": {"--bootstrap"}, "dc1-1": nil, "dc1-2": nil} {
		o := opts(host, empty)
		o.peers = ""
		if got, err := decide(o, time.Second); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s without --peers: %v %v, want %v", host, got, err, want)
		}
	}
	// The pod's own address is never its peer.
	o = opts("jobbie-shard-s1-0", empty)
	o.own = map[string]bool{"127.0.0.1": true}
	if got, err := decide(o, time.Second); err != nil || !reflect.DeepEqual(got, []string{"--bootstrap"}) {
		t.Errorf("only itself ready: %v %v, want [--bootstrap]", got, err)
	}
}
