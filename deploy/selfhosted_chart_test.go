package deploy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// keyMounts lists the mounts of a container whose Secret volume holds a
// CA's key (ca.key): rendered Secrets by their data, Secrets made outside
// the chart by outside (name -> the keys it holds).
func (o *objects) keyMounts(pod corev1.PodSpec, c corev1.Container, outside map[string][]string) []string {
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	var out []string
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok || v.Secret == nil {
			continue
		}
		var keys []string
		switch {
		case len(v.Secret.Items) > 0:
			for _, it := range v.Secret.Items {
				keys = append(keys, it.Key)
			}
		case o.secrets[v.Secret.SecretName] != nil:
			for k := range o.secrets[v.Secret.SecretName].Data {
				keys = append(keys, k)
			}
		default:
			keys = outside[v.Secret.SecretName]
		}
		if slices.Contains(keys, "ca.key") {
			out = append(out, v.Secret.SecretName)
		}
	}
	return out
}

func hasArgs(t *testing.T, what string, c corev1.Container, want, not []string) {
	t.Helper()
	a := args(c)
	for _, w := range want {
		if !slices.Contains(append(c.Command, c.Args...), w) {
			t.Errorf("%s: %q not in %s", what, w, a)
		}
	}
	for _, n := range not {
		if strings.Contains(a, n) {
			t.Errorf("%s: %q in %s", what, n, a)
		}
	}
}

