package deploy

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// invocations are the command lines of every container of the chart.
func (o *objects) invocations() []invocation {
	var invs []invocation
	for _, w := range o.workloads() {
		pod := w.tmpl.Spec
		for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
			where := w.kind + " " + w.name + " container " + c.Name
			argv := append(append([]string{}, c.Command...), c.Args...)
			if len(c.Command) == 0 {
				argv = append([]string{"/jobbie"}, c.Args...) // the image's entrypoint
			}
			invs = append(invs, invocation{where, argv})
			for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
				if p != nil && p.Exec != nil {
					invs = append(invs, invocation{where + " probe", p.Exec.Command})
				}
			}
		}
	}
	return invs
}

// args is the container's whole command line, one string.
func args(c corev1.Container) string { return strings.Join(append(c.Command, c.Args...), " ") }

func container(t *testing.T, pod corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	for _, c := range pod.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %s", name)
	return corev1.Container{}
}

// TestChartDefaults: the default values give a 3-node control plane, shard
// clusters s1 and s2 of three nodes and two gateways, each pod with a
// certificate of its own role issued by its init container from the CA
// Secret the operator made (jobbie-ca).
func TestChartDefaults(t *testing.T) {
	o := render(t, values(t, nil, nil))
	o.check(t, map[string]bool{"jobbie-ca": true})
	checkFlags(t, o.invocations())

	ctl := o.statefulSets["prod-jobbie-control"]
	if ctl == nil || *ctl.Spec.Replicas != 3 {
		t.Fatalf("control StatefulSet: %v", ctl)
	}
	c := container(t, ctl.Spec.Template.Spec, "control")
	for _, want := range []string{"/jobbie-pod start --peers=dns:prod-jobbie-control-headless:8081 --data-dir=/var/lib/jobbie/data --join-flag=--join-http",
		"-- /jobbie control", "--data-dir=/var/lib/jobbie/data",
		"--node-id=$(POD_NAME)", "--join=dns:prod-jobbie-control-headless:7946", "--advertise=$(POD_NAME).prod-jobbie-control-headless.$(POD_NAMESPACE).svc"} {
		if !strings.Contains(args(c), want) {
			t.Errorf("control: %q not in %s", want, args(c))
		}
	}
	if strings.Contains(args(c), "--bootstrap") || strings.Contains(args(c), "--join-http=") {
		t.Error("control: --bootstrap or --join-http for every pod; jobbie-pod decides per pod")
	}
	for _, id := range []string{"s1", "s2"} {
		s := o.statefulSets["prod-jobbie-shard-"+id]
		if s == nil || *s.Spec.Replicas != 3 {
			t.Fatalf("shard %s StatefulSet: %v", id, s)
		}
		pod := s.Spec.Template.Spec
		a := args(container(t, pod, "shard"))
		for _, want := range []string{"--shard-id=" + id, "--first=--bootstrap --join-flag=--join-http", "--control=https://prod-jobbie-control.$(POD_NAMESPACE).svc:8081",
			"--join=dns:prod-jobbie-shard-" + id + ":7301,dns:prod-jobbie-control-headless:7946"} {
			if !strings.Contains(a, want) {
				t.Errorf("shard %s: %q not in %s", id, want, a)
			}
		}
		if init := args(pod.InitContainers[0]); !strings.Contains(init, "--role=shard --shard="+id+" --node=$(POD_NAME)") {
			t.Errorf("shard %s: its certificate is not its own node's: %s", id, init)
		}
		// ca.key reaches the init container only.
		for _, m := range container(t, pod, "shard").VolumeMounts {
			if m.Name == "ca-issuer" {
				t.Errorf("shard %s: the process mounts the CA's key", id)
			}
		}
	}
	gw := o.deployments["prod-jobbie-gateway"]
	if gw == nil || *gw.Spec.Replicas != 2 {
		t.Fatalf("gateway Deployment: %v", gw)
	}
	if len(o.pdbs) != 4 {
		t.Errorf("%d PodDisruptionBudgets, want 4 (control, s1, s2, gateways)", len(o.pdbs))
	}
	if o.secrets["prod-jobbie-ca"] != nil {
		t.Error("a CA Secret rendered although pki.existingSecret is set")
	}
	if g := o.secrets["prod-jobbie-gossip"]; g == nil || len(g.Data["gossip.key"]) == 0 {
		t.Error("no gossip key Secret")
	}
}

