package gateway

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every route of the route table is documented in docs/api/: each page
// starts with a table of its routes, where a route is written as its
// method and path with {param} for a path parameter
// ("POST /api/v1/ack/{id}"). And docs/api/ names no /api/v1 route the
// table does not have.
func TestEveryRouteIsDocumented(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob(filepath.Join("..", "docs", "api", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages, "docs/api has no pages")
	var docs strings.Builder
	for _, p := range pages {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		docs.Write(b)
		docs.WriteByte('\n')
	}
	text := docs.String()
	param := regexp.MustCompile(`:([a-z_]+)`)
	served := map[string]bool{}
	var missing []string
	for _, rt := range routeTable {
		want := rt.method + " " + param.ReplaceAllString(rt.path, "{$1}")
		served[want] = true
		if !strings.Contains(text, want) {
			missing = append(missing, want)
		}
	}
	require.Empty(t, missing, "routes of the route table that docs/api does not document")

	named := regexp.MustCompile("`(GET|POST|PUT|PATCH|DELETE) (/api/v1/[a-z0-9/{}_.-]*[a-z0-9}])")
	var unknown []string
	for _, m := range named.FindAllStringSubmatch(text, -1) {
		if route := m[1] + " " + m[2]; !served[route] {
			unknown = append(unknown, route)
		}
	}
	require.Empty(t, unknown, "routes docs/api names in code spans that the gateway does not serve")
}