// TestChartSelfHostedShard: values-selfhosted-shard.yaml runs one shard
// cluster of three nodes that join with one token from a Secret: no
// control, gateways, deployment CA or CA key of any kind; the hosted
// CA's certificate and the token come from Secrets; no Service but its
// headless one and the nodes' local API's, which is the cluster's own
// (ClusterIP) and reaches only that port.
func TestChartSelfHostedShard(t *testing.T) {
	o := render(t, values(t, []string{"values-selfhosted-shard.yaml"}, nil))
	o.check(t, map[string]bool{"jobbie-join-token": true, "jobbie-hosted-ca": true})
	checkFlags(t, o.invocations())
	if len(o.statefulSets) != 1 || len(o.deployments) != 0 {
		t.Fatalf("%d StatefulSets and %d Deployments, want one shard cluster alone", len(o.statefulSets), len(o.deployments))
	}
	for name, svc := range o.services {
		if name == "prod-jobbie-shard-dc1-local-api" {
			if svc.Spec.Type != "" && svc.Spec.Type != corev1.ServiceTypeClusterIP || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "local-api" {
				t.Errorf("Service %s: %+v, want a ClusterIP Service of the local-api port alone", name, svc.Spec)
			}
			continue
		}
		if svc.Spec.ClusterIP != corev1.ClusterIPNone {
			t.Errorf("Service %s is not headless: a self-hosted shard takes no inbound traffic but its local API's", name)
		}
	}
	if _, ok := o.services["prod-jobbie-shard-dc1-local-api"]; !ok {
		t.Error("no Service for the nodes' local API")
	}
	s := o.statefulSets["prod-jobbie-shard-dc1"]
	if s == nil || *s.Spec.Replicas != 3 {
		t.Fatalf("StatefulSet prod-jobbie-shard-dc1: %v", s)
	}
	pod := s.Spec.Template.Spec
	c := container(t, pod, "shard")
	if got := strings.Join(c.Command, " "); got != "/jobbie-pod start --data-dir=/var/lib/jobbie/data --first=--bootstrap -- /jobbie" {
		t.Errorf("command %q: ordinal 0 bootstraps, the others join through gossip", got)
	}
	hasArgs(t, "shard", c, []string{"shard", "--node-id=$(POD_NAME)", "--join-token=$(JOBBIE_JOIN_TOKEN)",
		"--control-url=https://control.jobbie.example.com:8081", "--ca-file=/etc/jobbie/hosted/ca.crt",
		"--join=dns:prod-jobbie-shard-dc1:7301", "--gossip-key-file=/etc/jobbie/gossip/gossip.key",
		"--local-api=0.0.0.0:8080", "--local-api-max-offline=10m"},
		[]string{"--shard-id", "--tls-", "--control=", "--join-http", "--peers", "--tunnel"})
	var tok *corev1.SecretKeySelector
	for _, e := range c.Env {
		if e.Name == "JOBBIE_JOIN_TOKEN" && e.ValueFrom != nil {
			tok = e.ValueFrom.SecretKeyRef
		}
		if strings.Contains(e.Value, "jst_") {
			t.Errorf("env %s holds a token in the pod spec", e.Name)
		}
	}
	if tok == nil || tok.Name != "jobbie-join-token" || tok.Key != "token" {
		t.Errorf("the join token is not from Secret jobbie-join-token's key token: %v", tok)
	}
	if len(pod.InitContainers) != 0 {
		t.Error("init containers; the certificate comes with the join token")
	}
	for _, v := range pod.Volumes {
		if v.Name == "hosted-ca" && (v.Secret == nil || len(v.Secret.Items) != 1 || v.Secret.Items[0].Key != "ca.crt") {
			t.Errorf("hosted-ca volume %v: the hosted CA's ca.crt alone", v.Secret)
		}
	}
	if k := o.keyMounts(pod, c, map[string][]string{"jobbie-hosted-ca": {"ca.crt"}, "jobbie-join-token": {"token"}}); len(k) > 0 {
		t.Errorf("mounts a CA key from %v", k)
	}
	probe := strings.Join(c.ReadinessProbe.Exec.Command, " ")
	if !strings.Contains(probe, "--cert=/var/lib/jobbie/data/selfhosted/node.crt") {
		t.Errorf("readiness probe %q: with the certificate the node joined with", probe)
	}

	// A token and the hosted CA given in the values become Secrets; 1 and
	// 5 nodes render too.
	for _, n := range []int{1, 5} {
		o := render(t, values(t, []string{"values-selfhosted-shard.yaml"}, map[string]any{
			"selfHosted.existingSecret": "", "selfHosted.joinToken": "jst_abc", "selfHosted.hostedCA.existingSecret": "",
			"selfHosted.hostedCA.caCrt": "-----BEGIN CERTIFICATE-----\n", "selfHosted.tunnel": "tunnel.example.com:8443",
			"shards": []any{map[string]any{"id": "dc1", "replicas": n}},
		}))
		o.check(t, nil)
		checkFlags(t, o.invocations())
		if s := o.secrets["prod-jobbie-join-token"]; s == nil || string(s.Data["token"]) != "jst_abc" {
			t.Errorf("%d nodes: the token Secret: %v", n, s)
		}
		if s := o.secrets["prod-jobbie-hosted-ca"]; s == nil || len(s.Data) != 1 || len(s.Data["ca.crt"]) == 0 {
			t.Errorf("%d nodes: the hosted CA Secret: %v", n, s)
		}
		for name, s := range o.secrets {
			if _, ok := s.Data["ca.key"]; ok {
				t.Errorf("%d nodes: Secret %s holds a CA key", n, name)
			}
		}
		st := o.statefulSets["prod-jobbie-shard-dc1"]
		if *st.Spec.Replicas != int32(n) || (len(o.pdbs) == 1) != (n > 1) {
			t.Errorf("%d nodes: %d replicas, %d PodDisruptionBudgets", n, *st.Spec.Replicas, len(o.pdbs))
		}
		hasArgs(t, fmt.Sprintf("%d nodes", n), container(t, st.Spec.Template.Spec, "shard"), []string{"--tunnel=tunnel.example.com:8443"}, nil)
	}
}

