package gateway

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// The fake control's backups: a catalog per tenant, downloads of a given
// size, and the queries and restores it was sent.

type fakeBackups struct {
	list      map[string][]wire.Backup // tenant → backups
	policies  map[string]wire.BackupPolicy
	queries   [][]string // the ?namespace= of each list
	restores  []wire.RestoreRequest
	deleted   []string
	body      func(w http.ResponseWriter) // writes a download's body; none: 16 bytes
	unhealthy bool                        // every backup route answers 503 no_leader
}

func (fc *fakeControl) backupRoutes(mux *http.ServeMux) {
	h := func(f http.HandlerFunc) http.HandlerFunc {
		return fc.internal(func(w http.ResponseWriter, r *http.Request) {
			if fc.backups.unhealthy {
				w.Header().Set("Retry-After", "3")
				writeErr(w, apierr.New(apierr.NoLeader, "no leader"))
				return
			}
			f(w, r)
		})
	}
	mux.HandleFunc("POST /internal/v1/tenants/{tid}/backups", h(fc.postBackup))
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/backups", h(fc.getBackups))
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/backups/{id}", h(fc.getBackup))
	mux.HandleFunc("DELETE /internal/v1/tenants/{tid}/backups/{id}", h(fc.deleteBackup))
	mux.HandleFunc("POST /internal/v1/tenants/{tid}/backups/{id}/restore", h(fc.postRestore))
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/namespaces/{ns}/backup-policy", h(fc.getPolicy))
	mux.HandleFunc("PUT /internal/v1/tenants/{tid}/namespaces/{ns}/backup-policy", h(fc.putPolicy))
	mux.HandleFunc("DELETE /internal/v1/tenants/{tid}/namespaces/{ns}/backup-policy", h(fc.deletePolicy))
	// Downloads are served outside the lock: a slow body must not stall
	// the rest of the fake.
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/backups/{id}/download", gatewayOnly(fc.download))
}

// addBackup puts a completed backup of tenant tid's namespace ns in the catalog.
func (fc *fakeControl) addBackup(tid, ns string) string {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.nextID++
	id := wire.BackupIDPrefix + strconv.Itoa(fc.nextID)
	if fc.backups.list == nil {
		fc.backups.list = map[string][]wire.Backup{}
	}
	fc.backups.list[tid] = append(fc.backups.list[tid], wire.Backup{ID: id, Namespace: ns, State: wire.BackupCompleted,
		Kind: wire.BackupManual, CreatedAt: jan(3), Size: 16})
	return id
}

func (fc *fakeControl) findBackupLocked(tid, id string) (wire.Backup, bool) {
	i := slices.IndexFunc(fc.backups.list[tid], func(b wire.Backup) bool { return b.ID == id })
	if i < 0 {
		return wire.Backup{}, false
	}
	return fc.backups.list[tid][i], true
}

func (fc *fakeControl) postBackup(w http.ResponseWriter, r *http.Request) {
	var in wire.CreateBackupRequest
	_ = json.NewDecoder(r.Body).Decode(&in)
	tid := r.PathValue("tid")
	if _, ok := fc.namespaces[tid][in.Namespace]; !ok {
		writeErr(w, apierr.New(apierr.NotFound, "namespace not found"))
		return
	}
	fc.nextID++
	b := wire.Backup{ID: wire.BackupIDPrefix + strconv.Itoa(fc.nextID), Namespace: in.Namespace, State: wire.BackupRunning,
		Kind: wire.BackupManual, CreatedAt: jan(3)}
	if fc.backups.list == nil {
		fc.backups.list = map[string][]wire.Backup{}
	}
	fc.backups.list[tid] = append(fc.backups.list[tid], b)
	writeJSON(w, http.StatusAccepted, b)
}

