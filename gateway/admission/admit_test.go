package admission

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCanonicalPath(t *testing.T) {
	t.Parallel()
	for p, ok := range map[string]bool{
		"/api/v1/jobs/job_01HX": true,
		"/api/v1/queues/a.b":    true,
		"/api/v1/queues/.hid":   true,
		"/api/v1/jobs/..":       false,
		"/api/v1/jobs/../x":     false,
		"/api/v1/jobs/./x":      false,
		"/api/v1/jobs/.":        false,
		"/api/v1/jobs/a%2f":     false,
		`/api/v1/jobs/a\b`:      false,
		".":                     false,
	} {
		require.Equal(t, ok, canonicalPath([]byte(p)), p)
	}
}
