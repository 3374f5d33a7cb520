package provider

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/jobbie/jobbie/client"
)

// The API's 400s come back as diagnostics on the attribute they name:
// requests the plan-time checks would stop are sent straight to the
// acceptance tests' jobbie dev (TestMain sets JOBBIE_URL and JOBBIE_API_KEY).
func TestAccAPIErrorNamesAttribute(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 to run it against a real jobbie dev")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := client.New(os.Getenv(EnvURL), os.Getenv(EnvAPIKey))
	ns := keyDefaultNamespace(os.Getenv(EnvAPIKey))
	zero := int64(0)
	_, queueErr := c.WithNamespace(ns).PutQueue(ctx, "diag-check", client.QueueSpec{KeyConcurrency: &zero})
	_, cronErr := c.PutBackupPolicy(ctx, ns, client.BackupPolicyRequest{Cron: "0 25 * * *", Retention: 1})
	_, retentionErr := c.PutBackupPolicy(ctx, ns, client.BackupPolicyRequest{Cron: "@daily", Retention: 1001})
	_, zoneErr := c.PutBackupPolicy(ctx, ns, client.BackupPolicyRequest{Cron: "@daily", Timezone: "Mars/Olympus", Retention: 1})
	for _, tc := range []struct {
		err   error
		attrs []string
		want  path.Path
	}{
		{queueErr, []string{"key_concurrency.max"}, path.Root("key_concurrency").AtName("max")},
		{cronErr, backupPolicyFields, path.Root("cron")},
		{retentionErr, backupPolicyFields, path.Root("retention")},
		{zoneErr, backupPolicyFields, path.Root("timezone")},
		{queueErr, nil, path.Empty()}, // a field the resource does not name: a plain error
	} {
		if e, ok := client.AsError(tc.err); !ok || e.Status != 400 {
			t.Fatalf("want a 400 from the API, got %v", tc.err)
		}
		var diags diag.Diagnostics
		apiErrorAt(&diags, "summary", tc.err, tc.attrs...)
		if len(diags) != 1 {
			t.Fatalf("%v: diagnostics %v", tc.err, diags)
		}
		got := path.Empty()
		if d, ok := diags[0].(diag.DiagnosticWithPath); ok {
			got = d.Path()
		}
		if !got.Equal(tc.want) {
			t.Errorf("%v: diagnostic on %q, want %q", tc.err, got, tc.want)
		}
	}
	if _, err := c.WithNamespace(ns).GetQueue(ctx, "diag-check"); !client.IsNotFound(err) {
		t.Errorf("a refused PUT made the queue: %v", err)
	}
	if _, err := c.GetBackupPolicy(ctx, ns); !client.IsNotFound(err) {
		t.Errorf("a refused PUT made a backup policy: %v", err)
	}
}
