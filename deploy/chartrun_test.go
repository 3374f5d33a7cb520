package deploy

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
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

	corev1 "k8s.io/api/core/v1"
)

// chartPod is one pod of a rendering, run as processes on its own
// loopback address.
type chartPod struct {
	name, ip string
	spec     corev1.PodSpec
	mounts   map[string]string // volume name -> host directory
}

// TestChartRuns runs the chart's default rendering without Kubernetes:
// every pod of every StatefulSet and Deployment as processes on its own
// loopback address, each init container and then the main container with
// the rendered command line. Only what a cluster would provide is filled
// in: $(POD_NAME)-style variables, $HOSTNAME, volumes as directories (the
// CA Secret the operator makes, the chart's Secrets, claims), and DNS (a
// pod's and a Service's name become addresses, dns:<headless service>
// becomes its pods' addresses). All pods start at once, as
// podManagementPolicy Parallel starts them; then every readiness probe
// must pass, and a tenant made with control-0's operator key enqueues
// through one gateway pod and works the job through the other.
func TestChartRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts 11 processes")
	}
	jobbie, podBin := binaries(t)
	const ns = "jobs"
	o := render(t, values(t, nil, nil))
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets")
	if out, err := exec.Command(jobbie, "certs", "ca", "--dir", filepath.Join(secrets, "jobbie-ca")).CombinedOutput(); err != nil {
		t.Fatalf("jobbie certs ca: %v\n%s", err, out)
	}
	for name, s := range o.secrets {
		for k, v := range s.Data {
			writeFile(t, filepath.Join(secrets, name, k), v)
		}
	}

	// Pods and their addresses; DNS as a cluster would answer it.
	base := fmt.Sprintf("127.%d.%d.", 100+rand.IntN(100), 1+rand.IntN(250))
	var pods []*chartPod
	hosts := map[string]string{}      // a pod's or Service's DNS name -> address
	headless := map[string][]string{} // a headless Service -> its pods' addresses
	var stsNames, depNames []string
	for n := range o.statefulSets {
		stsNames = append(stsNames, n)
	}
	for n := range o.deployments {
		depNames = append(depNames, n)
	}
	sort.Strings(stsNames)
	sort.Strings(depNames)
	add := func(name string, spec corev1.PodSpec) *chartPod {
		p := &chartPod{name: name, ip: fmt.Sprintf("%s%d", base, 20+len(pods)), spec: spec, mounts: map[string]string{}}
		pods = append(pods, p)
		return p
	}
	for _, n := range stsNames {
		s := o.statefulSets[n]
		for i := 0; i < int(*s.Spec.Replicas); i++ {
			p := add(fmt.Sprintf("%s-%d", n, i), s.Spec.Template.Spec)
			hosts[p.name+"."+s.Spec.ServiceName+"."+ns+".svc"] = p.ip
			headless[s.Spec.ServiceName] = append(headless[s.Spec.ServiceName], p.ip)
		}
	}
	for _, n := range depNames {
		d := o.deployments[n]
		for i := 0; i < int(*d.Spec.Replicas); i++ {
			add(fmt.Sprintf("%s-x%d", n, i), d.Spec.Template.Spec)
		}
	}
	for name, svc := range o.services { // a ClusterIP Service: one of its pods
		if svc.Spec.ClusterIP == corev1.ClusterIPNone {
			continue
		}
		for _, p := range pods {
			if selects(svc.Spec.Selector, podLabels(o, p)) {
				hosts[name+"."+ns+".svc"] = p.ip
				break
			}
		}
	}

	// Volumes as directories.
	for _, p := range pods {
		for _, v := range p.spec.Volumes {
			d := filepath.Join(dir, "pods", p.name, v.Name)
			switch {
			case v.Secret != nil && len(v.Secret.Items) == 0:
				d = filepath.Join(secrets, v.Secret.SecretName)
			case v.Secret != nil:
				for _, it := range v.Secret.Items {
					b, err := os.ReadFile(filepath.Join(secrets, v.Secret.SecretName, it.Key))
					if err != nil {
						t.Fatal(err)
					}
					writeFile(t, filepath.Join(d, it.Path), b)
				}
			}
			p.mounts[v.Name] = d
		}
		p.mounts["data"] = filepath.Join(dir, "pods", p.name, "data")
		for _, m := range p.mounts {
			if err := os.MkdirAll(m, 0o700); err != nil {
				t.Fatal(err)
			}
		}
	}

	envVar := regexp.MustCompile(`\$\(([A-Z_][A-Z0-9_]*)\)`)
	dnsList := regexp.MustCompile(`dns:([a-z0-9-]+):(\d+)`)
	fqdn := regexp.MustCompile(`[a-z0-9-]+(\.[a-z0-9-]+)*\.` + ns + `\.svc`)
	subst := func(p *chartPod, c corev1.Container, argv []string) []string {
		env := map[string]string{"POD_NAME": p.name, "POD_NAMESPACE": ns, "POD_IP": p.ip}
		mounts := append([]corev1.VolumeMount{}, c.VolumeMounts...)
		sort.Slice(mounts, func(i, j int) bool { return len(mounts[i].MountPath) > len(mounts[j].MountPath) })
		var out []string
		for _, a := range argv {
			a = envVar.ReplaceAllStringFunc(a, func(m string) string {
				if v, ok := env[m[2:len(m)-1]]; ok {
					return v
				}
				return m
			})
			a = strings.ReplaceAll(a, "0.0.0.0:", p.ip+":")
			a = dnsList.ReplaceAllStringFunc(a, func(m string) string {
				sm := dnsList.FindStringSubmatch(m)
				var l []string
				for _, ip := range headless[sm[1]] {
					l = append(l, ip+":"+sm[2])
				}
				return strings.Join(l, ",")
			})
			a = fqdn.ReplaceAllStringFunc(a, func(m string) string {
				if ip, ok := hosts[m]; ok {
					return ip
				}
				t.Errorf("%s: %s does not resolve in the cluster", p.name, m)
				return m
			})
			for _, m := range mounts {
				a = strings.ReplaceAll(a, m.MountPath, p.mounts[m.Name])
			}
			switch a {
			case "/jobbie":
				a = jobbie
			case "/jobbie-pod":
				a = podBin
			}
			out = append(out, a)
		}
		return out
	}
	cmdline := func(p *chartPod, c corev1.Container) []string {
		argv := append(append([]string{}, c.Command...), c.Args...)
		if len(c.Command) == 0 {
			argv = append([]string{"/jobbie"}, c.Args...)
		}
		return subst(p, c, argv)
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
	running := map[string]*exec.Cmd{}
	startPod := func(p *chartPod) {
		c := p.spec.Containers[0]
		argv := cmdline(p, c)
		logs[p.name] = filepath.Join(dir, p.name+".log")
		f, err := os.OpenFile(logs[p.name], os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "HOSTNAME="+p.name)
		cmd.Stdout, cmd.Stderr = f, f
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 10 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		procs = append(procs, cmd)
		running[p.name] = cmd
	}
	for _, p := range pods {
		for _, c := range p.spec.InitContainers {
			argv := cmdline(p, c)
			if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%s init container %s: %v\n%s", p.name, c.Name, err, out)
			}
		}
	}
	for _, p := range pods { // all at once
		startPod(p)
	}
	dump := func() {
		for _, p := range pods {
			if b, err := os.ReadFile(logs[p.name]); err == nil {
				if len(b) > 2500 {
					b = b[len(b)-2500:]
				}
				t.Logf("--- %s\n%s", p.name, b)
			}
		}
	}

	// Every pod's readiness probe, as the kubelet would run it.
	ca := caClient(t, filepath.Join(secrets, "jobbie-ca", "ca.crt"))
	ready := func(p *chartPod) error {
		c := p.spec.Containers[0]
		pr := c.ReadinessProbe
		switch {
		case pr.HTTPGet != nil:
			port := pr.HTTPGet.Port.String()
			for _, cp := range c.Ports {
				if cp.Name == port {
					port = fmt.Sprint(cp.ContainerPort)
				}
			}
			url := fmt.Sprintf("%s://%s:%s%s", strings.ToLower(string(pr.HTTPGet.Scheme)), p.ip, port, pr.HTTPGet.Path)
			if pr.HTTPGet.Scheme == "" {
				url = "http" + url
			}
			return try(ca, "GET", url, "", "", nil)
		case pr.Exec != nil:
			argv := subst(p, c, pr.Exec.Command)
			// The probe runs in the pod, whose loopback is its address.
			for i, a := range argv {
				argv[i] = strings.Replace(a, "://127.0.0.1:", "://"+p.ip+":", 1)
			}
			if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
				return fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))
			}
			return nil
		}
		return fmt.Errorf("no readiness probe")
	}
	start := time.Now()
	pending := map[string]*chartPod{}
	for _, p := range pods {
		pending[p.name] = p
	}
	var last error
	for len(pending) > 0 {
		if time.Since(start) > 150*time.Second {
			dump()
			var names []string
			for n := range pending {
				names = append(names, n)
			}
			sort.Strings(names)
			t.Fatalf("not ready after %s: %v (last: %v)", time.Since(start).Round(time.Second), names, last)
		}
		for n, p := range pending {
			if err := ready(p); err == nil {
				delete(pending, n)
			} else {
				last = fmt.Errorf("%s: %v", n, err)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("all %d pods ready after %s", len(pods), time.Since(start).Round(100*time.Millisecond))
	// Each group was started by its pod 0, which its other pods joined.
	for _, n := range stsNames {
		for i := 0; i < int(*o.statefulSets[n].Spec.Replicas); i++ {
			name := fmt.Sprintf("%s-%d", n, i)
			b, _ := os.ReadFile(logs[name])
			want := "ready peers"
			if i == 0 {
				want = "ordinal 0 and no peer ready"
			}
			if !bytes.Contains(b, []byte(want)) {
				dump()
				t.Fatalf("%s: its log does not say %q", name, want)
			}
		}
	}

	// A tenant through control's Service, a job through one gateway pod,
	// worked through the other.
	opKey, err := os.ReadFile(filepath.Join(dir, "pods", stsNames[0]+"-0", "data", "operator.key"))
	if err != nil || !strings.HasSuffix(stsNames[0], "-control") {
		dump()
		t.Fatalf("control-0's operator key: %v (%s)", err, stsNames[0])
	}
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
	var tenant struct {
		OwnerKey string `json:"owner_key"`
	}
	ctl := hosts["prod-jobbie-control."+ns+".svc"]
	eventually("create a tenant through control's Service", func() error {
		return try(ca, "POST", "https://"+ctl+":8081/control/v1/tenants", strings.TrimSpace(string(opKey)), `{"name":"acme"}`, &tenant)
	})
	gws := []string{}
	for _, p := range pods {
		if strings.Contains(p.name, "-gateway-") {
			gws = append(gws, p.ip)
		}
	}
	if len(gws) != 2 {
		t.Fatalf("%d gateway pods", len(gws))
	}
	var enq, job struct {
		JobID string `json:"job_id"`
	}
	eventually("enqueue through the first gateway", func() error {
		return try(http.DefaultClient, "POST", "http://"+gws[0]+":8080/api/v1/enqueue", tenant.OwnerKey, `{"queue":"chart.check","payload":{}}`, &enq)
	})
	call(t, http.DefaultClient, "POST", "http://"+gws[1]+":8080/api/v1/fetch", tenant.OwnerKey,
		`{"queues":["chart.check"],"worker_id":"w1","timeout":10,"lease_duration":60}`, &job)
	if job.JobID != enq.JobID {
		t.Fatalf("the second gateway fetched %q, want %s", job.JobID, enq.JobID)
	}
	call(t, http.DefaultClient, "POST", "http://"+gws[1]+":8080/api/v1/ack/"+job.JobID, tenant.OwnerKey, `{}`, nil)

	// Pod 0 of a shard cluster and of control comes back with an empty
	// volume: each joins the group its peers hold, and serves.
	for _, n := range stsNames {
		p := pods[0]
		for _, q := range pods {
			if q.name == n+"-0" {
				p = q
			}
		}
		cmd := running[p.name]
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if err := os.RemoveAll(filepath.Join(p.mounts["data"], "data")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(logs[p.name], nil, 0o600); err != nil {
			t.Fatal(err)
		}
		startPod(p)
		eventually(p.name+" back with an empty volume, ready", func() error { return ready(p) })
		b, _ := os.ReadFile(logs[p.name])
		if !bytes.Contains(b, []byte("ready peers")) || bytes.Contains(b, []byte("ordinal 0 and no peer ready")) {
			dump()
			t.Fatalf("%s came back with an empty volume and did not join its peers", p.name)
		}
	}
	// The job's history is still there, through both gateways.
	for _, gw := range gws {
		eventually("read the job through "+gw, func() error {
			return try(http.DefaultClient, "GET", "http://"+gw+":8080/api/v1/jobs/"+job.JobID, tenant.OwnerKey, "", nil)
		})
	}
}

// podLabels are the labels of the workload template a pod came from.
func podLabels(o *objects, p *chartPod) map[string]string {
	for _, w := range o.workloads() {
		if strings.HasPrefix(p.name, w.name+"-") && len(w.tmpl.Spec.Containers) > 0 && w.tmpl.Spec.Containers[0].Name == p.spec.Containers[0].Name {
			return w.tmpl.Labels
		}
	}
	return nil
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
