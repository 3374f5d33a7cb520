package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// importID runs r's ImportState with id into an empty state, as terraform
// import does.
func importID(t *testing.T, r resource.Resource, id string) *resource.ImportStateResponse {
	t.Helper()
	ctx := context.Background()
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	resp := &resource.ImportStateResponse{State: tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(sr.Schema.Type().TerraformType(ctx), nil)}}
	r.(resource.ResourceWithImportState).ImportState(ctx, resource.ImportStateRequest{ID: id}, resp)
	return resp
}

// The import ids the resources refuse, and what they answer: the
// namespace settings and the resources named in a namespace share these
// checks, and their texts.
func TestImportIDRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		r      resource.Resource
		id     string
		detail string
	}{
		{"egress", newNamespaceEgressResource(), "Bad_NS", "Expected a namespace name: "},
		{"tracing", newTracingResource(), "", "Expected a namespace name: "},
		{"backup policy", newBackupPolicyResource(), "a/b", "Expected a namespace name: "},
		{"encryption", newNamespaceEncryptionResource(), "-x", "Expected a namespace name: "},
		{"alert rule name", newAlertRuleResource(), "ns/bad name", "Expected <namespace>/<name> with a rule's name: ns/bad name"},
		{"alert rule slash", newAlertRuleResource(), "ns/a/b", "Expected <namespace>/<name> with a rule's name: ns/a/b"},
		{"alert rule form", newAlertRuleResource(), "backlog", "Expected an import id of the form <namespace>/<name>, got backlog."},
		{"budget name", newBudgetResource(), "ns/bad name", "Expected <namespace>/<name> with a budget's name: ns/bad name"},
		{"budget form", newBudgetResource(), "ns/", "Expected an import id of the form <namespace>/<name>, got ns/."},
		{"queue form", newQueueResource(), "/q", "Expected an import id of the form <namespace>/<queue name>, got /q."},
		{"webhook form", newWebhookResource(), "wh_1", "Expected an import id of the form <namespace>/<webhook id>, got wh_1."},
		{"sso", newSSOResource(), "other", "Expected the import id sso (a tenant has one SSO configuration), got other."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diags := importID(t, tc.r, tc.id).Diagnostics
			if len(diags) != 1 || diags[0].Summary() != "Invalid import id" || len(diags[0].Detail()) < len(tc.detail) ||
				diags[0].Detail()[:len(tc.detail)] != tc.detail {
				t.Fatalf("import %q: %v, want one error %q", tc.id, diags, tc.detail)
			}
		})
	}
}

// What an accepted import id puts in the state before the read fills in
// the rest.
func TestImportIDTaken(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    resource.Resource
		id   string
		want map[string]any
	}{
		{"egress", newNamespaceEgressResource(), "team-a", map[string]any{"id": "team-a", "namespace": "team-a"}},
		{"tracing", newTracingResource(), "team-a", map[string]any{"id": "team-a", "namespace": "team-a"}},
		{"backup policy", newBackupPolicyResource(), "team-a", map[string]any{"id": "team-a", "namespace": "team-a"}},
		{"encryption", newNamespaceEncryptionResource(), "team-a", map[string]any{"id": "team-a", "namespace": "team-a"}},
		{"alert rule", newAlertRuleResource(), "team-a/backlog", map[string]any{"id": "team-a/backlog", "namespace": "team-a", "name": "backlog"}},
		{"budget", newBudgetResource(), "team-a/llm-daily", map[string]any{"id": "team-a/llm-daily", "namespace": "team-a", "name": "llm-daily"}},
		{"queue", newQueueResource(), "team-a/emails.send",
			map[string]any{"id": "team-a/emails.send", "namespace": "team-a", "name": "emails.send", "force_destroy": false}},
		{"webhook", newWebhookResource(), "team-a/wh_1", map[string]any{"id": "wh_1", "namespace": "team-a"}},
		{"sso", newSSOResource(), "sso", map[string]any{"id": "sso"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := importID(t, tc.r, tc.id)
			if resp.Diagnostics.HasError() {
				t.Fatalf("import %q: %v", tc.id, resp.Diagnostics)
			}
			for attr, want := range tc.want {
				var got any
				switch want.(type) {
				case string:
					var s string
					resp.Diagnostics.Append(resp.State.GetAttribute(context.Background(), path.Root(attr), &s)...)
					got = s
				case bool:
					var b bool
					resp.Diagnostics.Append(resp.State.GetAttribute(context.Background(), path.Root(attr), &b)...)
					got = b
				}
				if resp.Diagnostics.HasError() || got != want {
					t.Errorf("import %q: %s = %v (%v), want %v", tc.id, attr, got, resp.Diagnostics, want)
				}
			}
		})
	}
}
