package client_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The SDK is what a customer's program links: it carries neither the
// RBAC engine nor the JWT library, which are the servers' (and neither
// package tenancy, which holds both); the names it needs of roles and
// actions are wire's. Of OpenTelemetry it links the API only: the
// program chooses its SDK and exporters.
func TestImportsNoServerLibraries(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "github.com/jobbie/jobbie/client").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/jobbie/jobbie/wire", "the listing is of the client's imports")
	require.Contains(t, deps, "go.opentelemetry.io/otel/trace", "the process spans use the OpenTelemetry API")
	var bad []string
	for _, dep := range deps {
		if strings.HasPrefix(dep, "github.com/casbin/") || strings.HasPrefix(dep, "github.com/golang-jwt/") ||
			dep == "github.com/jobbie/jobbie/tenancy" ||
			strings.HasPrefix(dep, "go.opentelemetry.io/otel/sdk") || strings.HasPrefix(dep, "go.opentelemetry.io/otel/exporters") {
			bad = append(bad, dep)
		}
	}
	require.Empty(t, bad, "the client imports these, directly or not")
}
