package console

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/e2e/internal/freeport"
	"github.com/jobbie/jobbie/tenancy"
)

// shardNode is a self-hosted `jobbie shard` node started by a test.
type shardNode struct {
	proc    *devproc.Proc
	gossip  string // its gossip address, which later nodes join through
	http    string // its listener's address (its cluster's member API)
	dataDir string
}

func (n *shardNode) log() string { b, _ := os.ReadFile(n.proc.LogPath); return string(b) }

// writeGossipKey writes a fresh gossip key (hex) to a file in dir, as the
// commands shown tell the tenant to, and answers its path.
func writeGossipKey(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "gossip.key")
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	require.NoError(t, os.WriteFile(path, []byte(hex.EncodeToString(secret)+"\n"), 0o600))
	return path
}

// commandLine is the `jobbie shard …` line for node id among the commands
// the console shows (the last such line when id is "").
func commandLine(t *testing.T, commands, id string) string {
	t.Helper()
	var line string
	for _, l := range strings.Split(commands, "\n") {
		if strings.HasPrefix(l, "jobbie shard ") && (id == "" || strings.Contains(l, " --node-id "+id+" ")) {
			line = l
		}
	}
	require.NotEmpty(t, line, "no command for node %q in:\n%s", id, commands)
	return line
}

// startShardNode runs a `jobbie shard …` line as the console shows it:
// its flags as shown, the paths and listen addresses this machine's (the
// hosted CA, a data directory of its own under dir, the gossip key, fresh
// loopback ports).
func startShardNode(t *testing.T, line, dir, gossipKey string) *shardNode {
	t.Helper()
	args := strings.Fields(strings.TrimPrefix(line, "jobbie "))
	id := ""
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--node-id" {
			id = args[i+1]
		}
	}
	require.NotEmpty(t, id, "no --node-id in %q", line)
	local := map[string]string{"--ca-file": filepath.Join(srv.dir, "pki", "ca.crt"), "--data-dir": filepath.Join(dir, id), "--gossip-key-file": gossipKey}
	for i := 0; i+1 < len(args); i++ {
		if v, ok := local[args[i]]; ok {
			args[i+1] = v
		}
	}
	ports, err := freeport.Loopback(3)
	require.NoError(t, err)
	args = append(args, "--http", ports[0], "--raft", ports[1], "--gossip", ports[2])
	proc, err := devproc.Start(exec.Command(binary, args...), filepath.Join(dir, id+".log"), "")
	require.NoError(t, err)
	t.Cleanup(proc.Stop)
	return &shardNode{proc: proc, gossip: ports[2], http: ports[0], dataDir: local["--data-dir"]}
}

// refresher clicks the screen's Refresh until cond holds (no event
// announces a node), failing with the nodes' logs when one of them exits
// or it takes more than a minute.
func refresher(p *page, nodes ...*shardNode) func(cond, what string) {
	return func(cond, what string) {
		p.t.Helper()
		logs := func() string {
			var b strings.Builder
			for _, n := range nodes {
				b.WriteString(n.proc.LogPath + ":\n" + n.log() + "\n")
			}
			return b.String()
		}
		deadline := time.Now().Add(60 * time.Second)
		for !p.poll(time.Second, cond) {
			for _, n := range nodes {
				select {
				case <-n.proc.Exited():
					p.fail("a node exited: %s", logs())
				default:
				}
			}
			if time.Now().After(deadline) {
				p.fail("not within 60s: %s; node logs:\n%s", what, logs())
			}
			p.click("#shards-refresh")
		}
	}
}

