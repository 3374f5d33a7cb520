package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

const chartDir = "helm/jobbie"

// objects is one rendering of the chart, each manifest strictly decoded
// into its Kubernetes type.
type objects struct {
	services     map[string]*corev1.Service
	secrets      map[string]*corev1.Secret
	statefulSets map[string]*appsv1.StatefulSet
	deployments  map[string]*appsv1.Deployment
	pdbs         map[string]*policyv1.PodDisruptionBudget
}

// values reads values files (relative to the chart) and applies
// overrides, as `helm -f … --set …` would.
func values(t *testing.T, files []string, set map[string]any) map[string]any {
	t.Helper()
	vals := map[string]any{}
	for _, f := range files {
		v, err := chartutil.ReadValuesFile(chartDir + "/" + f)
		if err != nil {
			t.Fatal(err)
		}
		vals = chartutil.CoalesceTables(v.AsMap(), vals)
	}
	for path, v := range set {
		m := vals
		parts := strings.Split(path, ".")
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[parts[len(parts)-1]] = v
	}
	return vals
}

// render renders the chart client-side, as `helm template` does, and
// lints it with the same values; any lint warning or error fails.
func render(t *testing.T, vals map[string]any) *objects {
	t.Helper()
	manifest, err := renderManifest(t, vals)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	l := lint.AllWithKubeVersion(chartDir, vals, "jobs", kubeVersion(t))
	for _, m := range l.Messages {
		if m.Severity >= support.WarningSev {
			t.Errorf("lint: %s", m)
		}
	}
	return decode(t, manifest)
}

// kubeVersion is the Kubernetes version rendered for: the oldest the
// chart's kubeVersion admits moves with it.
func kubeVersion(t *testing.T) *chartutil.KubeVersion {
	t.Helper()
	kv, err := chartutil.ParseKubeVersion("v1.30.0")
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func renderErr(t *testing.T, vals map[string]any) error {
	_, err := renderManifest(t, vals)
	return err
}

func renderManifest(t *testing.T, vals map[string]any) (string, error) {
	t.Helper()
	rel, err := install(t, vals)
	if err != nil {
		return "", err
	}
	return rel.Manifest, nil
}

// renderNotes is what `helm install` prints after the manifests
// (templates/NOTES.txt).
func renderNotes(t *testing.T, vals map[string]any) string {
	t.Helper()
	rel, err := install(t, vals)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return rel.Info.Notes
}

// install is a client-side dry run of the chart's install as release
// prod in namespace jobs.
func install(t *testing.T, vals map[string]any) (*release.Release, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	inst := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	inst.DryRun, inst.ClientOnly, inst.Replace = true, true, true
	inst.ReleaseName, inst.Namespace = "prod", "jobs"
	inst.KubeVersion = kubeVersion(t)
	return inst.Run(ch, vals)
}

func decode(t *testing.T, manifest string) *objects {
	t.Helper()
	o := &objects{
		services: map[string]*corev1.Service{}, secrets: map[string]*corev1.Secret{},
		statefulSets: map[string]*appsv1.StatefulSet{}, deployments: map[string]*appsv1.Deployment{},
		pdbs: map[string]*policyv1.PodDisruptionBudget{},
	}
	for _, doc := range strings.Split(manifest, "\n---") {
		js, err := yaml.YAMLToJSONStrict([]byte(doc)) // a duplicate key is an error
		if err != nil {
			t.Fatalf("manifest is not YAML: %v\n%s", err, doc)
		}
		var head struct{ APIVersion, Kind string }
		if err := json.Unmarshal(js, &head); err != nil || head.Kind == "" {
			if strings.TrimSpace(string(js)) == "null" {
				continue // a comment-only document
			}
			t.Fatalf("manifest without kind: %v\n%s", err, doc)
		}
		var name string
		switch head.APIVersion + " " + head.Kind {
		case "v1 Service":
			v := &corev1.Service{}
			name = strict(t, js, v, &v.ObjectMeta.Name)
			o.services[name] = v
		case "v1 Secret":
			v := &corev1.Secret{}
			name = strict(t, js, v, &v.ObjectMeta.Name)
			o.secrets[name] = v
		case "apps/v1 StatefulSet":
			v := &appsv1.StatefulSet{}
			name = strict(t, js, v, &v.ObjectMeta.Name)
			o.statefulSets[name] = v
		case "apps/v1 Deployment":
			v := &appsv1.Deployment{}
			name = strict(t, js, v, &v.ObjectMeta.Name)
			o.deployments[name] = v
		case "policy/v1 PodDisruptionBudget":
			v := &policyv1.PodDisruptionBudget{}
			name = strict(t, js, v, &v.ObjectMeta.Name)
			o.pdbs[name] = v
		default:
			t.Fatalf("unexpected object %s %s", head.APIVersion, head.Kind)
		}
		if name == "" {
			t.Fatalf("%s without a name", head.Kind)
		}
	}
	return o
}

// strict decodes js into v, refusing fields the type does not have (a
// misspelt or misplaced key that Kubernetes would drop or refuse).
func strict(t *testing.T, js []byte, v any, name *string) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%T: %v\n%s", v, err, js)
	}
	return *name
}

