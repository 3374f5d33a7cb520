package schema

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
)

func field(t *testing.T, err error) (string, string) {
	t.Helper()
	var ae *apierr.Error
	require.True(t, errors.As(err, &ae), "%v", err)
	require.Equal(t, apierr.BadRequest, ae.Code)
	return ae.Field, ae.Message
}

func TestCanonicalSortsAndKeepsNumbers(t *testing.T) {
	t.Parallel()
	c, err := Canonical("schema", []byte(` { "type" : "object", "properties": {"a": {"maximum": 12345678901234567890.5, "pattern": "<&>"}} } `))
	require.NoError(t, err)
	require.Equal(t, `{"properties":{"a":{"maximum":12345678901234567890.5,"pattern":"<&>"}},"type":"object"}`, string(c))
	again, err := Canonical("schema", c)
	require.NoError(t, err)
	require.Equal(t, c, again)
	_, err = Canonical("schema", []byte(`true`))
	require.NoError(t, err)
}

func TestCanonicalRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ schema, says string }{
		{`{"type":"nope"}`, "not a valid JSON Schema"},
		{`{"$ref":"http://169.254.169.254/latest"}`, "not fetched"},
		{`{"$ref":"other.json"}`, "not fetched"}, // relative to the schema's own location: not inside it
		{`{"$id":"https://example.com/a","$ref":"b.json"}`, "not fetched"},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema"}`, "draft 2020-12"},
		{`[1]`, "an object or a boolean"},
		{`{"a":`, "not JSON"},
		{`{"pattern":"("}`, "not a valid JSON Schema"},
		{`{"x":"` + strings.Repeat("a", 70_000) + `"}`, "the limit is 65536"},
	} {
		_, err := Canonical("schema", []byte(c.schema))
		f, msg := field(t, err)
		require.Equal(t, "schema", f, c.schema)
		require.Contains(t, msg, c.says, c.schema)
	}
}

func TestCheckNamesThePointerAndTheRule(t *testing.T) {
	t.Parallel()
	c, err := Canonical("schema", []byte(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object",
		"properties":{"a/b":{"minimum":0}}}}},"required":["items"]}`))
	require.NoError(t, err)
	s, err := Compile(c)
	require.NoError(t, err)
	require.NoError(t, s.Check("payload", []byte(`{"items":[{"a/b":1}]}`)))
	f, msg := field(t, s.Check("jobs[2].payload", []byte(`{"items":[{"a/b":1},{"a/b":-1}]}`)))
	require.Equal(t, "jobs[2].payload/items/1/a~1b", f)
	require.Equal(t, "jobs[2].payload/items/1/a~1b: minimum: got -1, want 0 (the queue's schema)", msg)
	f, msg = field(t, s.Check("payload", nil))
	require.Equal(t, "payload", f)
	require.Contains(t, msg, "want object")
}

func TestCacheCompilesOncePerVersion(t *testing.T) {
	t.Parallel()
	var c Cache
	loads := 0
	raw := []byte(`{"type":"integer"}`)
	load := func() ([]byte, uint32, error) { loads++; return raw, 1, nil }
	s1, v, err := c.Get("ns", "q", 1, load)
	require.NoError(t, err)
	require.EqualValues(t, 1, v)
	s2, _, err := c.Get("ns", "q", 1, load)
	require.NoError(t, err)
	require.Same(t, s1, s2)
	require.Equal(t, 1, loads)
	// Another namespace's queue of the same name is another entry.
	_, _, err = c.Get("ns2", "q", 1, func() ([]byte, uint32, error) { return []byte(`{"type":"string"}`), 1, nil })
	require.NoError(t, err)
	s3, _, _ := c.Get("ns", "q", 1, load)
	require.Same(t, s1, s3)
	// A load that finds a newer version answers it.
	_, v, err = c.Get("ns", "q", 2, func() ([]byte, uint32, error) { return raw, 3, nil })
	require.NoError(t, err)
	require.EqualValues(t, 3, v)
}