// The owner grows a running one-node shard from the console and shrinks it
// again: the shard's last node cannot be removed (409, shown in the
// dialog); a token for one more node is shown once with the command that
// joins a new node id to the running group through a member's gossip
// address, and the shard expects one more node until it joins; the node
// started from that command joins and connects; removing it (its id
// typed) drops it from the list, the command shown then takes it out of
// the Raft group at the node that stays, and its id is not offered again. A shard
// whose token is still live gets no second one (409 shown). Another role
// sees the nodes and neither action; a phone shows it all without
// scrolling sideways.
func TestConsoleShardsAddAndRemoveNodes(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	dir := t.TempDir()
	gossipKey := writeGossipKey(t, dir)
	lab, err := tn.owner.CreateJoinToken(ctx(t), "lab", 10*time.Minute, 1)
	require.NoError(t, err)
	fresh, err := tn.owner.CreateJoinToken(ctx(t), "fresh", 10*time.Minute, 1)
	require.NoError(t, err)
	n1 := startShardNode(t, "jobbie shard --node-id n1 --bootstrap --join-token "+lab.Token+" --control-url "+srv.control+
		" --ca-file ca --data-dir d --gossip-key-file k", dir, gossipKey)

	p := signedIn(t, tn.ownerKey, "/console/shards", "shards")
	refresh := refresher(p, n1)
	row := shardRow(lab.ShardID)
	refresh(query(row+` [data-node="n1"][data-connected="true"]`), "n1 joined and connected")
	assert.Equal(t, "1 of 1", p.text(row+` [data-col="nodes"]`))

	// A one-node shard keeps its node: the server refuses, the dialog says why.
	assert.Equal(t, "Remove node n1 of shard lab", eval[string](p, query(row+` [data-remove-node="n1"]`)+`.getAttribute('aria-label')`))
	p.click(row + ` [data-remove-node="n1"]`)
	p.waitText("#shard-node-remove", "Type n1 to confirm")
	p.waitText("#shard-node-remove", "its id is retired")
	p.waitText("#shard-node-remove", "jobbie shard remove n1")
	assert.True(t, eval[bool](p, `document.querySelector('#shard-node-remove-ok').disabled`), "remove offered before the id is typed")
	p.setValue("#shard-node-remove-id", "n1")
	p.click("#shard-node-remove-ok")
	p.waitText("#shard-node-remove-conflict", "Not removed")
	p.waitText("#shard-node-remove-conflict", "last")
	p.shot("shards-node-remove-last")
	p.click("#shard-node-remove-form .dialog-footer button:not([type=submit])")
	p.waitNoDialog("#shard-node-remove-form")
	assert.True(t, p.visible(row+` [data-node="n1"]`))

	// A shard whose token still has nodes to join gets no second token.
	p.click(`[data-add-nodes=` + js(fresh.ShardID) + `]`)
	p.waitFor("#shard-nodes-form")
	p.click("#shard-nodes-ok")
	p.waitText("#shard-nodes-conflict", "still has nodes to join")
	p.click("#shard-nodes-form .dialog-footer button:not([type=submit])")
	p.waitNoDialog("#shard-nodes-form")

	// One more node for lab: a new id is suggested; a member's is refused here.
	assert.Equal(t, "Add nodes to shard lab", eval[string](p, query(`[data-add-nodes=`+js(lab.ShardID)+`]`)+`.getAttribute('aria-label')`))
	p.click(`[data-add-nodes=` + js(lab.ShardID) + `]`)
	p.waitFor("#shard-nodes-form")
	assert.Equal(t, "n2", eval[string](p, `document.querySelector('#shard-nodes-ids').value`))
	p.setValue("#shard-nodes-count", "2")
	p.until(waitTimeout, `document.querySelector('#shard-nodes-ids').value === 'n2 n3'`, "two ids suggested for two nodes")
	p.setValue("#shard-nodes-count", "1")
	p.setValue("#shard-nodes-ids", "n1")
	p.waitText("#shard-nodes-ids-error", "n1 is taken")
	assert.True(t, eval[bool](p, `document.querySelector('#shard-nodes-ok').disabled`), "a member's id offered")
	p.setValue("#shard-nodes-ids", "n2")
	p.setValue("#shard-nodes-expires", "1h")
	p.shot("shards-add-nodes")
	p.click("#shard-nodes-ok")
	p.waitFor("#shard-nodes-dialog #shard-token-shown")
	token := eval[string](p, `document.querySelector('#shard-nodes-dialog #shard-token').value`)
	require.True(t, strings.HasPrefix(token, "jst_"), "token %q", token)
	p.waitText("#shard-nodes-dialog [role=alert]", "shown once")
	cmd := p.text("#shard-nodes-dialog #shard-command")
	assert.Equal(t, 1, strings.Count(cmd, "jobbie shard "), "%s", cmd)
	assert.Contains(t, cmd, "--node-id n2 --join <n1-gossip-address> --join-token "+token+" --control-url <control-url> ")
	assert.NotContains(t, cmd, "--bootstrap")
	p.setValue("#shard-nodes-dialog #shard-control-url", srv.control)
	p.setValue("#shard-nodes-dialog #shard-gossip-addr", n1.gossip)
	p.waitText("#shard-nodes-dialog #shard-command", "--join "+n1.gossip+" ")
	p.waitText("#shard-nodes-dialog #shard-command", "--control-url "+srv.control+" ")
	line := commandLine(t, p.text("#shard-nodes-dialog #shard-command"), "n2")
	p.shot("shards-add-nodes-token")
	p.click("#shard-nodes-dialog #shard-token-done")
	p.waitNoDialog("#shard-token-shown")
	p.waitText("#shards-notice", "1 more node of shard lab")
	assert.False(t, eval[bool](p, `document.documentElement.outerHTML.includes(`+js(token)+`)`), "the token is still in the page")

	// The shard now expects a second node, until its token's expiry.
	p.waitText(row+` [data-col="nodes"]`, "1 of 2")
	assert.Equal(t, 1, p.count(row+` [data-col="token-expires"] time`), "the token's expiry is not shown")
	shards, err := tn.owner.Shards(ctx(t))
	require.NoError(t, err)
	got := map[string]int{}
	for _, sh := range shards {
		got[sh.ID] = sh.ExpectedNodes
		if sh.ID == lab.ShardID {
			require.NotNil(t, sh.TokenExpiresAt)
			assert.WithinDuration(t, time.Now().Add(time.Hour), *sh.TokenExpiresAt, 5*time.Minute)
		}
	}
	assert.Equal(t, 2, got[lab.ShardID])

	// The node started with the command shown joins the running group.
	n2 := startShardNode(t, line, dir, gossipKey)
	refresh = refresher(p, n1, n2)
	refresh(query(row+` [data-node="n2"][data-connected="true"]`), "n2 joined and connected")
	refresh(`!`+query(row+` [data-col="token-expires"] time`), "the spent token's expiry gone")
	assert.Equal(t, "2 of 2", p.text(row+` [data-col="nodes"]`))

	// Another role sees both nodes and neither action; on a phone too.
	v := signedIn(t, tn.key(t, tenancy.RoleAdmin).Token, "/console/shards", "shards")
	v.waitFor(row + ` [data-node="n2"]`)
	assert.Zero(t, v.count("[data-add-nodes]"), "add nodes shown to an admin")
	assert.Zero(t, v.count("[data-remove-node]"), "remove shown to an admin")
	v.setViewport(390, 844)
	v.waitFor(row)
	assert.True(t, eval[bool](v, "document.documentElement.scrollWidth <= window.innerWidth"), "the shards screen scrolls sideways on a phone")

	// On a phone, the owner removes n2: its id typed, it leaves the list.
	p.setViewport(390, 844)
	p.click(row + ` [data-remove-node="n2"]`)
	p.waitText("#shard-node-remove", "Type n2 to confirm")
	assert.True(t, eval[bool](p, `(() => { const r = document.querySelector('#shard-node-remove').getBoundingClientRect(); return r.left >= 0 && r.right <= window.innerWidth; })()`), "the remove dialog does not fit a phone")
	p.setValue("#shard-node-remove-id", "n1")
	assert.True(t, eval[bool](p, `document.querySelector('#shard-node-remove-ok').disabled`), "another node's id confirms")
	raftRemove := p.text("#shard-raft-remove")
	assert.Equal(t, "jobbie shard remove n2 --url <n1-http-address> --data-dir /var/lib/jobbie", raftRemove)
	p.setValue("#shard-node-remove-id", "n2")
	p.shot("shards-node-remove")
	p.click("#shard-node-remove-ok")
	p.waitNoDialog("#shard-node-remove-form")
	p.waitGone(row + ` [data-node="n2"]`)
	p.waitText("#shards-notice", "Node n2 removed from shard lab")

	// The command shown, run as n1 (its address, its data directory),
	// takes n2 out of the Raft group, and n2 stops by itself.
	args := strings.Fields(strings.TrimPrefix(raftRemove, "jobbie "))
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--url":
			args[i+1] = n1.http
		case "--data-dir":
			args[i+1] = n1.dataDir
		}
	}
	out, err := exec.CommandContext(ctx(t), binary, args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "removed n2")
	select {
	case <-n2.proc.Exited():
	case <-time.After(60 * time.Second):
		t.Fatalf("n2 still runs a minute after its removal from the Raft group:\n%s", n2.log())
	}
	assert.Equal(t, "1 of 1", p.text(row+` [data-col="nodes"]`))
	assert.True(t, eval[bool](p, "document.documentElement.scrollWidth <= window.innerWidth"), "the shards screen scrolls sideways on a phone")
	p.shot("shards-phone")
	shards, err = tn.owner.Shards(ctx(t))
	require.NoError(t, err)
	for _, sh := range shards {
		if sh.ID == lab.ShardID {
			assert.Equal(t, []string{"n1"}, sh.Nodes)
			assert.Equal(t, 1, sh.ExpectedNodes)
		}
	}

	// The removed id is retired: the next suggestion passes it, and typing it is refused.
	p.click(`[data-add-nodes=` + js(lab.ShardID) + `]`)
	p.waitFor("#shard-nodes-form")
	assert.Equal(t, "n3", eval[string](p, `document.querySelector('#shard-nodes-ids').value`))
	p.setValue("#shard-nodes-ids", "n2")
	p.waitText("#shard-nodes-ids-error", "n2 is taken")
	p.click("#shard-nodes-form .dialog-footer button:not([type=submit])")
	p.waitNoDialog("#shard-nodes-form")
}
