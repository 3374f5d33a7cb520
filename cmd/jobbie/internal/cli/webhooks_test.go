package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
)

// An endpoint disabled for failing shows why, since when and how to
// enable it again (jobbie dev cannot make one fail for 3 days, so this is
// the table alone); an attempt without an answer shows "-" and its error.
func TestWebhookTablesShowDisabledAndFailedAttempts(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	since := at.Add(-72 * time.Hour)
	w := &client.Webhook{ID: "wh_1", URL: "https://h.example.com/e", Events: []string{"*"}, Queues: []string{}, Enabled: true,
		SecretIDs: []string{}, Disabled: &client.WebhookDisabled{Reason: "deliveries failed for 72h0m0s", At: at}, FailingSince: &since}
	var b bytes.Buffer
	require.NoError(t, printWebhook(&b, w))
	out := b.String()
	require.Equal(t, "disabled", clitest.Field(out, "STATE"), out)
	require.Equal(t, "all", clitest.Field(out, "QUEUES"), out)
	require.Equal(t, "since 2026-11-28T12:00:00Z: deliveries failed for 72h0m0s (`jobbie webhooks update <id> --enabled` enables it again)",
		clitest.Field(out, "DISABLED"), out)
	require.Equal(t, "2026-11-25T12:00:00Z", clitest.Field(out, "FAILING SINCE"), out)
	require.Empty(t, clitest.Field(out, "SECRET"), out)

	b.Reset()
	require.NoError(t, printWebhookDeliveries(&b, []client.WebhookDelivery{
		{EventID: "s1:7", Type: "dev.jobbie.job.dead", At: at, Status: 0, LatencyMs: 10000, Error: "timeout after 10s", Attempt: 3},
		{EventID: "s1:6", Type: "dev.jobbie.job.completed", At: at, Status: 200, LatencyMs: 2.25, Attempt: 1, OK: true},
	}))
	lines := clitest.TableLines(b.String())
	require.Equal(t, [][]string{
		{"AT", "EVENT", "TYPE", "ATTEMPT", "STATUS", "LATENCY", "OK", "ERROR"},
		{"2026-11-28T12:00:00Z", "s1:7", "dev.jobbie.job.dead", "3", "-", "10000.0ms", "false", "timeout", "after", "10s"},
		{"2026-11-28T12:00:00Z", "s1:6", "dev.jobbie.job.completed", "1", "200", "2.2ms", "true", "-"},
	}, lines)
}