// workload is a pod template and who owns it.
type workload struct {
	kind, name string
	replicas   int32
	tmpl       corev1.PodTemplateSpec
}

func (o *objects) workloads() []workload {
	var ws []workload
	for n, s := range o.statefulSets {
		ws = append(ws, workload{"StatefulSet", n, *s.Spec.Replicas, s.Spec.Template})
	}
	for n, d := range o.deployments {
		ws = append(ws, workload{"Deployment", n, *d.Spec.Replicas, d.Spec.Template})
	}
	return ws
}

func selects(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// check asserts what every rendering must hold. existing names the
// Secrets the values say are made outside the chart.
func (o *objects) check(t *testing.T, existing map[string]bool) {
	t.Helper()
	for name, s := range o.statefulSets {
		svc := o.services[s.Spec.ServiceName]
		switch {
		case svc == nil:
			t.Errorf("StatefulSet %s: serviceName %q is not a rendered Service", name, s.Spec.ServiceName)
		case svc.Spec.ClusterIP != corev1.ClusterIPNone:
			t.Errorf("StatefulSet %s: Service %s is not headless", name, svc.Name)
		case !svc.Spec.PublishNotReadyAddresses:
			t.Errorf("StatefulSet %s: Service %s hides not-ready pods from DNS, which peers need to find each other", name, svc.Name)
		case !selects(svc.Spec.Selector, s.Spec.Template.Labels):
			t.Errorf("StatefulSet %s: Service %s does not select its pods", name, svc.Name)
		}
		if !selects(s.Spec.Selector.MatchLabels, s.Spec.Template.Labels) {
			t.Errorf("StatefulSet %s: selector does not match its template", name)
		}
		claims := map[string]bool{}
		for _, c := range s.Spec.VolumeClaimTemplates {
			claims[c.Name] = true
			if c.Spec.Resources.Requests.Storage().IsZero() {
				t.Errorf("StatefulSet %s: claim %s requests no storage", name, c.Name)
			}
		}
		o.checkPod(t, "StatefulSet "+name, s.Spec.Template.Spec, claims, existing)
	}
	for name, d := range o.deployments {
		if !selects(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
			t.Errorf("Deployment %s: selector does not match its template", name)
		}
		o.checkPod(t, "Deployment "+name, d.Spec.Template.Spec, nil, existing)
	}
	for name, svc := range o.services {
		n := 0
		for _, w := range o.workloads() {
			if selects(svc.Spec.Selector, w.tmpl.Labels) {
				n++
				checkTargetPorts(t, "Service "+name, svc, w.tmpl.Spec)
			}
		}
		if n != 1 {
			t.Errorf("Service %s selects the pods of %d workloads, want 1", name, n)
		}
	}
	for name, p := range o.pdbs {
		var hit []workload
		for _, w := range o.workloads() {
			if selects(p.Spec.Selector.MatchLabels, w.tmpl.Labels) {
				hit = append(hit, w)
			}
		}
		if len(hit) != 1 {
			t.Errorf("PodDisruptionBudget %s selects the pods of %d workloads, want 1", name, len(hit))
			continue
		}
		if p.Spec.MaxUnavailable == nil || p.Spec.MaxUnavailable.IntValue() != 1 {
			t.Errorf("PodDisruptionBudget %s: maxUnavailable %v, want 1 (a Raft group keeps its quorum)", name, p.Spec.MaxUnavailable)
		}
		if hit[0].replicas < 2 {
			t.Errorf("PodDisruptionBudget %s guards %s %s of %d replica(s): it would block every drain", name, hit[0].kind, hit[0].name, hit[0].replicas)
		}
	}
	for _, w := range o.workloads() {
		if w.replicas < 2 || !o.pdbCovers(w.tmpl.Labels) {
			if w.replicas >= 2 {
				t.Errorf("%s %s: %d replicas and no PodDisruptionBudget", w.kind, w.name, w.replicas)
			}
		}
	}
}

func (o *objects) pdbCovers(labels map[string]string) bool {
	for _, p := range o.pdbs {
		if selects(p.Spec.Selector.MatchLabels, labels) {
			return true
		}
	}
	return false
}

func checkTargetPorts(t *testing.T, what string, svc *corev1.Service, pod corev1.PodSpec) {
	t.Helper()
	for _, sp := range svc.Spec.Ports {
		found := false
		for _, c := range pod.Containers {
			for _, cp := range c.Ports {
				proto := sp.Protocol
				if proto == "" {
					proto = corev1.ProtocolTCP
				}
				cproto := cp.Protocol
				if cproto == "" {
					cproto = corev1.ProtocolTCP
				}
				if cp.Name == sp.TargetPort.String() && proto == cproto {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s: port %s targets %s, which no container declares (protocol %s)", what, sp.Name, sp.TargetPort.String(), sp.Protocol)
		}
	}
}

func (o *objects) checkPod(t *testing.T, what string, pod corev1.PodSpec, claims, existing map[string]bool) {
	t.Helper()
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("%s: the pod must run as non-root (runAsNonRoot and a non-zero runAsUser)", what)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("%s: mounts a service account token it has no use for", what)
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
		if v.Secret != nil {
			o.checkSecret(t, what+" volume "+v.Name, v.Secret.SecretName, v.Secret.Items, existing)
		}
	}
	all := append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...)
	for _, c := range all {
		cw := what + " container " + c.Name
		sc := c.SecurityContext
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: wants readOnlyRootFilesystem and no privilege escalation", cw)
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
			t.Errorf("%s: no CPU or memory request", cw)
		}
		for _, m := range c.VolumeMounts {
			if _, ok := vols[m.Name]; !ok && !claims[m.Name] {
				t.Errorf("%s: mounts %q, which is neither a volume nor a claim", cw, m.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				r := e.ValueFrom.SecretKeyRef
				o.checkSecret(t, cw+" env "+e.Name, r.Name, []corev1.KeyToPath{{Key: r.Key}}, existing)
			}
		}
	}
	for _, c := range pod.Containers {
		cw := what + " container " + c.Name
		ports := map[string]int32{}
		for _, p := range c.Ports {
			if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP {
				ports[p.Name] = p.ContainerPort
			}
		}
		checkProbe(t, cw+" readinessProbe", c.ReadinessProbe, "/readyz", ports)
		checkProbe(t, cw+" livenessProbe", c.LivenessProbe, "/healthz", ports)
	}
}

// checkProbe: an HTTP probe of path on a declared port, or jobbie-pod's
// probe of a URL with that path and port (a TCP probe says nothing of
// health).
func checkProbe(t *testing.T, what string, p *corev1.Probe, path string, ports map[string]int32) {
	t.Helper()
	declared := func(port string) bool {
		if _, ok := ports[port]; ok {
			return true
		}
		for _, n := range ports {
			if fmt.Sprint(n) == port {
				return true
			}
		}
		return false
	}
	switch {
	case p == nil:
		t.Errorf("%s: missing", what)
	case p.HTTPGet != nil:
		if p.HTTPGet.Path != path || !declared(p.HTTPGet.Port.String()) {
			t.Errorf("%s: GET %s on port %s, want %s on a declared port", what, p.HTTPGet.Path, p.HTTPGet.Port.String(), path)
		}
	case p.Exec != nil:
		cmd := p.Exec.Command
		if len(cmd) < 3 || cmd[0] != "/jobbie-pod" || cmd[1] != "probe" {
			t.Errorf("%s: exec %v, want /jobbie-pod probe", what, cmd)
			return
		}
		url := cmd[len(cmd)-1]
		rest, ok := strings.CutPrefix(url, "https://127.0.0.1:")
		port, gotPath, _ := strings.Cut(rest, "/")
		if !ok || "/"+gotPath != path || !declared(port) {
			t.Errorf("%s: probes %s, want https://127.0.0.1:<declared port>%s", what, url, path)
		}
	default:
		t.Errorf("%s: neither HTTP nor jobbie-pod probe", what)
	}
}

// checkSecret: a referenced Secret is rendered with the keys used, or is
// one the values say exists already.
func (o *objects) checkSecret(t *testing.T, what, name string, items []corev1.KeyToPath, existing map[string]bool) {
	t.Helper()
	if existing[name] {
		return
	}
	s := o.secrets[name]
	if s == nil {
		t.Errorf("%s: Secret %q is neither rendered nor an existingSecret of the values", what, name)
		return
	}
	for _, it := range items {
		if _, ok := s.Data[it.Key]; !ok {
			t.Errorf("%s: Secret %s has no key %q", what, name, it.Key)
		}
	}
}