func (fc *fakeControl) getBackups(w http.ResponseWriter, r *http.Request) {
	nss := r.URL.Query()["namespace"]
	fc.backups.queries = append(fc.backups.queries, nss)
	out := wire.BackupList{Backups: []wire.Backup{}}
	for _, b := range fc.backups.list[r.PathValue("tid")] {
		if len(nss) == 0 || slices.Contains(nss, b.Namespace) {
			out.Backups = append(out.Backups, b)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (fc *fakeControl) getBackup(w http.ResponseWriter, r *http.Request) {
	b, ok := fc.findBackupLocked(r.PathValue("tid"), r.PathValue("id"))
	if !ok {
		writeErr(w, apierr.New(apierr.NotFound, "backup not found"))
		return
	}
	writeJSON(w, http.StatusOK, b)
}

func (fc *fakeControl) deleteBackup(w http.ResponseWriter, r *http.Request) {
	tid, id := r.PathValue("tid"), r.PathValue("id")
	if _, ok := fc.findBackupLocked(tid, id); !ok {
		writeErr(w, apierr.New(apierr.NotFound, "backup not found"))
		return
	}
	fc.backups.list[tid] = slices.DeleteFunc(fc.backups.list[tid], func(b wire.Backup) bool { return b.ID == id })
	fc.backups.deleted = append(fc.backups.deleted, id)
	w.WriteHeader(http.StatusNoContent)
}

func (fc *fakeControl) postRestore(w http.ResponseWriter, r *http.Request) {
	b, ok := fc.findBackupLocked(r.PathValue("tid"), r.PathValue("id"))
	if !ok {
		writeErr(w, apierr.New(apierr.NotFound, "backup not found"))
		return
	}
	var in wire.RestoreRequest
	_ = json.NewDecoder(r.Body).Decode(&in)
	fc.backups.restores = append(fc.backups.restores, in)
	target := in.TargetNamespace
	if in.Replace {
		target = b.Namespace
	}
	b.LastRestore = &wire.BackupRestore{ID: wire.RestoreIDPrefix + "1", TargetNamespace: target, State: wire.BackupRunning, CreatedAt: jan(4)}
	writeJSON(w, http.StatusAccepted, b)
}

func (fc *fakeControl) download(w http.ResponseWriter, r *http.Request) {
	fc.mu.Lock()
	_, ok := fc.findBackupLocked(r.PathValue("tid"), r.PathValue("id"))
	body := fc.backups.body
	unhealthy := fc.backups.unhealthy
	fc.mu.Unlock()
	switch {
	case unhealthy:
		w.Header().Set("Retry-After", "3")
		writeErr(w, apierr.New(apierr.NoLeader, "no leader"))
	case !ok:
		writeErr(w, apierr.New(apierr.NotFound, "backup not found"))
	case body != nil:
		w.Header().Set("Content-Type", wire.BackupContentType)
		body(w)
	default:
		w.Header().Set("Content-Type", wire.BackupContentType)
		w.Header().Set("Content-Length", "16")
		_, _ = w.Write([]byte("0123456789abcdef"))
	}
}

func (fc *fakeControl) getPolicy(w http.ResponseWriter, r *http.Request) {
	p, ok := fc.backups.policies[r.PathValue("tid")+"/"+r.PathValue("ns")]
	if !ok {
		writeErr(w, apierr.New(apierr.NotFound, "no backup policy"))
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (fc *fakeControl) putPolicy(w http.ResponseWriter, r *http.Request) {
	var in wire.BackupPolicyRequest
	_ = json.NewDecoder(r.Body).Decode(&in)
	if in.Cron == "" {
		writeErr(w, apierr.Field("cron", "cron is required"))
		return
	}
	if fc.backups.policies == nil {
		fc.backups.policies = map[string]wire.BackupPolicy{}
	}
	p := wire.BackupPolicy{Namespace: r.PathValue("ns"), Cron: in.Cron, Timezone: "UTC", Retention: in.Retention, Enabled: true}
	fc.backups.policies[r.PathValue("tid")+"/"+r.PathValue("ns")] = p
	writeJSON(w, http.StatusOK, p)
}

func (fc *fakeControl) deletePolicy(w http.ResponseWriter, r *http.Request) {
	k := r.PathValue("tid") + "/" + r.PathValue("ns")
	if _, ok := fc.backups.policies[k]; !ok {
		writeErr(w, apierr.New(apierr.NotFound, "no backup policy"))
		return
	}
	delete(fc.backups.policies, k)
	w.WriteHeader(http.StatusNoContent)
}

// backupState is a copy of what the fake control was sent.
func (fc *fakeControl) backupState() fakeBackups {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	b := fc.backups
	b.queries = slices.Clone(b.queries)
	b.restores = slices.Clone(b.restores)
	b.deleted = slices.Clone(b.deleted)
	return b
}

func (fc *fakeControl) setBackups(f func(*fakeBackups)) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	f(&fc.backups)
}
