package deploy

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
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

// fakeCluster runs renderings of the chart without Kubernetes: each pod
// as processes on its own loopback address (127.a.b.20 and up, a and b
// drawn at random so that runs side by side do not meet), init containers
// first, then the main container with the rendered command line. Only
// what a cluster provides is filled in: the pod's variables (fieldRef and
// secretKeyRef environment, $(VAR) in command lines), $HOSTNAME, volumes
// as directories (Secrets, claims), and DNS: a pod's and a Service's name
// become addresses (a Service other than headless: its first pod, as a
// load balancer would pick one), dns:<headless service> its pods' (names
// a certificate is issued for stay names).
type fakeCluster struct {
	t              *testing.T
	jobbie, podBin string
	dir, base      string
	ctx            context.Context
	pods           []*chartPod
	hosts          map[string]string   // <name>.<namespace>.svc -> address
	headless       map[string][]string // <service>.<namespace> -> its pods' addresses
	logs           map[string]string
	running        map[string]*exec.Cmd
}

// chartPod is one pod of a rendering.
type chartPod struct {
	name, ip, ns string
	labels       map[string]string
	spec         corev1.PodSpec
	mounts       map[string]string // volume name -> host directory
}

func newFakeCluster(t *testing.T) *fakeCluster {
	jobbie, podBin := binaries(t)
	ctx, cancel := context.WithCancel(context.Background())
	c := &fakeCluster{t: t, jobbie: jobbie, podBin: podBin, dir: t.TempDir(), ctx: ctx,
		base:  fmt.Sprintf("127.%d.%d.", 100+rand.IntN(100), 1+rand.IntN(250)),
		hosts: map[string]string{}, headless: map[string][]string{}, logs: map[string]string{}, running: map[string]*exec.Cmd{}}
	t.Cleanup(func() {
		cancel()
		for _, p := range c.running {
			_ = p.Wait()
		}
	})
	return c
}

// secretFile is where key of Secret name in namespace ns lives.
func (c *fakeCluster) secretFile(ns, name, key string) string {
	return filepath.Join(c.dir, "secrets", ns, name, key)
}

// install adds a rendering's pods in namespace ns: its Secrets (those made
// outside the chart must be written first), addresses, DNS and volumes.
func (c *fakeCluster) install(o *objects, ns string) []*chartPod {
	t := c.t
	for name, s := range o.secrets {
		for k, v := range s.Data {
			writeFile(t, c.secretFile(ns, name, k), v)
		}
	}
	var pods []*chartPod
	add := func(name string, tmpl corev1.PodTemplateSpec) *chartPod {
		p := &chartPod{name: name, ip: fmt.Sprintf("%s%d", c.base, 20+len(c.pods)), ns: ns, labels: tmpl.Labels,
			spec: tmpl.Spec, mounts: map[string]string{}}
		c.pods = append(c.pods, p)
		pods = append(pods, p)
		return p
	}
	for _, n := range sortedKeys(o.statefulSets) {
		s := o.statefulSets[n]
		for i := 0; i < int(*s.Spec.Replicas); i++ {
			p := add(fmt.Sprintf("%s-%d", n, i), s.Spec.Template)
			c.hosts[p.name+"."+s.Spec.ServiceName+"."+ns+".svc"] = p.ip
			c.headless[s.Spec.ServiceName+"."+ns] = append(c.headless[s.Spec.ServiceName+"."+ns], p.ip)
		}
	}
	for _, n := range sortedKeys(o.deployments) {
		d := o.deployments[n]
		for i := 0; i < int(*d.Spec.Replicas); i++ {
			add(fmt.Sprintf("%s-x%d", n, i), d.Spec.Template)
		}
	}
	for name, svc := range o.services {
		if svc.Spec.ClusterIP == corev1.ClusterIPNone {
			continue
		}
		for _, p := range pods {
			if selects(svc.Spec.Selector, p.labels) {
				c.hosts[name+"."+ns+".svc"] = p.ip
				break
			}
		}
	}
	for _, p := range pods {
		for _, v := range p.spec.Volumes {
			d := filepath.Join(c.dir, "pods", p.name, v.Name)
			switch {
			case v.Secret != nil && len(v.Secret.Items) == 0:
				d = filepath.Dir(c.secretFile(ns, v.Secret.SecretName, "x"))
			case v.Secret != nil:
				for _, it := range v.Secret.Items {
					b, err := os.ReadFile(c.secretFile(ns, v.Secret.SecretName, it.Key))
					if err != nil {
						t.Fatal(err)
					}
					writeFile(t, filepath.Join(d, it.Path), b)
				}
			}
			p.mounts[v.Name] = d
		}
		p.mounts["data"] = filepath.Join(c.dir, "pods", p.name, "data")
		for _, m := range p.mounts {
			if err := os.MkdirAll(m, 0o700); err != nil {
				t.Fatal(err)
			}
		}
	}
	return pods
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

var (
	envVar  = regexp.MustCompile(`\$\(([A-Z_][A-Z0-9_]*)\)`)
	dnsList = regexp.MustCompile(`dns:([a-z0-9-]+):(\d+)`)
	svcName = regexp.MustCompile(`[a-z0-9-]+(\.[a-z0-9-]+)*\.svc`)
)

// subst is argv as it runs in pod p's container ctr.
func (c *fakeCluster) subst(p *chartPod, ctr corev1.Container, argv []string) []string {
	env := map[string]string{}
	for _, e := range ctr.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil:
			env[e.Name] = map[string]string{"metadata.name": p.name, "metadata.namespace": p.ns, "status.podIP": p.ip}[e.ValueFrom.FieldRef.FieldPath]
		case e.ValueFrom.SecretKeyRef != nil:
			r := e.ValueFrom.SecretKeyRef
			b, err := os.ReadFile(c.secretFile(p.ns, r.Name, r.Key))
			if err != nil {
				c.t.Fatalf("%s env %s: %v", p.name, e.Name, err)
			}
			env[e.Name] = string(b)
		}
	}
	mounts := append([]corev1.VolumeMount{}, ctr.VolumeMounts...)
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
			for _, ip := range c.headless[sm[1]+"."+p.ns] {
				l = append(l, ip+":"+sm[2])
			}
			return strings.Join(l, ",")
		})
		if !strings.HasPrefix(a, "--host=") { // a name a certificate carries is not resolved
			a = svcName.ReplaceAllStringFunc(a, func(m string) string {
				if ip, ok := c.hosts[m]; ok {
					return ip
				}
				c.t.Errorf("%s: %s does not resolve in the cluster", p.name, m)
				return m
			})
		}
		for _, m := range mounts {
			a = strings.ReplaceAll(a, m.MountPath, p.mounts[m.Name])
		}
		switch a {
		case "/jobbie":
			a = c.jobbie
		case "/jobbie-pod":
			a = c.podBin
		}
		out = append(out, a)
	}
	return out
}

