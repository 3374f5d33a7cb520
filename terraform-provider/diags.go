package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

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
