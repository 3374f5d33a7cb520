package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// adminGrantClipboard lets the page use the clipboard, as a person's click on
// Copy would.
func (p *page) adminGrantClipboard() {
	p.t.Helper()
	err := p.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		c := chromedp.FromContext(ctx)
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			_, err := cdp.Call(ctx, c.Browser, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
				Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted,
				Origin: srv.gateway, BrowserContextID: c.BrowserContextID})
			if err != nil {
				return err
			}
		}
		return nil
	}))
	if err != nil {
		p.fail("grant the clipboard: %v", err)
	}
}

// An owner creates a viewer key in the console: its secret shows once, in
// #key-secret, works against the API, and is nowhere in the browser's
// storage, cookies or (once the dialog closes) page; revoking it in the
// console makes the API refuse it within the revocation bound.
func TestConsoleAdminKeyCreateCopyRevoke(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	keys, err := tn.owner.ListKeys(ctx(t))
	require.NoError(t, err)
	require.Len(t, keys, 1)
	ownerID := keys[0].ID

	p := signedIn(t, tn.ownerKey, "/console/keys", "keys")
	p.waitText(fmt.Sprintf(`tr[data-key=%q]`, ownerID), "this session")
	assert.Zero(t, p.count(fmt.Sprintf(`button[data-revoke=%q]`, "key_nonexistent")))

	p.click("#key-new")
	p.waitFor("#key-name")
	p.setValue("#key-name", "console viewer")
	p.setValue("#key-description", "made by the console test")
	p.until(waitTimeout, query(`#key-role option[value="viewer"]`), "the role select offers viewer")
	p.setValue("#key-role", "viewer")
	p.waitText("#key-role-hint", "job.read")
	p.setValue("#key-expiry", "30d")
	p.shot("key-new")
	p.click("#key-create")
	p.waitFor("#key-secret")
	secret := eval[string](p, query("#key-secret")+".value")
	require.NotEmpty(t, secret)
	assert.True(t, eval[bool](p, query("#key-secret")+".readOnly"), "#key-secret is not read-only")
	p.waitText("#key-new-dialog", "will not be shown again")
	p.shot("key-secret")

	// Copy puts the secret on the clipboard.
	p.adminGrantClipboard()
	p.click("#key-copy")
	p.waitText(".key-copied", "Copied")
	if clip, err := evalJS[string](p, "navigator.clipboard.readText()"); err == nil {
		assert.Equal(t, secret, clip, "the clipboard holds something else")
	} else {
		t.Logf("could not read the clipboard back (%v); the page said it copied", err)
	}

	// The secret is a working viewer key of the tenant's default namespace.
	viewer := tn.client(secret)
	_, err = viewer.ListQueues(ctx(t))
	require.NoError(t, err, "the console's new key does not work")
	_, err = viewer.PauseQueue(ctx(t), "q")
	assertAPIStatus(t, err, http.StatusForbidden)
	keys, err = tn.owner.ListKeys(ctx(t))
	require.NoError(t, err)
	i := slices.IndexFunc(keys, func(k client.Key) bool { return k.Name == "console viewer" })
	require.GreaterOrEqual(t, i, 0, "no key named %q in %+v", "console viewer", keys)
	made := keys[i]
	assert.Equal(t, "viewer", made.Role)
	assert.Equal(t, []string{tn.namespace}, made.Namespaces)
	assert.Equal(t, "made by the console test", made.Description)
	if assert.NotNil(t, made.ExpiresAt) {
		assert.WithinDuration(t, time.Now().Add(30*24*time.Hour), *made.ExpiresAt, time.Hour)
	}

	// Nowhere in the browser but the dialog; gone from the page once closed.
	assertSecretNotStored(t, p, secret)
	p.click("#key-done")
	p.waitGone("#key-secret")
	p.waitNoDialog()
	assert.False(t, eval[bool](p, "document.documentElement.outerHTML.includes("+js(secret)+")"), "the closed dialog left the secret in the page")
	assertSecretNotStored(t, p, secret)
	row := fmt.Sprintf(`tr[data-key=%q]`, made.ID)
	p.waitText(row, "console viewer")
	assert.Contains(t, p.text(row), "viewer")
	p.shot("keys")

	// Revoke it in the console; the API refuses it within the bound.
	p.click(fmt.Sprintf(`button[data-revoke=%q]`, made.ID))
	p.waitText("#confirm-dialog", made.ID)
	assert.Zero(t, p.count("#key-revoke-own"), "another key's revocation warns about signing out")
	p.click("#confirm-ok")
	p.waitGone(fmt.Sprintf(`button[data-revoke=%q]`, made.ID))
	p.waitNoDialog()
	p.click("#key-show-revoked")
	p.waitText(row, "revoked")
	start := time.Now()
	for {
		_, err := viewer.ListQueues(ctx(t))
		if err != nil {
			assertAPIStatus(t, err, http.StatusUnauthorized)
			break
		}
		require.Less(t, time.Since(start), revocationBound, "the revoked key still works")
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the API refused the revoked key after %s", time.Since(start).Round(time.Millisecond))

	// The session's own key: revoking it warns that the console signs out.
	p.click(fmt.Sprintf(`button[data-revoke=%q]`, ownerID))
	p.waitFor("#key-revoke-own")
	p.click("#confirm-dialog button:not(#confirm-ok)") // cancel
	p.waitGone("#key-revoke-own")
	p.waitNoDialog()
}

// Rotating a key in the console shows its new secret once, with how long
// the old one keeps working; the new one works and the old one stops.
// Revoking the session's own key signs the console out.
func TestConsoleAdminKeyRotateAndRevokeOwn(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	worker := tn.key(t, tenancy.RoleWorker)
	admin := tn.key(t, tenancy.RoleAdmin, "*")
	p := signedIn(t, admin.Token, "/console/keys", "keys")
	p.waitText(fmt.Sprintf(`tr[data-key=%q]`, admin.ID), "this session")

	p.click(fmt.Sprintf(`button[data-rotate=%q]`, worker.ID))
	p.waitFor("#key-grace")
	p.setValue("#key-grace", "1h")
	p.click("#key-rotate-ok")
	p.waitFor("#key-secret")
	secret := eval[string](p, query("#key-secret")+".value")
	require.NotEmpty(t, secret)
	require.NotEqual(t, worker.Token, secret)
	p.waitText("#key-grace-until", "keeps working until")
	_, err := tn.client(secret).ListQueues(ctx(t))
	require.NoError(t, err, "the rotated secret does not work")
	_, err = tn.client(worker.Token).ListQueues(ctx(t))
	require.NoError(t, err, "the old secret stopped within its grace period")
	assertSecretNotStored(t, p, secret)
	p.click("#key-done")
	p.waitNoDialog()
	assert.False(t, eval[bool](p, "document.documentElement.outerHTML.includes("+js(secret)+")"), "the closed dialog left the secret in the page")
	k, err := tn.owner.GetKey(ctx(t), worker.ID)
	require.NoError(t, err)
	assert.NotNil(t, k.RotatedAt)

	// Revoking the session's own key warns, then signs out.
	p.click(fmt.Sprintf(`button[data-revoke=%q]`, admin.ID))
	p.waitFor("#key-revoke-own")
	p.click("#confirm-ok")
	p.waitFor(signInForm)
	assert.Equal(t, 401, p.apiJSON("GET", "/console/api/session", nil, nil).Status)
	k, err = tn.owner.GetKey(ctx(t), admin.ID)
	require.NoError(t, err)
	assert.NotNil(t, k.RevokedAt)
}

// assertSecretNotStored checks secret is in no web storage and no cookie the
// page can read.
func assertSecretNotStored(t *testing.T, p *page, secret string) {
	t.Helper()
	for k, v := range p.storage() {
		assert.NotContains(t, v, secret, "%s holds the secret", k)
		assert.NotContains(t, k, secret)
	}
	assert.NotContains(t, eval[string](p, "document.cookie"), secret, "document.cookie holds the secret")
}

// assertAPIStatus checks err is an API error with status.
func assertAPIStatus(t *testing.T, err error, status int) {
	t.Helper()
	var apiErr *client.Error
	if assert.True(t, errors.As(err, &apiErr), "not an API error: %v", err) {
		assert.Equal(t, status, apiErr.Status, "%v", err)
	}
}

// Namespaces in the console: create one with settings, edit it, see the
// server refuse to delete it while deletion protection is on, delete it
// once off, and switch the console to another namespace.
func TestConsoleAdminNamespaces(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	_, err := tn.owner.CreateNamespace(ctx(t), "staging")
	require.NoError(t, err)
	p := signedIn(t, tn.ownerKey, "/console/namespaces", "namespaces")
	p.waitFor(`tr[data-namespace="staging"]`)
	assert.Contains(t, p.text(fmt.Sprintf(`tr[data-namespace=%q]`, tn.namespace)), "current")

	// Create.
	p.click("#namespace-new")
	p.waitFor("#ns-name")
	p.setValue("#ns-name", "Bad Name")
	p.click("#ns-save")
	p.waitFor("#ns-name-error")
	p.setValue("#ns-name", "reports")
	p.setValue("#ns-description", "monthly reports")
	p.setValue("#ns-retention", "7d")
	p.click("#ns-save")
	row := `tr[data-namespace="reports"]`
	p.waitText(row, "monthly reports")
	p.waitNoDialog()
	assert.Contains(t, p.text(row), "7 days")
	got, err := tn.owner.GetNamespace(ctx(t), "reports")
	require.NoError(t, err)
	assert.Equal(t, "monthly reports", got.Description)
	assert.Equal(t, "168h", got.Retention)
	assert.False(t, got.DeletionProtection)

	// Edit: deletion protection on.
	p.click(`button[data-edit-ns="reports"]`)
	p.waitFor("#ns-protect")
	assert.Equal(t, "7d", eval[string](p, query("#ns-retention")+".value"))
	p.click("#ns-protect")
	p.click("#ns-save")
	p.waitText(row+" .ns-protection", "on")
	p.waitNoDialog()
	got, err = tn.owner.GetNamespace(ctx(t), "reports")
	require.NoError(t, err)
	assert.True(t, got.DeletionProtection)
	p.shot("namespaces")

	// Delete: the server refuses while protected, and says why.
	p.click(`button[data-delete-ns="reports"]`)
	p.waitFor("#ns-confirm-name")
	assert.True(t, eval[bool](p, query("#namespace-delete-ok")+".disabled"), "delete is enabled before the name is typed")
	p.setValue("#ns-confirm-name", "reports")
	p.click("#namespace-delete-ok")
	p.waitText("#namespace-delete .error", "deletion protection")
	_, err = tn.owner.GetNamespace(ctx(t), "reports")
	require.NoError(t, err, "a protected namespace was deleted")
	p.click("#namespace-delete button:not(#namespace-delete-ok)") // cancel
	p.waitGone("#ns-confirm-name")
	p.waitNoDialog()

	// Protection off, then delete.
	p.click(`button[data-edit-ns="reports"]`)
	p.waitFor("#ns-protect")
	p.click("#ns-protect")
	p.click("#ns-save")
	p.waitText(row+" .ns-protection", "off")
	p.waitNoDialog()
	p.click(`button[data-delete-ns="reports"]`)
	p.setValue("#ns-confirm-name", "reports")
	p.click("#namespace-delete-ok")
	p.waitGone(row)
	p.waitNoDialog()
	_, err = tn.owner.GetNamespace(ctx(t), "reports")
	assertAPIStatus(t, err, http.StatusNotFound)

	// Switch the console to another namespace.
	p.click(`button[data-use-ns="staging"]`)
	p.until(waitTimeout, query("#namespace")+".value === 'staging'", "the console works in staging")
	p.goTo("/console/namespaces")
	p.waitScreen("namespaces")
	assert.Contains(t, p.text(`tr[data-namespace="staging"]`), "current")

	// On a phone the page does not scroll sideways: the table does.
	p.setViewport(390, 844)
	p.until(waitTimeout, "document.documentElement.scrollWidth <= window.innerWidth", "the namespaces screen fits a phone's width")
	p.shot("namespaces-phone")
}

// Roles in the console: the built-in roles show the actions the API
// gives them; a custom role with one permission is created and offered
// for new keys.
func TestConsoleAdminRoles(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	p := signedIn(t, tn.ownerKey, "/console/roles", "roles")

	// The console's copy of the built-in roles agrees with the server's.
	roles, err := tn.owner.ListRoles(ctx(t))
	require.NoError(t, err)
	for _, r := range roles {
		if !r.Builtin {
			continue
		}
		text := p.text(fmt.Sprintf(`tr[data-builtin-role=%q]`, r.Name))
		var want []string
		for _, perm := range r.Permissions {
			want = append(want, perm.Actions...)
		}
		got := eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll('tr[data-builtin-role=%q] code')].map(c => c.innerText.split(' ')[0])`, r.Name))
		assert.ElementsMatch(t, want, got, "built-in role %s: %s", r.Name, text)
	}

	p.click("#role-new")
	p.waitFor("#role-name")
	p.setValue("#role-name", "support")
	p.setValue("#role-description", "reads the email queues")
	p.setValue(`select[data-perm-action="0"]`, "job.read")
	p.setValue(`input[data-perm-ns="0"]`, tn.namespace)
	p.setValue(`input[data-perm-queues="0"]`, "emails.*")
	p.shot("role-editor")
	p.click("#role-save")
	row := `tr[data-role="support"]`
	p.waitText(row, "emails.*")
	p.waitNoDialog()
	assert.Contains(t, p.text(row), "job.read")
	p.shot("roles")
	got, err := tn.owner.GetRole(ctx(t), "support")
	require.NoError(t, err)
	assert.Equal(t, "reads the email queues", got.Description)
	require.Len(t, got.Permissions, 1)
	assert.Equal(t, []string{"job.read"}, got.Permissions[0].Actions)
	assert.Equal(t, []string{tn.namespace}, got.Permissions[0].Namespaces)
	assert.Equal(t, []string{"emails.*"}, got.Permissions[0].Queues)

	// A built-in role's name is refused before it is sent.
	p.click("#role-new")
	p.setValue("#role-name", "viewer")
	p.click("#role-save")
	p.waitText("#role-name-error", "built-in")
	p.click("#role-dialog button:not(#role-save):not([data-perm-remove]):not(#role-add-perm)") // cancel
	p.waitGone("#role-name")
	p.waitNoDialog()

	// The new key dialog offers the custom role with the built-in ones.
	p.goTo("/console/keys")
	p.waitScreen("keys")
	p.click("#key-new")
	p.until(waitTimeout, query(`#key-role option[value="support"]`), "the key dialog offers the custom role")
	for _, r := range []tenancy.Role{tenancy.RoleOwner, tenancy.RoleAdmin, tenancy.RoleViewer} {
		assert.Equal(t, 1, p.count(fmt.Sprintf(`#key-role option[value=%q]`, r)), "an owner may grant %s", r)
	}
	assert.True(t, strings.Contains(p.text("#key-new-dialog"), "Namespaces"))
	p.click("#key-new-dialog button:not(#key-create)") // cancel
	p.waitNoDialog()

	// Edit: one more permission; rows over the same patterns are one permission.
	p.goTo("/console/roles")
	p.waitScreen("roles")
	p.click(`button[data-edit-role="support"]`)
	p.waitFor(`input[data-perm-queues="0"]`)
	assert.True(t, eval[bool](p, query("#role-name")+".disabled"), "a role's name is editable")
	p.click("#role-add-perm")
	p.setValue(`select[data-perm-action="1"]`, "job.manage")
	p.click("#role-save")
	p.waitText(row, "job.manage")
	p.waitNoDialog()
	got, err = tn.owner.GetRole(ctx(t), "support")
	require.NoError(t, err)
	require.Len(t, got.Permissions, 1, "%+v", got.Permissions)
	assert.Equal(t, []string{"job.read", "job.manage"}, got.Permissions[0].Actions)

	// Delete.
	p.click(`button[data-delete-role="support"]`)
	p.click("#confirm-ok")
	p.waitGone(row)
	_, err = tn.owner.GetRole(ctx(t), "support")
	assertAPIStatus(t, err, http.StatusNotFound)
}