// TestChartInlineCA: a CA given in the values (from `jobbie certs ca`)
// becomes the chart's Secret; a single control node runs without the Raft
// group's flags; gossip keys given are used as they are.
func TestChartInlineCA(t *testing.T) {
	jobbie, _ := binaries(t)
	dir := t.TempDir()
	if out, err := exec.Command(jobbie, "certs", "ca", "--dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("jobbie certs ca: %v\n%s", err, out)
	}
	crt, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
	key, _ := os.ReadFile(filepath.Join(dir, "ca.key"))
	o := render(t, values(t, nil, map[string]any{
		"pki.existingSecret": "", "pki.caCrt": string(crt), "pki.caKey": string(key),
		"gossip.keys": "00112233445566778899aabbccddeeff\n", "control.replicas": 1,
		"shards": []any{map[string]any{"id": "eu-1", "replicas": 5, "fast": true, "capacity": 500}},
	}))
	o.check(t, nil)
	checkFlags(t, o.invocations())
	if s := o.secrets["prod-jobbie-ca"]; s == nil || string(s.Data["ca.key"]) != string(key) {
		t.Error("the CA Secret does not hold the given CA")
	}
	if g := o.secrets["prod-jobbie-gossip"]; g == nil || string(g.Data["gossip.key"]) != "00112233445566778899aabbccddeeff\n" {
		t.Error("the gossip Secret does not hold the given keys")
	}
	c := container(t, o.statefulSets["prod-jobbie-control"].Spec.Template.Spec, "control")
	if strings.Contains(args(c), "--advertise") || strings.Contains(args(c), "--join-http") {
		t.Errorf("single control node with a group's flags: %s", args(c))
	}
	if len(c.Command) != 0 {
		t.Errorf("single control node runs through %v; it needs no bootstrap check", c.Command)
	}
	s := o.statefulSets["prod-jobbie-shard-eu-1"]
	if s == nil || *s.Spec.Replicas != 5 {
		t.Fatalf("shard eu-1: %v", s)
	}
	a := args(container(t, s.Spec.Template.Spec, "shard"))
	if !strings.Contains(a, "--fast") || !strings.Contains(a, "--capacity=500") {
		t.Errorf("shard eu-1 lost its settings: %s", a)
	}
}