// TestChartAcceptsSelfHostedShards: the hosted chart's selfHostedShards
// block gives control the self-hosted CA (key included) and the tunnel
// URL, the gateways a tunnel listener trusting that CA's certificate
// alone, and a Service passing the tunnel's TCP through.
func TestChartAcceptsSelfHostedShards(t *testing.T) {
	outside := map[string][]string{"jobbie-ca": {"ca.crt", "ca.key"}, "jobbie-selfhosted-ca": {"ca.crt", "ca.key"}}
	o := render(t, values(t, nil, map[string]any{
		"selfHostedShards.enabled": true, "selfHostedShards.tunnelURL": "tunnel.jobbie.example.com:8443",
		"selfHostedShards.controlHosts": []any{"control.jobbie.example.com"},
	}))
	o.check(t, map[string]bool{"jobbie-ca": true, "jobbie-selfhosted-ca": true})
	checkFlags(t, o.invocations())
	ctl := o.statefulSets["prod-jobbie-control"].Spec.Template.Spec
	hasArgs(t, "control", container(t, ctl, "control"),
		[]string{"--selfhosted-ca-dir=/etc/jobbie/selfhosted", "--tunnel-url=tunnel.jobbie.example.com:8443"}, nil)
	// Joining checks control's name: its certificates carry the one the
	// nodes use, and a Service passes its https port through.
	hasArgs(t, "control's certificate", ctl.InitContainers[0], []string{"--host=control.jobbie.example.com"}, nil)
	if svc := o.services["prod-jobbie-control-join"]; svc == nil || svc.Spec.Type != corev1.ServiceTypeLoadBalancer ||
		svc.Spec.Ports[0].Port != 8081 || svc.Spec.Ports[0].TargetPort.String() != "http" {
		t.Errorf("control's join Service: %v", svc)
	}
	gw := o.deployments["prod-jobbie-gateway"].Spec.Template.Spec
	g := container(t, gw, "gateway")
	hasArgs(t, "gateway", g, []string{"--tunnel=0.0.0.0:8443", "--selfhosted-ca-file=/etc/jobbie/selfhosted/ca.crt"}, nil)
	// Which CA keys each process sees: control the self-hosted CA's, no
	// other process any; only the init containers the deployment CA's.
	for _, w := range o.workloads() {
		for _, c := range w.tmpl.Spec.Containers {
			want := []string(nil)
			if c.Name == "control" {
				want = []string{"jobbie-selfhosted-ca"}
			}
			if got := o.keyMounts(w.tmpl.Spec, c, outside); !slices.Equal(got, want) {
				t.Errorf("%s container %s mounts the keys of %v, want %v", w.name, c.Name, got, want)
			}
		}
		for _, c := range w.tmpl.Spec.InitContainers {
			if got := o.keyMounts(w.tmpl.Spec, c, outside); !slices.Equal(got, []string{"jobbie-ca"}) {
				t.Errorf("%s init container %s mounts the keys of %v", w.name, c.Name, got)
			}
		}
	}
	svc := o.services["prod-jobbie-tunnel"]
	if svc == nil || svc.Spec.Type != corev1.ServiceTypeLoadBalancer || len(svc.Spec.Ports) != 1 ||
		svc.Spec.Ports[0].Port != 8443 || svc.Spec.Ports[0].TargetPort.String() != "tunnel" || svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Fatalf("tunnel Service: %v", svc)
	}

	// A NodePort and the CA in the values; gateways without control here
	// get the CA's certificate alone.
	crt, key := "-----BEGIN CERTIFICATE-----\n", "-----BEGIN PRIVATE KEY-----\n"
	o = render(t, values(t, nil, map[string]any{
		"selfHostedShards.enabled": true, "selfHostedShards.tunnelURL": "203.0.113.7:30443",
		"selfHostedShards.controlHosts": []any{"203.0.113.7"}, "selfHostedShards.controlService.enabled": false,
		"selfHostedShards.ca.existingSecret": "", "selfHostedShards.ca.caCrt": crt, "selfHostedShards.ca.caKey": key,
		"selfHostedShards.service.type": "NodePort", "selfHostedShards.service.nodePort": 30443,
	}))
	o.check(t, map[string]bool{"jobbie-ca": true})
	if s := o.secrets["prod-jobbie-selfhosted-ca"]; s == nil || string(s.Data["ca.key"]) != key || string(s.Data["ca.crt"]) != crt {
		t.Errorf("the self-hosted CA Secret: %v", s)
	}
	if svc := o.services["prod-jobbie-tunnel"]; svc == nil || svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Spec.Ports[0].NodePort != 30443 {
		t.Errorf("NodePort tunnel Service: %v", svc)
	}
	if o.services["prod-jobbie-control-join"] != nil {
		t.Error("control's join Service although disabled")
	}
	o = render(t, values(t, nil, map[string]any{
		"control.enabled": false, "control.url": "https://control.example.com:8081", "shards": []any{},
		"selfHostedShards.enabled": true, "selfHostedShards.ca.existingSecret": "", "selfHostedShards.ca.caCrt": crt,
	}))
	o.check(t, map[string]bool{"jobbie-ca": true})
	if s := o.secrets["prod-jobbie-selfhosted-ca"]; s == nil || len(s.Data) != 1 || len(s.Data["ca.crt"]) == 0 {
		t.Errorf("gateways alone: the self-hosted CA Secret holds %v, want ca.crt alone", s)
	}

	// Off by default.
	o = render(t, values(t, nil, nil))
	if o.services["prod-jobbie-tunnel"] != nil || o.services["prod-jobbie-control-join"] != nil || strings.Contains(args(container(t, o.deployments["prod-jobbie-gateway"].Spec.Template.Spec, "gateway")), "--tunnel") {
		t.Error("a tunnel without selfHostedShards.enabled")
	}
}

