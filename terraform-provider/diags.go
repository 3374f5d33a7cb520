package provider

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/jobbie/jobbie/client"
)

// apiError adds err as an error diagnostic: the API's own message, the
// field it names and the request id to quote to support.
func apiError(diags *diag.Diagnostics, summary string, err error) {
	diags.AddError(summary, apiDetail(err))
}

func apiDetail(err error) string {
	e, ok := client.AsError(err)
	if !ok {
		return err.Error()
	}
	var b strings.Builder
	b.WriteString(e.Message)
	if e.Field != "" {
		fmt.Fprintf(&b, "\n\nField: %s", e.Field)
	}
	fmt.Fprintf(&b, "\n\nThe Jobbie API answered %d %s", e.Status, e.Code)
	if e.RequestID != "" {
		fmt.Fprintf(&b, " (request %s)", e.RequestID)
	}
	b.WriteString(".")
	switch {
	case e.Status == 401:
		b.WriteString(" Check the provider's api_key (or " + EnvAPIKey + "): it is missing, expired or revoked.")
	case e.Status == 403:
		b.WriteString(" The provider's API key is not allowed to do this; use a key with a role and namespaces that allow it.")
	}
	return b.String()
}

// apiErrorAt is apiError, the diagnostic pointed at the attribute the API
// names as the problem ("key_concurrency.max" is that nested attribute)
// when it is one of attrs, so terraform shows it against the configuration.
func apiErrorAt(diags *diag.Diagnostics, summary string, err error, attrs ...string) {
	if e, ok := client.AsError(err); ok && e.Field != "" && slices.Contains(attrs, e.Field) {
		parts := strings.Split(e.Field, ".")
		p := path.Root(parts[0])
		for _, name := range parts[1:] {
			p = p.AtName(name)
		}
		diags.AddAttributeError(p, summary, apiDetail(err))
		return
	}
	apiError(diags, summary, err)
}

// alreadyExists reports a create's 409 on the name attribute, with the
// import that brings the one there under Terraform (what: "Namespace");
// false when err is not a 409.
func alreadyExists(diags *diag.Diagnostics, err error, what, importID string) bool {
	if !client.IsConflict(err) {
		return false
	}
	diags.AddAttributeError(path.Root("name"), what+" already exists",
		apiDetail(err)+"\n\nTo manage it with Terraform, import it: terraform import <address> "+importID)
	return true
}
