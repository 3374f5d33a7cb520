package deploy

import (
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

type composeFile struct {
	Services map[string]composeService `json:"services"`
	Volumes  map[string]any            `json:"volumes"`
}

type composeService struct {
	Image       string                       `json:"image"`
	Hostname    string                       `json:"hostname"`
	Entrypoint  []string                     `json:"entrypoint"`
	Command     []string                     `json:"command"`
	User        string                       `json:"user"`
	ReadOnly    bool                         `json:"read_only"`
	DependsOn   map[string]map[string]string `json:"depends_on"`
	Volumes     []string                     `json:"volumes"`
	Ports       []string                     `json:"ports"`
	Healthcheck *struct {
		Test []string `json:"test"`
	} `json:"healthcheck"`
	Networks map[string]struct {
		Aliases []string `json:"aliases"`
	} `json:"networks"`
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b = interpolate(b)
	var top map[string]any
	if err := yaml.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	for k := range top {
		if k != "services" && k != "volumes" && !strings.HasPrefix(k, "x-") {
			t.Errorf("compose.yaml: top-level key %q", k)
		}
	}
	var cf composeFile
	if err := yaml.Unmarshal(b, &cf); err != nil {
		t.Fatal(err)
	}
	return cf
}

// interpolate expands ${NAME:-default} from the environment, as Compose
// does.
func interpolate(b []byte) []byte {
	re := regexp.MustCompile(`\$\{([A-Z_][A-Z0-9_]*)(?::-([^}]*))?\}`)
	return re.ReplaceAllFunc(b, func(m []byte) []byte {
		sm := re.FindSubmatch(m)
		if v := os.Getenv(string(sm[1])); v != "" {
			return []byte(v)
		}
		return sm[2]
	})
}

// flag is the value of --name=value in argv, or "".
func flag(argv []string, name string) string {
	for _, a := range argv {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

func has(argv []string, name string) bool {
	for _, a := range argv {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// TestCompose checks compose.yaml's wiring: what each service names
// (services, volumes, hosts, certificates) exists, each Raft group is
// started by exactly one node, and every flag is one jobbie has.
func TestCompose(t *testing.T) {
	cf := loadCompose(t)
	var invs []invocation
	issued := map[string]bool{}
	roles := map[string][]string{}
	aliases := map[string]bool{}
	usedVolumes := map[string]bool{}
	for name, s := range cf.Services {
		for _, n := range s.Networks {
			for _, a := range n.Aliases {
				aliases[a] = true
			}
		}
		for _, v := range s.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if _, ok := cf.Volumes[src]; !ok {
				t.Errorf("%s: volume %q is not declared", name, src)
			}
			usedVolumes[src] = true
			if !strings.HasSuffix(v, ":ro") && strings.Contains(v, ":/etc/jobbie/pki") && name != "pki" {
				t.Errorf("%s: mounts the PKI volume writable", name)
			}
			if strings.HasPrefix(v, "ca:") && name != "pki" {
				t.Errorf("%s: mounts the CA's key", name)
			}
			if strings.HasPrefix(v, "selfhosted:") && name != "pki" && (!strings.HasPrefix(name, "control") || !strings.HasSuffix(v, ":ro")) {
				t.Errorf("%s: mounts the self-hosted CA's key (only control signs with it, read-only)", name)
			}
		}
		if !s.ReadOnly || s.User == "" || strings.HasPrefix(s.User, "0") {
			t.Errorf("%s: wants read_only and a non-root user, has %v %q", name, s.ReadOnly, s.User)
		}
		for dep, cond := range s.DependsOn {
			if _, ok := cf.Services[dep]; !ok {
				t.Errorf("%s depends on %q, no such service", name, dep)
			}
			switch cond["condition"] {
			case "service_started", "service_healthy", "service_completed_successfully":
			default:
				t.Errorf("%s depends on %s with condition %q", name, dep, cond["condition"])
			}
			if cond["condition"] == "service_healthy" && cf.Services[dep].Healthcheck == nil {
				t.Errorf("%s waits for %s to be healthy, which has no health check", name, dep)
			}
		}
		argv := append([]string{"/jobbie"}, s.Command...)
		if len(s.Entrypoint) > 0 {
			argv = append(append([]string{}, s.Entrypoint...), s.Command...)
		}
		invs = append(invs, invocation{"compose " + name, argv})
		if name == "pki" {
			for _, id := range s.Command[1:] {
				if strings.HasPrefix(id, "--") {
					continue
				}
				p := strings.Split(id, "/")
				issued[strings.Join(p[1:], "-")] = true
			}
			continue
		}
		if s.Healthcheck == nil {
			t.Errorf("%s: no health check", name)
		} else {
			test := s.Healthcheck.Test
			if len(test) < 2 || test[0] != "CMD" {
				t.Errorf("%s: health check %v, want [CMD /jobbie-pod probe …]", name, test)
			} else {
				invs = append(invs, invocation{"compose " + name + " healthcheck", test[1:]})
				joined := strings.Join(test, " ")
				if !strings.Contains(joined, "/healthz") {
					t.Errorf("%s: health check does not ask /healthz: %s", name, joined)
				}
				if !strings.Contains(joined, "/readyz") {
					t.Errorf("%s: health check does not ask /readyz: %s", name, joined)
				}
			}
		}
		roles[s.Command[0]] = append(roles[s.Command[0]], name)
		host := s.Hostname
		if host != name {
			t.Errorf("%s: hostname %q; the flags below name hosts by service", name, host)
		}
		// Certificates: issued by the pki service, the service's own.
		cert := flag(s.Command, "--tls-cert")
		if want := "/etc/jobbie/pki/" + name + ".crt"; cert != want {
			t.Errorf("%s: --tls-cert %q, want its own %s", name, cert, want)
		}
		for _, f := range []string{"--http", "--raft", "--gossip"} {
			if v := flag(s.Command, f); v != "" && !strings.HasPrefix(v, host+":") && !strings.HasPrefix(v, "0.0.0.0:") {
				t.Errorf("%s: %s=%s binds another host", name, f, v)
			}
		}
		for _, j := range strings.Split(flag(s.Command, "--join"), ",") {
			h, _, _ := strings.Cut(j, ":")
			if _, ok := cf.Services[h]; !ok {
				t.Errorf("%s: joins %q, no such service", name, j)
			}
		}
		if u := flag(s.Command, "--control"); s.Command[0] == "gateway" && strings.Contains(u, ",") {
			t.Errorf("%s: --control %q; a gateway takes one URL", name, u)
		}
		for _, u := range strings.Split(flag(s.Command, "--control"), ",") {
			if u == "" {
				continue
			}
			h := regexp.MustCompile(`^https://([^:/]+)`).FindStringSubmatch(u)
			if h == nil {
				t.Errorf("%s: --control %q is not https", name, u)
			} else if cs, ok := cf.Services[h[1]]; (!ok || cs.Command[0] != "control") && !aliasOf(cf, h[1], "control") {
				t.Errorf("%s: --control names %q, neither a control service nor control's alias", name, h[1])
			}
		}
		for _, j := range strings.Split(flag(s.Command, "--join-http"), ",") {
			h, _, _ := strings.Cut(j, ":")
			if cs, ok := cf.Services[h]; j != "" && (!ok || len(cs.Command) == 0 || cs.Command[0] != s.Command[0]) {
				t.Errorf("%s: --join-http names %q, not a node of its kind", name, j)
			}
		}
	}
	for v := range cf.Volumes {
		if !usedVolumes[v] {
			t.Errorf("volume %s is declared and not used", v)
		}
	}
	for name := range cf.Services {
		if name != "pki" && !issued[name] {
			t.Errorf("%s: no certificate issued for it by the pki service", name)
		}
	}
	// Three control nodes, two shard clusters of three, two gateways; each
	// Raft group started by exactly one of its nodes: a shard node with
	// --bootstrap, a control node without --join-http.
	if len(roles["control"]) != 3 || len(roles["shard"]) != 6 || len(roles["gateway"]) != 2 {
		t.Errorf("roles: %v", roles)
	}
	groups := map[string][]string{}
	for _, name := range append(roles["control"], roles["shard"]...) {
		cmd := cf.Services[name].Command
		g := "control"
		if cmd[0] == "shard" {
			g = "shard " + flag(cmd, "--shard-id")
		}
		if (g == "control" && !has(cmd, "--join-http")) || (g != "control" && has(cmd, "--bootstrap")) {
			groups[g] = append(groups[g], name)
		} else if _, ok := groups[g]; !ok {
			groups[g] = nil
		}
	}
	for g, boot := range groups {
		if len(boot) != 1 {
			sort.Strings(boot)
			t.Errorf("%s is started by %v, want exactly one node", g, boot)
		}
	}
	checkFlags(t, invs)
}

func aliasOf(cf composeFile, alias, role string) bool {
	n := 0
	for _, s := range cf.Services {
		if len(s.Command) == 0 || s.Command[0] != role {
			continue
		}
		for _, net := range s.Networks {
			for _, a := range net.Aliases {
				if a == alias {
					n++
				}
			}
		}
	}
	return n > 0
}

// TestComposeValidates runs a Compose implementation's own validation of
// the file where one is installed (docker-compose, or podman-compose).
func TestComposeValidates(t *testing.T) {
	for _, tool := range [][]string{{"docker-compose", "-f", "compose.yaml", "config", "-q"}, {"podman-compose", "-f", "compose.yaml", "config"}} {
		if _, err := exec.LookPath(tool[0]); err != nil {
			continue
		}
		if out, err := exec.Command(tool[0], tool[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(tool, " "), err, out)
		}
		return
	}
	t.Skip("neither docker-compose nor podman-compose is installed; TestCompose checks the file's references")
}

// TestDockerfiles: both images run jobbie as non-root from a static build,
// out of paths that exist.
func TestDockerfiles(t *testing.T) {
	multi, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	local, err := os.ReadFile("Dockerfile.local")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]string{"Dockerfile": string(multi), "Dockerfile.local": string(local)} {
		froms := regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(b, -1)
		last := froms[len(froms)-1][1]
		if last != "scratch" && !strings.HasPrefix(last, "gcr.io/distroless/static") {
			t.Errorf("%s: final stage FROM %s, want scratch or distroless/static", name, last)
		}
		if !regexp.MustCompile(`(?m)^USER 65532:65532$`).MatchString(b) {
			t.Errorf("%s: does not run as the nonroot user", name)
		}
		if !strings.Contains(b, `ENTRYPOINT ["/jobbie"]`) {
			t.Errorf("%s: entrypoint is not /jobbie", name)
		}
	}
	if !strings.Contains(string(multi), "CGO_ENABLED=0") {
		t.Error("Dockerfile: not a static (CGO_ENABLED=0) build")
	}
	for _, p := range []string{"../cmd/jobbie", "pod", "../gateway/console/package-lock.json"} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("Dockerfile builds from %s: %v", p, err)
		}
	}
	// What the image holds, which compose and the chart run.
	for _, want := range []string{"/jobbie-pod", "/out/jobbie "} {
		if !strings.Contains(string(multi), want) {
			t.Errorf("Dockerfile: %q missing", want)
		}
	}
	if !strings.Contains(string(local), "COPY jobbie jobbie-pod /") {
		t.Error("Dockerfile.local: does not copy jobbie and jobbie-pod")
	}
}