// TestChartRefuses: values that cannot work fail the render, naming what
// is missing.
func TestChartRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		files []string
		set   map[string]any
		want  string
	}{
		"no CA":            {nil, map[string]any{"pki.existingSecret": ""}, "pki.caCrt"},
		"bad shard id":     {nil, map[string]any{"shards": []any{map[string]any{"id": "S_1"}}}, `shards[0].id "S_1"`},
		"no control url":   {nil, map[string]any{"control.enabled": false}, "control.url is required"},
		"self-hosted, url": {[]string{"values-selfhosted-shard.yaml"}, map[string]any{"selfHosted.controlURL": ""}, "selfHosted.controlURL"},
		"self-hosted, token": {[]string{"values-selfhosted-shard.yaml"}, map[string]any{"selfHosted.existingSecret": ""},
			"selfHosted.joinToken"},
		"grpc on metrics' port": {nil, map[string]any{"gateway.grpc.enabled": true, "gateway.grpc.port": 9090}, "gateway.grpc.port 9090"},
	} {
		t.Run(name, func(t *testing.T) {
			err := renderErr(t, values(t, tc.files, tc.set))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("render: %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// TestGossipKeyFormat: a generated gossip key is 32 bytes written as
// base64, as jobbie reads it.
func TestGossipKeyFormat(t *testing.T) {
	o := render(t, values(t, nil, nil))
	k := strings.TrimSpace(string(o.secrets["prod-jobbie-gossip"].Data["gossip.key"]))
	b, err := base64.StdEncoding.DecodeString(k)
	if err != nil || len(b) != 32 {
		t.Errorf("gossip key %q: %d bytes, %v; want 32 as base64", k, len(b), err)
	}
}

// TestChartGatewayPublicTLS: gateway.publicTLS.existingSecret mounts a
// kubernetes.io/tls Secret into the gateways alone, which serve their
// public port over TLS with it and are probed over HTTPS; without it the
// port stays plain HTTP.
func TestChartGatewayPublicTLS(t *testing.T) {
	o := render(t, values(t, nil, map[string]any{"gateway.publicTLS.existingSecret": "jobbie-public-tls"}))
	o.check(t, map[string]bool{"jobbie-ca": true, "jobbie-public-tls": true})
	checkFlags(t, o.invocations())
	pod := o.deployments["prod-jobbie-gateway"].Spec.Template.Spec
	c := container(t, pod, "gateway")
	for _, want := range []string{"--public-tls-cert=/etc/jobbie/public/tls.crt", "--public-tls-key=/etc/jobbie/public/tls.key"} {
		if !strings.Contains(args(c), want) {
			t.Errorf("gateway: %q not in %s", want, args(c))
		}
	}
	if c.ReadinessProbe.HTTPGet.Scheme != corev1.URISchemeHTTPS || c.LivenessProbe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
		t.Errorf("gateway probes over %s and %s, want HTTPS", c.ReadinessProbe.HTTPGet.Scheme, c.LivenessProbe.HTTPGet.Scheme)
	}
	mounted := false
	for _, v := range pod.Volumes {
		if v.Secret != nil && v.Secret.SecretName == "jobbie-public-tls" {
			mounted = true
		}
	}
	if !mounted {
		t.Error("the gateway does not mount the public TLS Secret")
	}
	for name, s := range o.statefulSets {
		for _, v := range s.Spec.Template.Spec.Volumes {
			if v.Secret != nil && v.Secret.SecretName == "jobbie-public-tls" {
				t.Errorf("%s mounts the gateways' public TLS Secret", name)
			}
		}
	}

	plain := container(t, render(t, values(t, nil, nil)).deployments["prod-jobbie-gateway"].Spec.Template.Spec, "gateway")
	if strings.Contains(args(plain), "--public-tls") || plain.ReadinessProbe.HTTPGet.Scheme != corev1.URISchemeHTTP {
		t.Errorf("without publicTLS: %s, probe over %s", args(plain), plain.ReadinessProbe.HTTPGet.Scheme)
	}
}

// TestChartNotesPublicPort: what helm prints of the public port says
// what it speaks: HTTPS with the Secret's certificate when
// gateway.publicTLS is set, plain HTTP (TLS to be put in front) when not.
func TestChartNotesPublicPort(t *testing.T) {
	line := func(notes string) string {
		for _, l := range strings.Split(notes, "\n") {
			if strings.HasPrefix(l, "Jobbie's public API:") {
				return l
			}
		}
		t.Fatalf("no public API line in the notes:\n%s", notes)
		return ""
	}
	plain := line(renderNotes(t, values(t, nil, nil)))
	if want := "Jobbie's public API: service prod-jobbie-gateway, port 80 (plain HTTP: put TLS in front)."; plain != want {
		t.Errorf("without publicTLS:\n got %s\nwant %s", plain, want)
	}
	tls := line(renderNotes(t, values(t, nil, map[string]any{"gateway.publicTLS.existingSecret": "jobbie-public-tls"})))
	if want := "Jobbie's public API: service prod-jobbie-gateway, port 80 (HTTPS, with the certificate of Secret jobbie-public-tls)."; tls != want {
		t.Errorf("with publicTLS:\n got %s\nwant %s", tls, want)
	}
}

// TestChartGatewayGRPC: gateway.grpc.enabled gives the gateways their
// gRPC listener (--grpc-addr), declared as the container port grpc, and
// the gateway Service a port named grpc of the same number (so GET
// /api/v1/info's default URL is right in-cluster), h2c unless the public
// certificate is mounted; off by default, as the gateway's flag is.
func TestChartGatewayGRPC(t *testing.T) {
	grpcPort := func(svc *corev1.Service) *corev1.ServicePort {
		for i, p := range svc.Spec.Ports {
			if p.Name == "grpc" {
				return &svc.Spec.Ports[i]
			}
		}
		return nil
	}
	off := render(t, values(t, nil, nil))
	gw := container(t, off.deployments["prod-jobbie-gateway"].Spec.Template.Spec, "gateway")
	if strings.Contains(args(gw), "--grpc") || grpcPort(off.services["prod-jobbie-gateway"]) != nil {
		t.Errorf("gRPC served by default: %s", args(gw))
	}
	for _, p := range gw.Ports {
		if p.Name == "grpc" {
			t.Error("a grpc container port by default")
		}
	}

	for _, tls := range []bool{false, true} {
		set := map[string]any{"gateway.grpc.enabled": true}
		existing := map[string]bool{"jobbie-ca": true}
		if tls {
			set["gateway.grpc.port"] = 50051
			set["gateway.grpc.publicURL"] = "https://grpc.jobbie.example.com"
			set["gateway.publicTLS.existingSecret"] = "jobbie-public-tls"
			existing["jobbie-public-tls"] = true
		}
		o := render(t, values(t, nil, set))
		o.check(t, existing)
		checkFlags(t, o.invocations())
		want := int32(9091)
		if tls {
			want = 50051
		}
		gw := container(t, o.deployments["prod-jobbie-gateway"].Spec.Template.Spec, "gateway")
		if a := args(gw); !strings.Contains(a, fmt.Sprintf("--grpc-addr=0.0.0.0:%d", want)) {
			t.Errorf("tls %v: no --grpc-addr on %d: %s", tls, want, a)
		}
		if a := args(gw); tls != strings.Contains(a, "--grpc-public-url=https://grpc.jobbie.example.com") {
			t.Errorf("tls %v: --grpc-public-url given %v: %s", tls, tls, a)
		}
		declared := false
		for _, p := range gw.Ports {
			declared = declared || (p.Name == "grpc" && p.ContainerPort == want)
		}
		if !declared {
			t.Errorf("tls %v: no container port grpc %d: %v", tls, want, gw.Ports)
		}
		sp := grpcPort(o.services["prod-jobbie-gateway"])
		switch {
		case sp == nil:
			t.Fatalf("tls %v: the gateway Service has no port grpc", tls)
		case sp.Port != want || sp.TargetPort.String() != "grpc":
			t.Errorf("tls %v: Service port grpc %d → %s, want %d → grpc", tls, sp.Port, sp.TargetPort.String(), want)
		case !tls && (sp.AppProtocol == nil || *sp.AppProtocol != "kubernetes.io/h2c"):
			t.Errorf("h2c port without appProtocol kubernetes.io/h2c: %v", sp.AppProtocol)
		case tls && sp.AppProtocol != nil:
			t.Errorf("TLS port with appProtocol %s", *sp.AppProtocol)
		}
	}
}
