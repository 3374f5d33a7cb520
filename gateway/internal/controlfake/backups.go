package controlfake

import (
	"context"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Backups is the fake control's backups: a catalog per tenant, downloads,
// and the queries and restores it was sent.
type Backups struct {
	List     map[string][]wire.Backup // tenant → backups
	Policies map[string]wire.BackupPolicy
	Queries  [][]string // the namespaces of each list
	Restores []wire.RestoreOrder
	Deleted  []string
	// Body writes a download's body; none: 16 bytes, of a known length.
	Body func(w io.Writer)
	// Unhealthy makes every backup call answer 503 no_leader.
	Unhealthy bool
}

// backupsCall enters a backup call: the lock, and no leader while
// unhealthy.
func (fc *Control) backupsCall() error {
	if err := fc.enter(); err != nil {
		return err
	}
	if fc.Backups.Unhealthy {
		return unavailable(apierr.NoLeader, "no leader", "3")
	}
	return nil
}

// AddBackup puts a completed backup of tenant tid's namespace ns in the
// catalog and returns its id.
func (fc *Control) AddBackup(tid, ns string) string {
	fc.Lock()
	defer fc.Unlock()
	fc.nextID++
	id := wire.BackupIDPrefix + strconv.Itoa(fc.nextID)
	fc.addBackupLocked(tid, wire.Backup{ID: id, Namespace: ns, State: wire.BackupCompleted, Kind: wire.BackupManual, CreatedAt: Jan(3), Size: 16})
	return id
}

func (fc *Control) addBackupLocked(tid string, b wire.Backup) {
	if fc.Backups.List == nil {
		fc.Backups.List = map[string][]wire.Backup{}
	}
	fc.Backups.List[tid] = append(fc.Backups.List[tid], b)
}

func (fc *Control) findBackupLocked(tid, id string) (wire.Backup, bool) {
	i := slices.IndexFunc(fc.Backups.List[tid], func(b wire.Backup) bool { return b.ID == id })
	if i < 0 {
		return wire.Backup{}, false
	}
	return fc.Backups.List[tid][i], true
}

var backupNotFound = apierr.New(apierr.NotFound, "backup not found")

func (fc *Control) CreateBackup(ctx context.Context, _, tid string, in wire.CreateBackupRequest) (wire.Backup, error) {
	tid = strings.Clone(tid)
	return keyed(fc, ctx, tid, "backups", func() (wire.Backup, error) { return fc.createBackup(tid, in) })
}

func (fc *Control) createBackup(tid string, in wire.CreateBackupRequest) (wire.Backup, error) {
	defer fc.Unlock()
	if err := fc.backupsCall(); err != nil {
		return wire.Backup{}, err
	}
	if _, ok := fc.namespaces[tid][in.Namespace]; !ok {
		return wire.Backup{}, refuse(apierr.New(apierr.NotFound, "namespace not found"))
	}
	fc.nextID++
	b := wire.Backup{ID: wire.BackupIDPrefix + strconv.Itoa(fc.nextID), Namespace: in.Namespace, State: wire.BackupRunning,
		Kind: wire.BackupManual, CreatedAt: Jan(3)}
	fc.addBackupLocked(tid, b)
	return clone(b), nil
}

func (fc *Control) ListBackups(_ context.Context, _, tid string, nss []string) (wire.BackupList, error) {
	tid = strings.Clone(tid)
	defer fc.Unlock()
	if err := fc.backupsCall(); err != nil {
		return wire.BackupList{}, err
	}
	fc.Backups.Queries = append(fc.Backups.Queries, clone(nss))
	out := wire.BackupList{Backups: []wire.Backup{}}
	for _, b := range fc.Backups.List[tid] {
		if len(nss) == 0 || slices.Contains(nss, b.Namespace) {
			out.Backups = append(out.Backups, b)
		}
	}
	return clone(out), nil
}

// backupCall enters a call about backup id of tenant tid, and finds it.
func (fc *Control) backupCall(tid, id string) (wire.Backup, error) {
	if err := fc.backupsCall(); err != nil {
		return wire.Backup{}, err
	}
	b, ok := fc.findBackupLocked(tid, id)
	if !ok {
		return wire.Backup{}, refuse(backupNotFound)
	}
	return b, nil
}

func (fc *Control) Backup(_ context.Context, _, tid, id string) (wire.Backup, error) {
	tid, id = strings.Clone(tid), strings.Clone(id)
	defer fc.Unlock()
	b, err := fc.backupCall(tid, id)
	return clone(b), err
}

func (fc *Control) DeleteBackup(_ context.Context, _, tid, id string) error {
	tid, id = strings.Clone(tid), strings.Clone(id)
	defer fc.Unlock()
	if _, err := fc.backupCall(tid, id); err != nil {
		return err
	}
	fc.Backups.List[tid] = slices.DeleteFunc(fc.Backups.List[tid], func(b wire.Backup) bool { return b.ID == id })
	fc.Backups.Deleted = append(fc.Backups.Deleted, id)
	return nil
}

func (fc *Control) RestoreBackup(_ context.Context, _, tid, id string, order wire.RestoreOrder) (wire.Backup, error) {
	in := order.RestoreRequest
	tid, id = strings.Clone(tid), strings.Clone(id)
	defer fc.Unlock()
	b, err := fc.backupCall(tid, id)
	if err != nil {
		return wire.Backup{}, err
	}
	fc.Backups.Restores = append(fc.Backups.Restores, clone(order))
	target := in.TargetNamespace
	if in.Replace {
		target = b.Namespace
	}
	b.LastRestore = &wire.BackupRestore{ID: wire.RestoreIDPrefix + "1", TargetNamespace: target, State: wire.BackupRunning, CreatedAt: Jan(4)}
	return clone(b), nil
}

// DownloadBackup streams Backups.Body through a pipe, outside the lock: a
// slow body must not stall the rest of the fake.
func (fc *Control) DownloadBackup(ctx context.Context, _, tid, id string) (*controlapi.Download, error) {
	tid, id = strings.Clone(tid), strings.Clone(id)
	err := fc.backupsCall()
	_, ok := fc.findBackupLocked(tid, id)
	body := fc.Backups.Body
	fc.Unlock()
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, refuse(backupNotFound)
	case body == nil:
		return &controlapi.Download{Body: io.NopCloser(strings.NewReader("0123456789abcdef")), Length: 16}, nil
	}
	pr, pw := io.Pipe()
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	go func() {
		defer stop()
		body(pw)
		pw.Close()
	}()
	return &controlapi.Download{Body: pr, Length: -1}, nil
}

