package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

var bins struct {
	once        sync.Once
	dir         string // where they are built, removed after the tests
	jobbie, pod string
	err         error
	help        sync.Map // command -> map[string]bool
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bins.dir != "" {
		_ = os.RemoveAll(bins.dir)
	}
	os.Exit(code)
}

// binaries are $JOBBIE_BIN (or jobbie built from this repository) and
// jobbie-pod built from deploy/pod.
func binaries(t *testing.T) (jobbie, pod string) {
	t.Helper()
	bins.once.Do(func() {
		dir, err := os.MkdirTemp("", "jobbie-deploy-test")
		if err != nil {
			bins.err = err
			return
		}
		bins.dir = dir
		bins.jobbie = os.Getenv("JOBBIE_BIN")
		if bins.jobbie == "" {
			bins.jobbie = filepath.Join(dir, "jobbie")
			if bins.err = gobuild("..", bins.jobbie, "./cmd/jobbie"); bins.err != nil {
				return
			}
		}
		bins.pod = filepath.Join(dir, "jobbie-pod")
		bins.err = gobuild("pod", bins.pod, ".")
	})
	if bins.err != nil {
		t.Fatal(bins.err)
	}
	return bins.jobbie, bins.pod
}

func gobuild(dir, out, pkg string) error {
	c := exec.Command("go", "build", "-o", out, pkg)
	c.Dir = dir
	if b, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s in %s: %v\n%s", pkg, dir, err, b)
	}
	return nil
}

var (
	cobraFlag = regexp.MustCompile(`(?m)^\s+(?:-\w, )?(--[a-z0-9][a-z0-9-]*)`)
	goFlag    = regexp.MustCompile(`(?m)^\s+-([a-z0-9][a-z0-9-]*)`)
)

// flagsOf is the set of flags `<bin> <cmd…> --help` lists.
func flagsOf(t *testing.T, bin string, cmd ...string) map[string]bool {
	t.Helper()
	key := bin + " " + strings.Join(cmd, " ")
	if v, ok := bins.help.Load(key); ok {
		return v.(map[string]bool)
	}
	out, _ := exec.Command(bin, append(append([]string{}, cmd...), "--help")...).CombinedOutput()
	set := map[string]bool{}
	re, prefix := cobraFlag, ""
	if filepath.Base(bin) == "jobbie-pod" {
		re, prefix = goFlag, "--"
	}
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		set[prefix+m[1]] = true
	}
	if len(set) == 0 {
		t.Fatalf("%s --help lists no flags:\n%s", key, out)
	}
	bins.help.Store(key, set)
	return set
}

// invocation is one command line of a deployment file: jobbie's or
// jobbie-pod's, split where jobbie-pod start hands over to jobbie.
type invocation struct {
	where string
	argv  []string
}

// checkFlags asserts that every flag of every command line is one the
// binary has.
func checkFlags(t *testing.T, invs []invocation) {
	t.Helper()
	jobbie, pod := binaries(t)
	for _, inv := range invs {
		argv := inv.argv
		for len(argv) > 0 {
			var bin string
			switch filepath.Base(argv[0]) {
			case "jobbie":
				bin = jobbie
			case "jobbie-pod":
				bin = pod
			default:
				t.Errorf("%s: runs %q, neither jobbie nor jobbie-pod", inv.where, argv[0])
				return
			}
			// The subcommand: the words before the first flag.
			i := 1
			for i < len(argv) && !strings.HasPrefix(argv[i], "-") {
				i++
			}
			sub := argv[1:i]
			if bin == pod && len(sub) > 1 {
				sub = sub[:1] // probe's URLs, pki's identities
			}
			if len(sub) == 0 {
				t.Errorf("%s: %v names no command", inv.where, argv)
				return
			}
			known := flagsOf(t, bin, sub...)
			next := []string(nil)
			for j := i; j < len(argv); j++ {
				a := argv[j]
				if a == "--" {
					next = argv[j+1:]
					break
				}
				if !strings.HasPrefix(a, "--") {
					continue // a flag's value or an argument
				}
				name, _, _ := strings.Cut(a, "=")
				if known[name] {
					continue
				}
				t.Errorf("%s: `%s %s` has no flag %s", inv.where, filepath.Base(bin), strings.Join(sub, " "), name)
			}
			argv = next
		}
	}
}
