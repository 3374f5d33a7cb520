package gateway

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/jobbie/jobbie/"

// designRules reads DESIGN.md: for each package of its table, what it may
// import; what every package may import; what tests may import besides,
// and the root's tests on top of that.
func designRules(t *testing.T) (table map[string][]string, every, tests, rootTests []string) {
	t.Helper()
	f, err := os.Open("DESIGN.md")
	require.NoError(t, err)
	defer f.Close()
	names := regexp.MustCompile("`([^`]+)`")
	// A table name is relative to gateway/ unless it is one of internal/
	// or proto/ or docs/.
	full := func(name string) string {
		if name == "gateway" || strings.HasPrefix(name, "gateway/") || strings.HasPrefix(name, "internal/") ||
			strings.HasPrefix(name, "proto/") || strings.HasPrefix(name, "docs/") {
			return name
		}
		return "gateway/" + name
	}
	table = map[string][]string{}
	var text strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		cells := strings.Split(line, "|")
		if len(cells) == 5 && strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			pkg := names.FindStringSubmatch(cells[1])[1]
			table[pkg] = []string{}
			for _, m := range names.FindAllStringSubmatch(cells[3], -1) {
				table[pkg] = append(table[pkg], full(m[1]))
			}
			continue
		}
		text.WriteString(line + "\n")
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, table, "DESIGN.md has no package table")
	sentence := func(start string) []string {
		s := strings.ReplaceAll(text.String(), "\n", " ")
		i := strings.Index(s, start)
		require.GreaterOrEqual(t, i, 0, "DESIGN.md says no %q", start)
		s = s[i+len(start):]
		var out []string
		for _, m := range names.FindAllStringSubmatch(s[:strings.Index(s, ".")], -1) {
			out = append(out, m[1])
		}
		return out
	}
	every = sentence("Every package may also import")
	tests = sentence("Tests may also import")
	rootTests = sentence("the root's tests")
	return table, every, tests, rootTests
}

// Every import of the gateway's packages, and of the packages DESIGN.md's
// table lists, is one the table allows.
func TestPackagesImportWhatDesignAllows(t *testing.T) {
	t.Parallel()
	table, every, tests, rootTests := designRules(t)
	args := []string{"list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./..."}
	for pkg := range table {
		if strings.HasPrefix(pkg, "internal/") {
			args = append(args, "../"+pkg)
		}
	}
	out, err := exec.Command("go", args...).Output()
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(line, "|")
		pkg := strings.TrimPrefix(parts[0], module)
		allowed, ok := table[pkg]
		require.True(t, ok, "package %s is not in DESIGN.md's table", pkg)
		seen[pkg] = true
		allow := func(dep string, extra ...[]string) bool {
			if dep == pkg {
				return true // an external test package
			}
			for _, list := range append([][]string{allowed, every}, extra...) {
				for _, a := range list {
					if dep == a {
						return true
					}
				}
			}
			return false
		}
		for _, imp := range strings.Fields(parts[1]) {
			if dep, ours := strings.CutPrefix(imp, module); ours {
				require.True(t, allow(dep), "%s imports %s, which DESIGN.md does not allow it", pkg, dep)
			}
		}
		extra := [][]string{tests}
		if pkg == "gateway" {
			extra = append(extra, rootTests)
		}
		for _, imp := range strings.Fields(parts[2]) {
			if dep, ours := strings.CutPrefix(imp, module); ours {
				require.True(t, allow(dep, extra...), "%s's tests import %s, which DESIGN.md does not allow them", pkg, dep)
			}
		}
	}
	for pkg := range table {
		require.True(t, seen[pkg], "DESIGN.md lists %s, which go list does not know", pkg)
	}
}
