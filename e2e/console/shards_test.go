package console

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/tenancy"
)

func shardRow(id string) string { return `tr[data-shard=` + js(id) + `]` }

// joinStatus is control's answer to a join with token and a certificate
// request that is not one: 400 (csr) when the token is valid, as the
// request is checked before the token is spent (so nothing is spent),
// 401 when it is not.
func joinStatus(t *testing.T, token string) int {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"token": token, "node_id": "probe", "csr": "not a CSR"})
	req, err := http.NewRequestWithContext(ctx(t), "POST", srv.control+"/control/v1/join", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err := srv.ops.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

// A tenant without self-hosted shards: the screen says what one is and
// links to the docs' page on self-hosting; the owner is offered to add one.
func TestConsoleShardsEmptyState(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	p := signedIn(t, tn.ownerKey, "/console/", "dashboard")
	p.click(mainNav + ` a[href="/console/shards"]`)
	p.waitScreen("shards")
	p.waitText("#shards-empty", "no self-hosted shard")
	p.waitText("#shards-empty", "cluster of 1, 3 or 5")
	assert.Contains(t, eval[string](p, `document.querySelector('.shards-intro a').href`), "docs/operate/self-hosting.md")
	assert.True(t, p.visible("#shard-add"), "the owner is not offered to add a shard")
	assert.Zero(t, p.count("#shards-table"))
	p.shot("shards-empty")
}

// The owner adds a shard: the token is shown once, with a copy button and
// the commands that join its nodes (a placeholder for the control URL the
// console cannot know, filled in when typed); control takes that token;
// once the dialog is closed the token is nowhere in the page, and the
// shard is listed.
func TestConsoleShardsAddShowsTheTokenOnce(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	p := signedIn(t, tn.ownerKey, "/console/shards", "shards")
	p.click("#shard-add")
	p.waitFor("#shard-add-form")
	// A name is required: nothing is sent without one.
	p.click("#shard-add-ok")
	p.waitText("#shard-name-error", "required")
	p.setValue("#shard-name", "dc-paris")
	p.setValue("#shard-nodes", "3")
	p.setValue("#shard-expires", "6h")
	p.click("#shard-add-ok")
	p.waitFor("#shard-token-shown")

	token := eval[string](p, `document.querySelector('#shard-token').value`)
	require.True(t, strings.HasPrefix(token, "jst_"), "token %q", token)
	p.waitText("#shard-token-shown [role=alert]", "shown once")
	assert.True(t, p.visible("#shard-token-copy"))
	assert.Equal(t, "Copy the join token", eval[string](p, `document.querySelector('#shard-token-copy').getAttribute('aria-label')`))
	cmd := p.text("#shard-command")
	assert.Equal(t, 3, strings.Count(cmd, "jobbie shard --node-id n"), "%s", cmd)
	assert.Equal(t, 3, strings.Count(cmd, "--join-token "+token+" --control-url <control-url> "), "%s", cmd)
	assert.Equal(t, 1, strings.Count(cmd, "--bootstrap"), "%s", cmd)
	p.setValue("#shard-control-url", srv.control)
	p.waitText("#shard-command", "--control-url "+srv.control+" ")
	p.click("#shard-token-copy")
	p.waitText(".shard-copied", "copied")
	p.shot("shards-token")

	// The shard exists, and control takes the token shown (a made-up one it does not).
	shards, err := tn.owner.Shards(ctx(t))
	require.NoError(t, err)
	require.Len(t, shards, 1)
	id := shards[0].ID
	assert.Equal(t, "dc-paris", shards[0].Name)
	assert.Contains(t, p.text("#shard-token-shown"), id)
	assert.Equal(t, http.StatusBadRequest, joinStatus(t, token), "control refuses the token the console showed")
	assert.Equal(t, http.StatusUnauthorized, joinStatus(t, token[:len(token)-4]+"AAAA"))

	p.click("#shard-token-done")
	p.waitNoDialog("#shard-token-shown")
	p.waitFor(shardRow(id))
	p.waitText("#shards-notice", "dc-paris")
	assert.Equal(t, "dc-paris", p.text(shardRow(id)+` [data-col="name"]`))
	assert.Equal(t, "0 of 3", p.text(shardRow(id)+` [data-col="nodes"]`))
	assert.False(t, eval[bool](p, `document.documentElement.outerHTML.includes(`+js(token)+`)`), "the token is still in the page")
	for k, v := range p.storage() {
		assert.NotContains(t, v, token, "the token is kept in %s", k)
	}
	// Opening the dialog again starts a new shard: the token is not shown again.
	p.click("#shard-add")
	p.waitFor("#shard-add-form")
	assert.Zero(t, p.count("#shard-token"))
	assert.Equal(t, "", eval[string](p, `document.querySelector('#shard-name').value`))
	p.click("#shard-add-form .dialog-footer button:not([type=submit])")
	p.waitNoDialog("#shard-add-form")
	p.shot("shards")
}

// Revoking needs the shard's name typed; then the shard is gone from the
// list and from the API.
func TestConsoleShardsRevoke(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	keep, err := tn.owner.CreateJoinToken(ctx(t), "keep", 10*time.Minute, 1)
	require.NoError(t, err)
	gone, err := tn.owner.CreateJoinToken(ctx(t), "edge-1", 10*time.Minute, 1)
	require.NoError(t, err)
	p := signedIn(t, tn.ownerKey, "/console/shards", "shards")
	p.waitFor(shardRow(keep.ShardID))
	assert.Equal(t, "Revoke shard edge-1", eval[string](p, query(`[data-revoke=`+js(gone.ShardID)+`]`)+`.getAttribute('aria-label')`))
	p.click(`[data-revoke=` + js(gone.ShardID) + `]`)
	p.waitText("#shard-revoke", "Type edge-1 to confirm")
	assert.True(t, eval[bool](p, `document.querySelector('#shard-revoke-ok').disabled`), "revoke offered before the name is typed")
	p.setValue("#shard-revoke-name", "keep")
	assert.True(t, eval[bool](p, `document.querySelector('#shard-revoke-ok').disabled`), "another shard's name confirms")
	p.setValue("#shard-revoke-name", "edge-1")
	assert.False(t, eval[bool](p, `document.querySelector('#shard-revoke-ok').disabled`))
	p.shot("shards-revoke")
	p.click("#shard-revoke-ok")
	p.waitNoDialog("#shard-revoke-form")
	p.waitGone(shardRow(gone.ShardID))
	p.waitText("#shards-notice", "edge-1")
	assert.True(t, p.visible(shardRow(keep.ShardID)))
	shards, err := tn.owner.Shards(ctx(t))
	require.NoError(t, err)
	require.Len(t, shards, 1)
	assert.Equal(t, keep.ShardID, shards[0].ID)
	assert.Equal(t, http.StatusUnauthorized, joinStatus(t, gone.Token), "the revoked shard's token still joins")
}

// The namespace dialog offers the tenant's shards: a namespace created on
// one says so, and the shard then holds it: revoking it is refused (409),
// which the revoke dialog shows as what to do.
func TestConsoleShardsNamespaceOnShard(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	sh, err := tn.owner.CreateJoinToken(ctx(t), "rack-7", 10*time.Minute, 1)
	require.NoError(t, err)
	_, err = tn.owner.CreateJoinToken(ctx(t), "rack-8", 10*time.Minute, 1)
	require.NoError(t, err)
	p := signedIn(t, tn.ownerKey, "/console/namespaces", "namespaces")
	p.click("#namespace-new")
	p.waitFor("#ns-shard")
	assert.Equal(t, "", eval[string](p, `document.querySelector('#ns-shard').value`), "the server's placement is not the default")
	assert.Equal(t, 3, p.count("#ns-shard option"))
	assert.Contains(t, p.text("#ns-shard"), "rack-7 ("+sh.ShardID+")")
	p.setValue("#ns-name", "onprem")
	p.setValue("#ns-shard", sh.ShardID)
	p.shot("namespaces-shard")
	p.click("#ns-save")
	p.waitNoDialog("#namespace-form")
	p.waitText("#namespaces-notice", "Namespace onprem created on self-hosted shard rack-7 ("+sh.ShardID+")")
	p.waitFor(`tr[data-namespace="onprem"]`)

	// The shard holds it: the server refuses to revoke it, and the console says why.
	assertAPIStatus(t, tn.owner.RevokeShard(ctx(t), sh.ShardID), 409)
	p.goTo("/console/shards")
	p.waitScreen("shards")
	p.click(`[data-revoke=` + js(sh.ShardID) + `]`)
	p.setValue("#shard-revoke-name", "rack-7")
	p.click("#shard-revoke-ok")
	p.waitText("#shard-revoke-conflict", "still holds namespaces")
	p.waitText("#shard-revoke-conflict", "holds 1 namespaces")
	p.shot("shards-revoke-conflict")
	p.click("#shard-revoke-form .dialog-footer button:not([type=submit])")
	p.waitNoDialog("#shard-revoke-form")
	assert.True(t, p.visible(shardRow(sh.ShardID)))

	// A namespace created without choosing goes where the server places it: not on a shard of the tenant's.
	_, err = tn.owner.CreateNamespace(ctx(t), "hosted")
	require.NoError(t, err)
	assertAPIStatus(t, tn.owner.RevokeShard(ctx(t), sh.ShardID), 409) // still one namespace: "onprem"
}

// Keys of other roles see the shards and none of the owner's controls,
// and the server refuses them anyway (an admin's "*" included: minting,
// adding nodes, removing one and revoking are the owner key's alone). On a phone and in dark mode
// the screen fits.
func TestConsoleShardsOtherRolesSeeNoControls(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	sh, err := tn.owner.CreateJoinToken(ctx(t), "dc1", 10*time.Minute, 1)
	require.NoError(t, err)
	for _, role := range []tenancy.Role{tenancy.RoleViewer, tenancy.RoleDeveloper, tenancy.RoleAdmin} {
		t.Run(string(role), func(t *testing.T) {
			k := tn.key(t, role)
			p := signedIn(t, k.Token, "/console/", "dashboard")
			p.click(mainNav + ` a[href="/console/shards"]`)
			p.waitScreen("shards")
			p.waitFor(shardRow(sh.ShardID))
			assert.Zero(t, p.count("#shard-add"), "add a shard shown to %s", role)
			assert.Zero(t, p.count("[data-revoke]"), "revoke shown to %s", role)
			assert.Zero(t, p.count("[data-add-nodes]"), "add nodes shown to %s", role)
			mint := p.apiJSON("POST", "/api/v1/shards/join-tokens", map[string]any{"name": "x"}, csrf)
			assert.Equal(t, 403, mint.Status, "%s minted a join token: %s", role, mint.Body)
			rev := p.apiJSON("DELETE", "/api/v1/shards/"+sh.ShardID, nil, csrf)
			assert.Equal(t, 403, rev.Status, "%s revoked a shard: %s", role, rev.Body)
			more := p.apiJSON("POST", "/api/v1/shards/"+sh.ShardID+"/join-tokens", map[string]any{"nodes": 1}, csrf)
			assert.Equal(t, 403, more.Status, "%s minted a token for more nodes: %s", role, more.Body)
			drop := p.apiJSON("DELETE", "/api/v1/shards/"+sh.ShardID+"/nodes/n1", nil, csrf)
			assert.Equal(t, 403, drop.Status, "%s removed a node: %s", role, drop.Body)
			if role == tenancy.RoleViewer {
				p.setViewport(390, 844)
				p.click("#theme-toggle")
				p.until(waitTimeout, `document.documentElement.dataset.theme === 'dark'`, "dark mode")
				p.waitFor("#shards-table")
				assert.True(t, eval[bool](p, "document.documentElement.scrollWidth <= window.innerWidth"), "the shards screen scrolls sideways on a phone")
				p.shot("shards-phone-dark")
			}
		})
	}
	shards, err := tn.owner.Shards(ctx(t))
	require.NoError(t, err)
	require.Len(t, shards, 1, "a shard was minted or revoked by a role that may not")
}

// The join command the console shows works as written: a node started
// with it (its flags as shown; the paths and listen addresses this
// machine's) joins the shard, and the list shows it joined and connected
// to this gateway, then not connected once it stops.
func TestConsoleShardsNodeJoinsWithTheCommandShown(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	p := signedIn(t, tn.ownerKey, "/console/shards", "shards")
	p.click("#shard-add")
	p.setValue("#shard-name", "lab")
	p.click("#shard-add-ok")
	p.waitFor("#shard-token-shown")
	p.setValue("#shard-control-url", srv.control)
	p.waitText("#shard-command", srv.control)
	line := commandLine(t, p.text("#shard-command"), "")
	p.click("#shard-token-done")
	p.waitNoDialog("#shard-token-shown")
	shards, err := tn.owner.Shards(ctx(t))
	require.NoError(t, err)
	require.Len(t, shards, 1)
	id := shards[0].ID

	dir := t.TempDir()
	node := startShardNode(t, line, dir, writeGossipKey(t, dir))
	refreshUntil := refresher(p, node)
	row := shardRow(id)
	refreshUntil(query(row+` [data-node="n1"][data-connected="true"]`), "n1 joined and connected here")
	assert.Equal(t, "1 of 1", p.text(row+` [data-col="nodes"]`))
	p.waitText(row+` [data-col="connected"]`, "n1 connected")
	// Health is asked of the connected node: healthy once it leads itself.
	health := row + ` [data-col="health"]`
	refreshUntil(query(health+`[data-health="healthy"]`), "the health cell says healthy")
	assert.Contains(t, p.text(health), "healthy")
	assert.NotContains(t, p.text(health), "unhealthy")
	assert.Contains(t, p.text(health), "leader n1")
	p.waitText(row+` [data-node-health="n1"]`, "leader, healthy")
	p.shot("shards-connected")

	node.proc.Stop()
	refreshUntil = refresher(p) // its exit is expected now
	refreshUntil(query(row+` [data-node="n1"][data-connected="false"]`), "n1 no longer connected once stopped")
	p.waitText(row+` [data-col="connected"]`, "n1 not here")
	// No node answers this gateway now: its health is unknown, not stale.
	refreshUntil(query(health+`[data-health="unknown"]`), "the health cell says unknown once the node stopped")
	assert.Contains(t, p.text(health), "unknown")
	assert.NotContains(t, p.text(health), "leader")
	assert.False(t, p.visible(row+` [data-node-health="n1"]`), "no node health without health")
	assert.Equal(t, "1 of 1", p.text(row+` [data-col="nodes"]`), "a stopped node is still a joined node")
}
