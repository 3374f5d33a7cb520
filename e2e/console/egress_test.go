package console

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/tenancy"
)

func egressInput(row string) string { return `[data-egress-row="` + row + `"] input` }

// The namespaces screen's egress allow-list card: the owner adds entries
// one row each; a bad entry's 400 marks its row (counted past a blank
// row, which is not sent) and changes nothing; a good list is saved,
// read back after a reload, and removed. A developer (namespace.read,
// not manage) sees the list and no form.
func TestConsoleNamespaceEgress(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	p := signedIn(t, tn.ownerKey, "/console/namespaces", "namespaces")
	p.waitFor(`#egress[data-loaded="true"] #egress-none`)

	p.setValue(egressInput("0"), "hooks.example.com")
	p.click("#egress-add")
	p.click("#egress-add")
	p.setValue(egressInput("2"), "no such host")
	p.click("#egress-save")
	p.waitText("#egress-row-error", `"no such host" is not a host name`)
	assert.NotContains(t, p.text("#egress-row-error"), "egress_allow[1]", "the API's index is not the row's")
	assert.Equal(t, "true", eval[string](p, query(egressInput("2"))+`.getAttribute('aria-invalid')`))
	assert.Equal(t, "null", eval[string](p, `String(`+query(egressInput("0"))+`.getAttribute('aria-invalid'))`))
	assert.Zero(t, p.count("#egress-error"), "an error that names a row is shown on that row alone")
	p.shot("namespaces-egress-error")
	held, err := tn.owner.GetNamespaceEgress(ctx(t), tn.namespace)
	require.NoError(t, err)
	assert.Empty(t, held, "the refused list changed nothing")

	p.setValue(egressInput("2"), "*.example.net")
	p.click("#egress-save")
	p.waitText("#egress-notice", "saved: 2 entries")
	assert.Zero(t, p.count("#egress-row-error"))
	held, err = tn.owner.GetNamespaceEgress(ctx(t), tn.namespace)
	require.NoError(t, err)
	assert.Equal(t, []string{"hooks.example.com", "*.example.net"}, held)

	p.reload()
	p.waitScreen("namespaces")
	p.until(waitTimeout, query(egressInput("1"))+`?.value === "*.example.net"`, "the saved list read back")
	assert.Equal(t, "hooks.example.com", eval[string](p, query(egressInput("0"))+".value"))
	p.shot("namespaces-egress")

	// A developer reads it; the form is the owner's and admin's.
	k := tn.key(t, tenancy.RoleDeveloper)
	v := signedIn(t, k.Token, "/console/namespaces", "namespaces")
	v.waitFor(`[data-egress-host="*.example.net"]`)
	assert.Equal(t, 2, v.count("[data-egress-host]"))
	for _, sel := range []string{"#egress-form", "#egress-save", "#egress-add", "[data-egress-remove]"} {
		assert.Zero(t, v.count(sel), "%s shown to a developer", sel)
	}

	// Removing every row removes the list.
	p.click(`[data-egress-remove="1"]`)
	p.click(`[data-egress-remove="0"]`)
	p.until(waitTimeout, query(egressInput("0"))+`.value === ""`, "the last row emptied")
	p.click("#egress-save")
	p.waitText("#egress-notice", "removed")
	held, err = tn.owner.GetNamespaceEgress(ctx(t), tn.namespace)
	require.NoError(t, err)
	assert.Empty(t, held)
}
