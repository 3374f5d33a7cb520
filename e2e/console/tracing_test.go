package console

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/tenancy"
)

// The namespaces screen's OTLP endpoint card: the owner's bad URL is the
// API's 400 shown on the field, and changes nothing; a good one is saved,
// read back after a reload, and removed. A developer (namespace.read,
// not manage) sees it and no form. The dev server allows inside
// addresses, so the collector's URL is on loopback.
func TestConsoleNamespaceTracing(t *testing.T) {
	t.Parallel()
	const url = "https://127.0.0.1:4318/v1/traces"
	tn := newTenant(t)
	held := func() string {
		t.Helper()
		u, err := tn.owner.WithNamespace(tn.namespace).GetTracing(ctx(t))
		require.NoError(t, err)
		return u
	}
	p := signedIn(t, tn.ownerKey, "/console/namespaces", "namespaces")
	p.waitFor(`#tracing[data-loaded="true"] #tracing-none`)

	p.setValue("#tracing-url", "http://127.0.0.1:4318/v1/traces")
	p.click("#tracing-save")
	p.waitFor("#tracing-url-error")
	assert.Contains(t, p.text("#tracing-url-error"), "otlp_endpoint")
	assert.Equal(t, "true", eval[string](p, query("#tracing-url")+`.getAttribute('aria-invalid')`))
	assert.Zero(t, p.count("#tracing-error"), "an error that names the field is shown on it alone")
	assert.Empty(t, held(), "the refused URL changed nothing")

	p.setValue("#tracing-url", url)
	p.click("#tracing-save")
	p.waitText("#tracing-notice", "saved")
	assert.Zero(t, p.count("#tracing-url-error"))
	assert.Equal(t, url, held())

	p.reload()
	p.waitScreen("namespaces")
	p.until(waitTimeout, query("#tracing-url")+`?.value === "`+url+`"`, "the saved URL read back")
	p.shot("namespaces-tracing")

	// A developer reads it; the form is the owner's and admin's.
	k := tn.key(t, tenancy.RoleDeveloper)
	v := signedIn(t, k.Token, "/console/namespaces", "namespaces")
	v.waitText("#tracing-current", url)
	for _, sel := range []string{"#tracing-form", "#tracing-save", "#tracing-clear"} {
		assert.Zero(t, v.count(sel), "%s shown to a developer", sel)
	}

	p.click("#tracing-clear")
	p.waitText("#tracing-notice", "removed")
	assert.Empty(t, held())
	p.waitFor("#tracing-none")
}
