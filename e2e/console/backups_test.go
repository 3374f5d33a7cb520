package console

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// backupTimeout bounds a backup or a restore of a few jobs on a loaded
// 2-core box (the list is polled every 1.5 s while one runs).
const backupTimeout = 60 * time.Second

func backupRow(id string) string { return fmt.Sprintf(`tr[data-backup=%q]`, id) }

// The scenario: a namespace with a few jobs is backed up from the
// console, the backup completes (state, jobs and checksum shown without a
// reload), and is restored into a new namespace, whose jobs the console
// then shows. A replace restore asks for the namespace's name first.
func TestConsoleBackupsBackUpAndRestore(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	for i := range 3 {
		tn.enqueue(t, "bk.q", map[string]int{"n": i})
	}
	p := signedIn(t, tn.ownerKey, "/console/backups", "backups")
	p.waitFor("#backup-policy-none")

	p.click("#backup-now")
	p.waitFor("tr[data-backup]")
	id := eval[string](p, `document.querySelector('tr[data-backup]').dataset.backup`)
	p.until(backupTimeout, query(backupRow(id)+`[data-state="completed"]`)+` || `+query(backupRow(id)+`[data-state="failed"]`), "backup "+id+" finished")
	p.shot("backups")
	if st := eval[string](p, query(backupRow(id))+".dataset.state"); st != "completed" {
		// A failed backup shows why, and offers only its deletion.
		detail := p.text(`[data-backup-detail=` + js(id) + `]`)
		assert.Contains(t, detail, "Failed: ")
		assert.Zero(t, p.count(`[data-download=`+js(id)+`]`)+p.count(`[data-restore=`+js(id)+`]`), "a failed backup offers download or restore")
		assert.Equal(t, 1, p.count(`[data-delete=`+js(id)+`]`))
		p.fail("backup %s %s: %s", id, st, detail)
	}
	assert.Equal(t, "3", p.text(backupRow(id)+` [data-col="jobs"]`))
	p.waitText("#backups-notice", "completed: 3 jobs")
	b, err := tn.owner.GetBackup(ctx(t), id)
	require.NoError(t, err)
	assert.Equal(t, b.Checksum[:12], p.text(backupRow(id)+` [data-col="checksum"]`))
	// The download link works with the session cookie alone (a link sends no namespace header).
	href := eval[string](p, query(`[data-download=`+js(id)+`]`)+`.getAttribute('href')`)
	dl := p.apiJSON("GET", href, nil, nil)
	assert.Equal(t, 200, dl.Status, "download: %.200s", dl.Body)
	assert.NotEmpty(t, dl.Body)

	// A replace needs the namespace's name typed, and says a pre_restore backup comes first.
	p.click(`[data-restore=` + js(id) + `]`)
	p.click("#restore-mode-replace")
	p.waitText("#restore-replace-warning", "pre_restore")
	assert.True(t, eval[bool](p, `document.querySelector('#restore-ok').disabled`), "a replace restore can be sent without the typed name")
	p.setValue("#restore-confirm", tn.namespace+"x")
	assert.True(t, eval[bool](p, `document.querySelector('#restore-ok').disabled`))
	p.setValue("#restore-confirm", tn.namespace)
	assert.False(t, eval[bool](p, `document.querySelector('#restore-ok').disabled`))
	p.shot("backups-restore-replace")

	// Into a new namespace: one that exists is refused by the server, in the dialog.
	p.click("#restore-mode-new")
	p.setValue("#restore-target", tn.namespace)
	p.click("#restore-ok")
	p.waitFor("#restore-form .error")
	p.setValue("#restore-target", "restored")
	p.click("#restore-ok")
	p.waitNoDialog("#restore-form")
	p.until(backupTimeout, query(`[data-backup-detail=`+js(id)+`] [data-restore-state="completed"]`)+` || `+
		query(`[data-backup-detail=`+js(id)+`] [data-restore-state="failed"]`), "the restore finished")
	p.waitText(`[data-backup-detail=`+js(id)+`]`, "Restored into restored")
	p.waitText("#backups-notice", "Restored into restored (3 jobs")
	p.shot("backups-restored")

	p.click(`[data-switch-ns="restored"]`)
	p.waitScreen("dashboard")
	p.goTo("/console/queues/bk.q")
	p.waitScreen("queue")
	assert.Equal(t, "restored", eval[string](p, `document.querySelector('#namespace').value`))
	p.waitText(`#queue-counts [data-state=""] .v`, "3")
}

