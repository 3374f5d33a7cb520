package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
)

// A queue whose handler answered 410 shows why and since when push is
// disabled, and how to enable it again (jobbie dev cannot be made to
// reach a handler with a certificate of the test's, so this is the table
// alone).
func TestQueueTableShowsPushDisabled(t *testing.T) {
	t.Parallel()
	q := &client.Queue{Name: "emails", Push: &client.QueuePush{URL: "https://h.example.com/jobs", Mode: "always",
		Timeout: "30s", MaxInFlight: 10, Headers: map[string]string{},
		Disabled: &client.PushDisabled{Reason: "the handler answered 410 Gone", At: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)}}}
	var b bytes.Buffer
	require.NoError(t, printQueue(&b, q))
	out := b.String()
	require.Equal(t, "push to https://h.example.com/jobs (always, timeout 30s, at most 10 in flight)", clitest.Field(out, "DELIVERY"), out)
	require.Empty(t, clitest.Field(out, "PUSH HEADERS"), out)
	require.Equal(t, "since 2026-11-28T12:00:00Z: the handler answered 410 Gone (`jobbie queues set <name> --push-enable` enables it again)",
		clitest.Field(out, "PUSH DISABLED"), out)
}

// A typed queue shows its schema's version and the schema, on one line
// (-o json has it whole).
func TestQueueTableShowsSchema(t *testing.T) {
	t.Parallel()
	q := &client.Queue{Name: "payments", SchemaVersion: 3, Schema: []byte(`{"properties":{"amount":{"minimum":0}},"type":"object"}`)}
	var b bytes.Buffer
	require.NoError(t, printQueue(&b, q))
	out := b.String()
	require.Equal(t, `version 3: {"properties":{"amount":{"minimum":0}},"type":"object"}`, clitest.Field(out, "SCHEMA"), out)
	b.Reset()
	require.NoError(t, printQueue(&b, &client.Queue{Name: "plain"}))
	require.Empty(t, clitest.Field(b.String(), "SCHEMA"))
}