// TestChartSelfHostedRefuses: values that cannot work fail the render,
// naming what is missing.
func TestChartSelfHostedRefuses(t *testing.T) {
	sh := []string{"values-selfhosted-shard.yaml"}
	on := map[string]any{"selfHostedShards.enabled": true, "selfHostedShards.tunnelURL": "t.example.com:8443",
		"selfHostedShards.controlHosts": []any{"c.example.com"}}
	with := func(m map[string]any, k string, v any) map[string]any {
		out := map[string]any{}
		for a, b := range m {
			out[a] = b
		}
		out[k] = v
		return out
	}
	for name, tc := range map[string]struct {
		files []string
		set   map[string]any
		want  string
	}{
		"2 nodes":           {sh, map[string]any{"shards": []any{map[string]any{"id": "dc1", "replicas": 2}}}, "1, 3 or 5"},
		"7 nodes":           {sh, map[string]any{"shards": []any{map[string]any{"id": "dc1", "replicas": 7}}}, "1, 3 or 5"},
		"hosted, 4 nodes":   {nil, map[string]any{"shardDefaults.replicas": 4}, "1, 3 or 5"},
		"two clusters":      {sh, map[string]any{"shards": []any{map[string]any{"id": "a"}, map[string]any{"id": "b"}}}, "one shard cluster"},
		"no hosted CA":      {sh, map[string]any{"selfHosted.hostedCA.existingSecret": ""}, "selfHosted.hostedCA.caCrt"},
		"no tunnel url":     {nil, with(on, "selfHostedShards.tunnelURL", ""), "selfHostedShards.tunnelURL"},
		"no self-hosted CA": {nil, with(on, "selfHostedShards.ca.existingSecret", ""), "selfHostedShards.ca.caCrt"},
		"no control hosts":  {nil, with(on, "selfHostedShards.controlHosts", []any{}), "selfHostedShards.controlHosts"},
	} {
		t.Run(name, func(t *testing.T) {
			err := renderErr(t, values(t, tc.files, tc.set))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("render: %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// TestChartSelfHostedLocalAPITLS: selfHosted.localAPI.tlsSecret mounts a
// kubernetes.io/tls Secret the nodes' local API serves HTTPS with.
func TestChartSelfHostedLocalAPITLS(t *testing.T) {
	o := render(t, values(t, []string{"values-selfhosted-shard.yaml"}, map[string]any{"selfHosted.localAPI.tlsSecret": "dc1-local-api-tls"}))
	o.check(t, map[string]bool{"jobbie-join-token": true, "jobbie-hosted-ca": true, "dc1-local-api-tls": true})
	checkFlags(t, o.invocations())
	pod := o.statefulSets["prod-jobbie-shard-dc1"].Spec.Template.Spec
	hasArgs(t, "shard", container(t, pod, "shard"), []string{"--local-api=0.0.0.0:8080",
		"--local-api-tls-cert=/etc/jobbie/local-api/tls.crt", "--local-api-tls-key=/etc/jobbie/local-api/tls.key"}, nil)
	mounted := false
	for _, v := range pod.Volumes {
		mounted = mounted || v.Secret != nil && v.Secret.SecretName == "dc1-local-api-tls"
	}
	if !mounted {
		t.Error("the nodes do not mount the local API's TLS Secret")
	}
}