// The policy: the server's 400 marks the field it names and changes
// nothing; a good one is saved and read back.
func TestConsoleBackupsPolicy(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	p := signedIn(t, tn.ownerKey, "/console/backups", "backups")
	p.waitFor("#backup-policy-form")

	p.setValue("#policy-cron", "every day")
	p.click("#policy-save")
	p.waitText("#backup-policy-error", "cron")
	assert.Equal(t, "true", eval[string](p, `document.querySelector('#policy-cron').getAttribute('aria-invalid')`))

	p.setValue("#policy-cron", "0 3 * * *")
	p.setValue("#policy-timezone", "Mars/Olympus")
	p.click("#policy-save")
	p.waitText("#backup-policy-error", "Mars/Olympus")
	assert.Equal(t, "true", eval[string](p, `document.querySelector('#policy-timezone').getAttribute('aria-invalid')`))
	assert.NotEqual(t, "true", eval[string](p, `String(document.querySelector('#policy-cron').getAttribute('aria-invalid'))`))

	p.setValue("#policy-timezone", "Europe/Paris")
	p.setValue("#policy-retention", "0")
	p.click("#policy-save")
	p.waitText("#backup-policy-error", "retention")
	p.shot("backups-policy-error")
	_, err := tn.owner.GetBackupPolicy(ctx(t), tn.namespace)
	assertAPIStatus(t, err, 404)

	p.setValue("#policy-retention", "14")
	p.click("#policy-save")
	p.waitText("#backup-policy-notice", "saved")
	p.waitFor("#backup-policy-next")
	pol, err := tn.owner.GetBackupPolicy(ctx(t), tn.namespace)
	require.NoError(t, err)
	assert.Equal(t, "0 3 * * *", pol.Cron)
	assert.Equal(t, "Europe/Paris", pol.Timezone)
	assert.Equal(t, 14, pol.Retention)
	assert.True(t, pol.Enabled)

	p.click("#policy-remove")
	p.waitFor("#backup-policy-none")
	_, err = tn.owner.GetBackupPolicy(ctx(t), tn.namespace)
	assertAPIStatus(t, err, 404)
}

// A viewer (backup.read) sees the backups and the policy, and none of
// what it may not do.
func TestConsoleBackupsViewerSeesNoActions(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	tn.enqueue(t, "bv.q", map[string]int{"n": 1})
	b, err := tn.owner.CreateBackup(ctx(t), tn.namespace)
	require.NoError(t, err)
	_, err = tn.owner.PutBackupPolicy(ctx(t), tn.namespace, client.BackupPolicyRequest{Cron: "@daily", Retention: 3})
	require.NoError(t, err)
	k := tn.key(t, tenancy.RoleViewer)
	p := signedIn(t, k.Token, "/console/backups", "backups")
	p.waitFor(backupRow(b.ID))
	p.waitText("#backup-policy-cron", "@daily")
	dl := p.apiJSON("GET", "/api/v1/backups/"+b.ID+"/download", nil, nil)
	assert.Contains(t, []int{403, 404}, dl.Status, "a viewer downloaded a backup")
	for _, sel := range []string{"#backup-now", "[data-restore]", "[data-download]", "[data-delete]", "#backup-policy-form", "#policy-save"} {
		assert.Zero(t, p.count(sel), "%s shown to a viewer", sel)
	}
	p.setViewport(390, 844)
	p.waitFor("#backups-table")
	assert.True(t, eval[bool](p, "document.documentElement.scrollWidth <= window.innerWidth"), "the backups screen scrolls sideways on a phone")
	p.shot("backups-phone")
}

// Deleting a backup asks first; then it is gone from the list and the
// catalog. (Whether the backup completed or failed, it can be deleted
// once it is no longer running.)
func TestConsoleBackupsDelete(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	tn.enqueue(t, "bd.q", map[string]int{"n": 1})
	b, err := tn.owner.CreateBackup(ctx(t), tn.namespace)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		g, err := tn.owner.GetBackup(ctx(t), b.ID)
		return err == nil && g.State != "running"
	}, backupTimeout, 200*time.Millisecond, "backup %s still running", b.ID)
	p := signedIn(t, tn.ownerKey, "/console/backups", "backups")
	p.click(`[data-delete=` + js(b.ID) + `]`)
	p.waitText("#backup-delete", "cannot be restored afterwards")
	p.click("#backup-delete #confirm-ok")
	p.waitNoDialog()
	p.waitGone(backupRow(b.ID))
	p.waitText("#backups-notice", "deleted")
	_, err = tn.owner.GetBackup(ctx(t), b.ID)
	assertAPIStatus(t, err, 404)
}

// A replace restore, confirmed by the namespace's name, takes a
// pre_restore backup first (listed as "before restore") and puts the
// namespace back as the backup holds it.
func TestConsoleBackupsReplaceRestore(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	for i := range 2 {
		tn.enqueue(t, "br.q", map[string]int{"n": i})
	}
	b, err := tn.owner.CreateBackup(ctx(t), tn.namespace)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		g, err := tn.owner.GetBackup(ctx(t), b.ID)
		return err == nil && g.State != "running"
	}, backupTimeout, 200*time.Millisecond, "backup %s still running", b.ID)
	tn.enqueue(t, "br.q", map[string]int{"n": 2})

	p := signedIn(t, tn.ownerKey, "/console/backups", "backups")
	p.click(`[data-restore=` + js(b.ID) + `]`)
	p.click("#restore-mode-replace")
	p.setValue("#restore-confirm", tn.namespace)
	p.click("#restore-ok")
	p.waitNoDialog("#restore-form")
	detail := `[data-backup-detail=` + js(b.ID) + `]`
	p.until(backupTimeout, query(detail+` [data-restore-state="completed"]`)+` || `+query(detail+` [data-restore-state="failed"]`), "the restore finished")
	p.waitText(detail, "Restored over "+tn.namespace)
	p.waitText(detail, "what it replaced is kept as bkp_")
	p.waitText(`#backups-table`, "before restore")

	p.goTo("/console/queues/br.q")
	p.waitScreen("queue")
	p.waitText(`#queue-counts [data-state=""] .v`, "2")
}
