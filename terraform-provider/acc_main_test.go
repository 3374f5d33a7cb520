package provider_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/jobbie/jobbie/client"
	provider "github.com/jobbie/jobbie/terraform-provider"
)

// The acceptance tests (TF_ACC=1) run the real terraform CLI against a real
// `jobbie dev` started here on random loopback ports: JOBBIE_BIN names the
// jobbie binary, else it is built into a temporary directory. Each test
// works in namespaces of its own, with the owner key of tenant default.

var (
	gatewayURL string
	ownerKey   string
	// jobbieBin, controlURL and devDir let a test join a self-hosted shard
	// node to the jobbie dev (it listens for their tunnels).
	jobbieBin, controlURL, devDir string
)

// factories serve the provider in-process (no binary, no registry).
var factories = map[string]func() (tfprotov6.ProviderServer, error){
	"jobbie": providerserver.NewProtocol6WithError(provider.New("test")()),
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if os.Getenv("TF_ACC") == "" {
		return m.Run() // unit tests only; the acceptance tests say they were skipped
	}
	tf, err := terraformCLI()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv("TF_ACC_TERRAFORM_PATH", tf)
	os.Setenv("CHECKPOINT_DISABLE", "1") // no version check over the network
	tmp, err := os.MkdirTemp("", "jobbie-tfacc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	bin := os.Getenv("JOBBIE_BIN")
	if bin == "" {
		bin = filepath.Join(tmp, "jobbie")
		build := exec.Command("go", "build", "-o", bin, "../cmd/jobbie")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build jobbie:", err)
			return 1
		}
	}
	certFile, err := writeReceiverCert(tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv, err := startDev(bin, filepath.Join(tmp, "data"), certFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start jobbie dev:", err)
		return 1
	}
	defer srv.stop()
	gatewayURL, ownerKey = srv.gateway, srv.ownerKey
	jobbieBin, controlURL, devDir = bin, srv.control, filepath.Join(tmp, "data")
	os.Setenv(provider.EnvURL, gatewayURL)
	os.Setenv(provider.EnvAPIKey, ownerKey)
	return m.Run()
}

// terraformCLI finds the terraform binary the acceptance tests need:
// TF_ACC_TERRAFORM_PATH, else terraform on the PATH. Without one the
// testing framework would try to download Terraform; say so instead.
func terraformCLI() (string, error) {
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("TF_ACC_TERRAFORM_PATH=%s: %v", p, err)
		}
		return p, nil
	}
	p, err := exec.LookPath("terraform")
	if err != nil {
		return "", fmt.Errorf("the Terraform acceptance tests (TF_ACC=1) need the terraform CLI (1.0 or later): " +
			"put terraform on the PATH or set TF_ACC_TERRAFORM_PATH to it. They do not download it, and do not skip")
	}
	return p, nil
}

// devServer is a running `jobbie dev`.
type devServer struct {
	gateway, control, ownerKey string
	cmd                        *exec.Cmd
	exited                     chan struct{}
}

// startDev runs jobbie dev allowed to push to loopback, trusting the
// certificate in receiverCA (the push tests' handlers).
func startDev(bin, dir, receiverCA string) (*devServer, error) {
	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "dev", "--data-dir", dir, "--addr", ports[0], "--control-addr", ports[1], "--shard-addr", ports[2],
		"--tunnel-addr", ports[3], // self-hosted shards' tunnels
		"--push-allow-private")
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+receiverCA)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	logPath := dir + ".log"
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &devServer{gateway: "http://" + ports[0], control: "https://" + ports[1], cmd: cmd, exited: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if strings.HasPrefix(sc.Text(), "Jobbie is running.") {
				close(ready)
				break
			}
		}
		_, _ = io.Copy(logf, stdout)
	}()
	go func() { _ = cmd.Wait(); close(d.exited) }()
	select {
	case <-ready:
	case <-d.exited:
		return nil, fmt.Errorf("jobbie dev exited before it was ready: %s", tail(logPath))
	case <-time.After(60 * time.Second):
		d.stop()
		return nil, fmt.Errorf("jobbie dev not ready after 60s: %s", tail(logPath))
	}
	key, err := os.ReadFile(filepath.Join(dir, "owner.key"))
	if err != nil {
		d.stop()
		return nil, err
	}
	d.ownerKey = strings.TrimSpace(string(key))
	return d, nil
}

// stop asks jobbie dev to stop, and kills it after a few seconds: its
// gateway would wait out the keep-alive connections the in-process
// provider's clients still hold, and the data is thrown away anyway.
func (d *devServer) stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(3 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// freePorts picks n loopback ports free for TCP and UDP, below the
// ephemeral range so no outgoing connection takes one before jobbie binds
// it.
func freePorts(n int) ([]string, error) {
	var out []string
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for tries := 0; len(out) < n; tries++ {
		if tries == 1000 {
			return nil, fmt.Errorf("no %d free ports on 127.0.0.1 between 10000 and 32000", n)
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
		held = append(held, l)
		out = append(out, addr)
	}
	return out, nil
}

// api is the owner's client, for changes made outside Terraform.
func api() *client.Client { return client.New(gatewayURL, ownerKey) }

var nsSeq atomic.Int64

// testNamespace creates a namespace of the test's own and returns its name.
func testNamespace(t *testing.T, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%1e6, nsSeq.Add(1))
	if _, err := api().CreateNamespace(ctx(t), name); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}

// ctx bounds a call made by a test (t may be nil in a CheckDestroy).
func ctx(t *testing.T) context.Context {
	if t == nil {
		return context.Background()
	}
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// accPreCheck skips an acceptance test unless TF_ACC is set, as
// resource.Test would, before the test calls the API itself.
func accPreCheck(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (make test-terraform does) to run it against a real jobbie dev")
	}
}

// accNamespace is accPreCheck, then a fresh namespace for the test.
func accNamespace(t *testing.T, prefix string) string {
	accPreCheck(t)
	return testNamespace(t, prefix)
}

// providerBlock configures the provider for namespace ns (endpoint and
// key come from JOBBIE_URL and JOBBIE_API_KEY).
func providerBlock(ns string) string {
	return fmt.Sprintf("provider \"jobbie\" {\n  namespace = %q\n}\n", ns)
}
