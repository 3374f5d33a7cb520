package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// validateQueue runs the provider's plan-time validation of a jobbie_queue
// whose defaults block is defaults (the rest null), through the protocol
// terraform speaks, and returns the diagnostics terraform would show.
func validateQueue(t *testing.T, defaults map[string]string) []*tfprotov6.Diagnostic {
	t.Helper()
	ctx := context.Background()
	srv, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ := schemas.ResourceSchemas["jobbie_queue"].ValueType().(tftypes.Object)
	defType := typ.AttributeTypes["defaults"].(tftypes.Object)
	defVals := map[string]tftypes.Value{}
	for name, at := range defType.AttributeTypes {
		defVals[name] = tftypes.NewValue(at, nil)
		if s, ok := defaults[name]; ok {
			defVals[name] = tftypes.NewValue(tftypes.String, s)
		}
	}
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	vals["name"] = tftypes.NewValue(tftypes.String, "q")
	vals["defaults"] = tftypes.NewValue(defType, defVals)
	config, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, vals))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "jobbie_queue", Config: &config})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Diagnostics
}

// A bad duration is one error, on its attribute, in plain words: not the
// duration type's own message beside the validator's, with a literal
// "\n\n" in it.
func TestBadDurationIsOneClearError(t *testing.T) {
	diags := validateQueue(t, map[string]string{"lease_duration": "5x"})
	if len(diags) != 1 {
		for _, d := range diags {
			t.Logf("%s: %s (at %v)", d.Summary, d.Detail, d.Attribute)
		}
		t.Fatalf("%d diagnostics, want 1", len(diags))
	}
	d := diags[0]
	if strings.Contains(d.Summary+d.Detail, `\n`) {
		t.Errorf("a literal \\n in %q: %q", d.Summary, d.Detail)
	}
	if !strings.Contains(d.Detail, `"5x" is not a duration`) {
		t.Errorf("detail %q does not say what is wrong", d.Detail)
	}
	if got := d.Attribute.String(); got != `AttributeName("defaults").AttributeName("lease_duration")` {
		t.Errorf("on %s, want defaults.lease_duration", got)
	}
	if diags := validateQueue(t, map[string]string{"lease_duration": "90s"}); len(diags) != 0 {
		t.Errorf("a good duration: %v", diags)
	}
}
