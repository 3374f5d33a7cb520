package api

import (
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// Every route control serves is documented: the operator API's
// (/control/v1) in docs/api/operator.md, the internal API's (/internal/v1)
// in docs/internal-api.md, each as its method and path with {param} for a
// path parameter ("GET /control/v1/plans/{name}").
func TestEveryRouteIsDocumented(t *testing.T) {
	t.Parallel()
	s := New(&service.Service{}, Config{NodeID: "control1", TLS: pkitest.New(t).Creds(t, pkitest.Control), Logger: slog.Default()})
	spaces := regexp.MustCompile(`[ \t]+`)
	read := func(parts ...string) string {
		b, err := os.ReadFile(filepath.Join(append([]string{"..", ".."}, parts...)...))
		require.NoError(t, err)
		return spaces.ReplaceAllString(string(b), " ") // routes in aligned columns
	}
	docs := map[string]string{
		"/control/v1/":  read("docs", "api", "operator.md"),
		"/internal/v1/": read("docs", "internal-api.md"),
	}
	param := regexp.MustCompile(`:([a-z_]+)`)
	var missing []string
	seen := map[string]bool{}
	for _, r := range s.app.GetRoutes(true) {
		if r.Method == "HEAD" {
			continue // fiber serves a GET's HEAD too
		}
		for prefix, text := range docs {
			want := r.Method + " " + param.ReplaceAllString(r.Path, "{$1}")
			if strings.HasPrefix(r.Path, prefix) && !seen[want] {
				seen[want] = true
				if !strings.Contains(text, want) {
					missing = append(missing, want)
				}
			}
		}
	}
	require.NotEmpty(t, seen)
	require.Empty(t, missing, "control's routes that the docs do not name")
}
