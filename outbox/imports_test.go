package outbox_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The outbox is a library the customer's program links: of this module
// it takes only the SDK (and what the SDK takes), and no database driver,
// which is the program's choice.
func TestImportsNoDriverNorServer(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "github.com/jobbie/jobbie/outbox").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/jobbie/jobbie/client", "the listing is of the outbox's imports")
	var bad []string
	for _, dep := range deps {
		ours, isOurs := strings.CutPrefix(dep, "github.com/jobbie/jobbie/")
		switch {
		case isOurs && ours != "client" && ours != "wire" && ours != "outbox" && !strings.HasPrefix(ours, "proto/"): // the SDK and its wire shapes and protocol
			bad = append(bad, dep)
		case strings.HasPrefix(dep, "modernc.org/") || strings.HasPrefix(dep, "github.com/jackc/") || strings.HasPrefix(dep, "github.com/lib/pq"):
			bad = append(bad, dep)
		}
	}
	require.Empty(t, bad, "the outbox imports these, directly or not")
}
