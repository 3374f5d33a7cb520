package cli

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The CLI uses Jobbie as a customer would: of this module it imports
// only the client, the wire shapes and tenancy's vocabulary (and its own
// packages), never a server's package or internal/, in its code and in
// its tests.
func TestImportsOnlyWhatCustomersHave(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}`,
		"./...").CombinedOutput()
	require.NoError(t, err, "%s", out)
	const module = "github.com/jobbie/jobbie/"
	// settings and rolelog read a role's settings and write its log
	// (jobbie worker's): leaves that import nothing of the servers.
	allowed := []string{"client", "wire", "tenancy", "outbox", "cmd/jobbie/internal/cli", "cmd/jobbie/internal/settings", "cmd/jobbie/internal/rolelog"}
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			ok := false
			for _, a := range allowed {
				ok = ok || dep == a || strings.HasPrefix(dep, a+"/")
			}
			if !ok {
				bad = append(bad, fields[0]+" imports "+dep)
			}
		}
	}
	require.Empty(t, bad)
}
