package control

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/jobbie/jobbie/"

// mayImport reads DESIGN.md's package table: each control package and
// the packages of ours it may import ("all of the above": every package
// of an earlier row).
func mayImport(t *testing.T) map[string]map[string]bool {
	b, err := os.ReadFile("DESIGN.md")
	require.NoError(t, err)
	row := regexp.MustCompile("^\\| `(control(?:/[a-z]+)?)` \\|.*\\| ([^|]*) \\|$")
	tick := regexp.MustCompile("`([a-z/]+)`")
	rules := map[string]map[string]bool{}
	var order []string
	for _, line := range strings.Split(string(b), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		allowed := map[string]bool{}
		if strings.Contains(m[2], "all of the above") {
			for _, p := range order {
				allowed[p] = true
			}
		}
		for _, d := range tick.FindAllStringSubmatch(m[2], -1) {
			allowed[d[1]] = true
		}
		rules[m[1]] = allowed
		order = append(order, m[1])
	}
	// A short name in the table is a control package when one has it.
	for _, allowed := range rules {
		for d := range allowed {
			if _, ok := rules["control/"+d]; ok {
				delete(allowed, d)
				allowed["control/"+d] = true
			}
		}
	}
	require.GreaterOrEqual(t, len(rules), 6, "DESIGN.md lists the packages")
	return rules
}

// owner is the table's package that pkg belongs to (a package inside one,
// such as state/internal/layout, is its).
func owner(rules map[string]map[string]bool, pkg string) string {
	best := ""
	for p := range rules {
		if (pkg == p || strings.HasPrefix(pkg, p+"/")) && len(p) > len(best) {
			best = p
		}
	}
	return best
}

// Every import of ours in control's code is one DESIGN.md allows.
func TestImportsFollowTheDesign(t *testing.T) {
	t.Parallel()
	rules := mayImport(t)
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"control/...").Output()
	require.NoError(t, err)
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		own := owner(rules, pkg)
		require.NotEmpty(t, own, "package %s is not in DESIGN.md's table", pkg)
		seen++
		for _, imp := range f[1:] {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours || owner(rules, dep) == own {
				continue
			}
			allowed := rules[own][dep] || rules[own][owner(rules, dep)]
			require.True(t, allowed, "%s imports %s, which DESIGN.md does not allow %s", pkg, dep, own)
		}
	}
	require.GreaterOrEqual(t, seen, 6)
}