func (c *fakeCluster) cmdline(p *chartPod, ctr corev1.Container) []string {
	argv := append(append([]string{}, ctr.Command...), ctr.Args...)
	if len(ctr.Command) == 0 {
		argv = append([]string{"/jobbie"}, ctr.Args...) // the image's entrypoint
	}
	return c.subst(p, ctr, argv)
}

// initPod runs p's init containers, in order.
func (c *fakeCluster) initPod(p *chartPod) {
	for _, ctr := range p.spec.InitContainers {
		argv := c.cmdline(p, ctr)
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			c.t.Fatalf("%s init container %s: %v\n%s", p.name, ctr.Name, err, out)
		}
	}
}

// start starts p's main container, its output appended to its log.
func (c *fakeCluster) start(p *chartPod) {
	t := c.t
	argv := c.cmdline(p, p.spec.Containers[0])
	c.logs[p.name] = filepath.Join(c.dir, p.name+".log")
	f, err := os.OpenFile(c.logs[p.name], os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(c.ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "HOSTNAME="+p.name)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c.running[p.name] = cmd
}

// stop ends p's main container as the kubelet would (SIGTERM) and starts
// its log afresh.
func (c *fakeCluster) stop(p *chartPod) {
	cmd := c.running[p.name]
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	delete(c.running, p.name)
	if err := os.WriteFile(c.logs[p.name], nil, 0o600); err != nil {
		c.t.Fatal(err)
	}
}

func (c *fakeCluster) log(p *chartPod) []byte {
	b, _ := os.ReadFile(c.logs[p.name])
	return b
}

// logSays fails the test, showing every pod's log, unless p's log
// contains want.
func (c *fakeCluster) logSays(p *chartPod, want string) {
	c.t.Helper()
	if !bytes.Contains(c.log(p), []byte(want)) {
		c.dump()
		c.t.Fatalf("%s: its log does not say %q", p.name, want)
	}
}

func (c *fakeCluster) dump() {
	for _, p := range c.pods {
		if b := c.log(p); len(b) > 0 {
			if len(b) > 2500 {
				b = b[len(b)-2500:]
			}
			c.t.Logf("--- %s\n%s", p.name, b)
		}
	}
}

// ready runs p's readiness probe as the kubelet would; HTTPS probes trust
// caFile.
func (c *fakeCluster) ready(p *chartPod, caFile string) error {
	ctr := p.spec.Containers[0]
	pr := ctr.ReadinessProbe
	switch {
	case pr.HTTPGet != nil:
		port := pr.HTTPGet.Port.String()
		for _, cp := range ctr.Ports {
			if cp.Name == port {
				port = fmt.Sprint(cp.ContainerPort)
			}
		}
		scheme := strings.ToLower(string(pr.HTTPGet.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		return try(caClient(c.t, caFile), "GET", fmt.Sprintf("%s://%s:%s%s", scheme, p.ip, port, pr.HTTPGet.Path), "", "", nil)
	case pr.Exec != nil:
		argv := c.subst(p, ctr, pr.Exec.Command)
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

// waitReady waits for every pod's readiness probe to pass.
func (c *fakeCluster) waitReady(pods []*chartPod, caFile string, limit time.Duration) time.Duration {
	start := time.Now()
	pending := map[string]*chartPod{}
	for _, p := range pods {
		pending[p.name] = p
	}
	var last error
	for len(pending) > 0 {
		if time.Since(start) > limit {
			c.dump()
			c.t.Fatalf("not ready after %s: %v (last: %v)", time.Since(start).Round(time.Second), sortedKeys(pending), last)
		}
		for n, p := range pending {
			if err := c.ready(p, caFile); err == nil {
				delete(pending, n)
			} else {
				last = fmt.Errorf("%s: %v", n, err)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return time.Since(start)
}

// eventually retries f for up to a minute.
func (c *fakeCluster) eventually(what string, f func() error) {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.dump()
			c.t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func (c *fakeCluster) pod(name string) *chartPod {
	for _, p := range c.pods {
		if p.name == name {
			return p
		}
	}
	c.t.Fatalf("no pod %s", name)
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