func (fc *Control) BackupPolicy(_ context.Context, _, tid, ns string) (wire.BackupPolicy, error) {
	tid, ns = strings.Clone(tid), strings.Clone(ns)
	defer fc.Unlock()
	if err := fc.backupsCall(); err != nil {
		return wire.BackupPolicy{}, err
	}
	p, ok := fc.Backups.Policies[tid+"/"+ns]
	if !ok {
		return wire.BackupPolicy{}, refuse(apierr.New(apierr.NotFound, "no backup policy"))
	}
	return clone(p), nil
}

func (fc *Control) PutBackupPolicy(_ context.Context, _, tid, ns string, in wire.BackupPolicyRequest) (wire.BackupPolicy, error) {
	tid, ns = strings.Clone(tid), strings.Clone(ns)
	defer fc.Unlock()
	if err := fc.backupsCall(); err != nil {
		return wire.BackupPolicy{}, err
	}
	if in.Cron == "" {
		return wire.BackupPolicy{}, refuse(apierr.Field("cron", "cron is required"))
	}
	if fc.Backups.Policies == nil {
		fc.Backups.Policies = map[string]wire.BackupPolicy{}
	}
	p := wire.BackupPolicy{Namespace: ns, Cron: in.Cron, Timezone: "UTC", Retention: in.Retention, Enabled: true}
	fc.Backups.Policies[tid+"/"+ns] = p
	return clone(p), nil
}

func (fc *Control) DeleteBackupPolicy(_ context.Context, _, tid, ns string) error {
	tid, ns = strings.Clone(tid), strings.Clone(ns)
	defer fc.Unlock()
	if err := fc.backupsCall(); err != nil {
		return err
	}
	if _, ok := fc.Backups.Policies[tid+"/"+ns]; !ok {
		return refuse(apierr.New(apierr.NotFound, "no backup policy"))
	}
	delete(fc.Backups.Policies, tid+"/"+ns)
	return nil
}

// BackupState is a copy of what the fake control was sent.
func (fc *Control) BackupState() Backups {
	fc.Lock()
	defer fc.Unlock()
	b := fc.Backups
	b.Queries = slices.Clone(b.Queries)
	b.Restores = slices.Clone(b.Restores)
	b.Deleted = slices.Clone(b.Deleted)
	return b
}

// SetBackups changes the backups' state with f.
func (fc *Control) SetBackups(f func(*Backups)) {
	fc.Lock()
	defer fc.Unlock()
	f(&fc.Backups)
}
