package admission

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCanonicalPath(t *testing.T) {
	t.Parallel()
	for p, ok := range map[string]bool{
		"/api/v1/jobs/job_01HX":              true,
		"/api/v1/queues/a.b":                 true,
		"/api/v1/queues/.hid":                true,
		"/api/v1/jobs/..":                    false,
		"/api/v1/jobs/../x":                  false,
		"/api/v1/jobs/./x":                   false,
		"/api/v1/jobs/.":                     false,
		"/api/v1/jobs/a%2f":                  false,
		"/api/v1/jobs/a%2F":                  false,
		"/api/v1/jobs/%2e%2e":                false,
		"/api/v1/jobs/%2E":                   false,
		"/api/v1/jobs/a%5cb":                 false,
		"/api/v1/jobs/a%25":                  false,
		"/api/v1/jobs/a%252f":                false,
		"/api/v1/jobs/a%0a":                  false,
		"/api/v1/jobs/a%7F":                  false,
		"/api/v1/jobs/a%":                    false,
		"/api/v1/jobs/a%2":                   false,
		"/api/v1/jobs/a%zz":                  false,
		"/api/v1/schedules/nightly%20report": true,
		"/api/v1/schedules/r%C3%A9sum%C3%A9": true,
		"/api/v1/schedules/a%3Ab%40c":        true,
		`/api/v1/jobs/a\b`:                   false,
		".":                                  false,
	} {
		require.Equal(t, ok, canonicalPath([]byte(p)), p)
	}
}
