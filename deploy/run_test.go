package deploy

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestComposeRuns runs compose.yaml's services as processes, each on its
// own loopback address (127.a.b.20 and up, a and b drawn at random so
// that runs side by side do not meet) in place of its container, with
// the file's own command lines and health checks: host names become those
// addresses and volumes become directories, nothing else changes. Then a
// tenant made with control1's operator key enqueues a job through gw1
// and works it through gw2.
func TestComposeRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts 11 processes")
	}
	jobbie, pod := binaries(t)
	cf := loadCompose(t)
	dir := t.TempDir()
	var names []string
	for n := range cf.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	ips := map[string]string{}
	base := fmt.Sprintf("127.%d.%d.", 100+rand.IntN(100), 1+rand.IntN(250))
	for i, n := range names {
		ips[n] = fmt.Sprintf("%s%d", base, 20+i)
		if l, err := net.Listen("tcp", ips[n]+":0"); err != nil {
			t.Skipf("cannot bind loopback address %s: %v", ips[n], err)
		} else {
			l.Close()
		}
	}
	// What the operator sets: the addresses nodes dial (each gateway's
	// tunnel) and the one they join control at, which control's
	// certificates carry.
	t.Setenv("JOBBIE_TUNNEL_URL", ips["gw1"]+":8443")
	t.Setenv("JOBBIE_TUNNEL_URL_GW2", ips["gw2"]+":8443")
	t.Setenv("JOBBIE_CONTROL_HOST", ips["control1"])
	cf = loadCompose(t)
	for _, n := range names { // an alias resolves to one of its services
		for _, net := range cf.Services[n].Networks {
			for _, a := range net.Aliases {
				if _, ok := ips[a]; !ok {
					ips[a] = ips[n]
				}
			}
		}
	}
	host := regexp.MustCompile(`(^|[=,/])([a-z][a-z0-9-]*):(\d+)`)
	local := func(svc string, argv []string) []string {
		out := make([]string, 0, len(argv)+1)
		for _, a := range argv {
			a = strings.ReplaceAll(a, "0.0.0.0:", ips[svc]+":")
			a = host.ReplaceAllStringFunc(a, func(m string) string {
				p := host.FindStringSubmatch(m)
				if ip, ok := ips[p[2]]; ok {
					return p[1] + ip + ":" + p[3]
				}
				return m
			})
			a = strings.ReplaceAll(a, "/etc/jobbie/pki", filepath.Join(dir, "pki"))
			a = strings.ReplaceAll(a, "/etc/jobbie/ca", filepath.Join(dir, "ca"))
			a = strings.ReplaceAll(a, "/etc/jobbie/selfhosted", filepath.Join(dir, "selfhosted"))
			a = strings.ReplaceAll(a, "/var/lib/jobbie", filepath.Join(dir, svc))
			switch a {
			case "/jobbie":
				a = jobbie
			case "/jobbie-pod":
				a = pod
			}
			out = append(out, a)
		}
		return out
	}
	for _, d := range append([]string{"pki", "ca", "selfhosted"}, names...) {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	argvOf := func(name string) []string {
		s := cf.Services[name]
		argv := append([]string{"/jobbie"}, s.Command...)
		if len(s.Entrypoint) > 0 {
			argv = append(append([]string{}, s.Entrypoint...), s.Command...)
		}
		return local(name, argv)
	}
	pki := argvOf("pki")
	pki = append(pki[:2], append([]string{"--jobbie=" + jobbie}, pki[2:]...)...)
	if out, err := exec.Command(pki[0], pki[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("pki: %v\n%s", err, out)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var procs []*exec.Cmd
	defer func() {
		cancel()
		for _, p := range procs {
			_ = p.Wait()
		}
	}()
	logs := map[string]string{}
	startSvc := func(n string, argv []string) {
		logs[n] = filepath.Join(dir, n+".log")
		f, err := os.Create(logs[n])
		if err != nil {
			t.Fatal(err)
		}
		p := exec.CommandContext(ctx, argv[0], argv[1:]...)
		p.Stdout, p.Stderr = f, f
		p.Cancel = func() error { return p.Process.Signal(syscall.SIGTERM) }
		p.WaitDelay = 10 * time.Second
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		procs = append(procs, p)
	}
	for _, n := range names {
		if n != "pki" {
			startSvc(n, argvOf(n))
		}
	}
	dump := func() {
		for n := range logs {
			if b, err := os.ReadFile(logs[n]); err == nil {
				if len(b) > 3000 {
					b = b[len(b)-3000:]
				}
				t.Logf("--- %s\n%s", n, b)
			}
		}
	}

	// Every service's own health check passes.
	start := time.Now()
	pending := map[string]bool{}
	for _, n := range names {
		if n != "pki" {
			pending[n] = true
		}
	}
	var last error
	for len(pending) > 0 {
		if time.Since(start) > 150*time.Second {
			dump()
			t.Fatalf("health checks still failing after %s: %v (last: %v)", time.Since(start).Round(time.Second), keys(pending), last)
		}
		for n := range pending {
			hc := local(n, cf.Services[n].Healthcheck.Test[1:])
			if out, err := exec.Command(hc[0], hc[1:]...).CombinedOutput(); err == nil {
				delete(pending, n)
			} else {
				last = fmt.Errorf("%s: %v %s", n, err, bytes.TrimSpace(out))
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("all %d services healthy after %s", len(names)-1, time.Since(start).Round(100*time.Millisecond))

	// A tenant, a job through gw1, worked through gw2.
	opKey, err := os.ReadFile(filepath.Join(dir, "control1", "operator.key"))
	if err != nil {
		dump()
		t.Fatal(err)
	}
	ctl := caClient(t, filepath.Join(dir, "pki", "ca.crt"))
	var tenant struct {
		OwnerKey string `json:"owner_key"`
	}
	// Healthy is not yet registered: the shards register with control's
	// leader within a moment, and a new tenant's key and placement reach
	// the gateway within another; until then these answer 503.
	eventually := func(what string, f func() error) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			err := f()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				dump()
				t.Fatalf("%s: %v", what, err)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	eventually("create a tenant on control1", func() error {
		return try(ctl, "POST", "https://"+ips["control1"]+":8081/control/v1/tenants", strings.TrimSpace(string(opKey)), `{"name":"acme"}`, &tenant)
	})
	if tenant.OwnerKey == "" {
		t.Fatal("no owner key")
	}
	var enq struct {
		JobID string `json:"job_id"`
	}
	eventually("enqueue through gw1", func() error {
		return try(http.DefaultClient, "POST", "http://"+ips["gw1"]+":8080/api/v1/enqueue", tenant.OwnerKey,
			`{"queue":"deploy.check","payload":{"n":1}}`, &enq)
	})
	var job struct {
		JobID string `json:"job_id"`
	}
	call(t, http.DefaultClient, "POST", "http://"+ips["gw2"]+":8080/api/v1/fetch", tenant.OwnerKey,
		`{"queues":["deploy.check"],"worker_id":"w1","timeout":10,"lease_duration":60}`, &job)
	if job.JobID != enq.JobID {
		t.Fatalf("gw2 fetched %q, want the job enqueued through gw1 (%s)", job.JobID, enq.JobID)
	}
	call(t, http.DefaultClient, "POST", "http://"+ips["gw2"]+":8080/api/v1/ack/"+job.JobID, tenant.OwnerKey, `{"result":{"ok":true}}`, nil)

	composeSelfHosted(t, selfHostedRun{jobbie: jobbie, dir: dir, ip: fmt.Sprintf("%s%d", base, 20+len(names)),
		control: "https://" + os.Getenv("JOBBIE_CONTROL_HOST") + ":8081", gateways: []string{"http://" + ips["gw1"] + ":8080", "http://" + ips["gw2"] + ":8080"},
		ownerKey: tenant.OwnerKey, start: startSvc, log: func(n string) []byte { b, _ := os.ReadFile(logs[n]); return b },
		eventually: eventually})
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// caClient trusts servers whose certificate chains to the CA; like
// jobbie's own clients it checks no host name (certificates name roles).
func caClient(t *testing.T, caFile string) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, // the chain is checked below, without a host name
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("no server certificate")
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots})
			return err
		},
	}}}
}

func call(t *testing.T, c *http.Client, method, url, key, body string, out any) {
	t.Helper()
	if err := try(c, method, url, key, body, out); err != nil {
		t.Fatal(err)
	}
}

func try(c *http.Client, method, url, key, body string, out any) error {
	return tryNS(c, "", method, url, key, body, out)
}

// tryNS is try in namespace ns (the X-Jobbie-Namespace header), when set.
func tryNS(c *http.Client, ns, method, url, key, body string, out any) error {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if ns != "" {
		req.Header.Set("X-Jobbie-Namespace", ns)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %s", method, url, resp.Status, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
