package control

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// fakeBackupShard serves GET /internal/v1/backup and POST
// /internal/v1/restore as the backup contract says a shard leader does,
// over mutual TLS with a shard node's certificate, to control
// certificates only: each namespace (by wire.ShardNamespaceHeader) is a
// set of records, written as a real internal/backup stream and restored
// from one only once the whole stream has verified.
type fakeBackupShard struct {
	addr, id string

	mu      sync.Mutex
	data    map[string][]backup.Record // by shard namespace
	index   uint64
	fail    int           // answer this status to backups when set
	asNS    string        // when set, backups name this namespace in their header
	cut     bool          // when set, backups stop half way (a truncated stream)
	gate    chan struct{} // when set, a backup stops after its first record until it is closed
	started chan struct{} // gets a value when a backup has begun streaming
}

var fakeKinds = map[byte]string{'j': "jobs", 'q': "queues", 's': "schedules"}

func newFakeBackupShard(t *testing.T, ca *pkitest.CA, id pki.Identity) *fakeBackupShard {
	t.Helper()
	fs := &fakeBackupShard{id: id.Shard, data: map[string][]backup.Record{}, started: make(chan struct{}, 16)}
	fs.addr = serveFakeShard(t, ca, id, fs, func() {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		if fs.gate != nil {
			select {
			case <-fs.gate:
			default:
				close(fs.gate)
			}
		}
	})
	return fs
}

// put sets namespace ns of tenant tid to recs (kept in key order).
func (fs *fakeBackupShard) put(tid, ns string, recs ...backup.Record) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	recs = slices.Clone(recs)
	slices.SortFunc(recs, func(a, b backup.Record) int { return bytes.Compare(a.Key, b.Key) })
	fs.data[tenancy.ShardNamespace(tid, ns)] = recs
}

func (fs *fakeBackupShard) get(tid, ns string) []backup.Record {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return slices.Clone(fs.data[tenancy.ShardNamespace(tid, ns)])
}

func (fs *fakeBackupShard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if peer, ok := pki.PeerIdentity(r.TLS); !ok || peer.Role != pki.RoleControl {
		http.Error(w, "no", http.StatusForbidden)
		return
	}
	sns := r.Header.Get(wire.ShardNamespaceHeader)
	tid, ns, err := tenancy.ParseShardNamespace(sns)
	if err != nil {
		http.Error(w, "namespace header", http.StatusBadRequest)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/internal/v1/backup":
		fs.backup(w, tid, ns, sns)
	case r.Method == http.MethodPost && r.URL.Path == "/internal/v1/restore":
		fs.restore(w, r, sns)
	default:
		http.NotFound(w, r)
	}
}

func (fs *fakeBackupShard) backup(w http.ResponseWriter, tid, ns, sns string) {
	fs.mu.Lock()
	fail, gate, asNS, cut := fs.fail, fs.gate, fs.asNS, fs.cut
	recs := slices.Clone(fs.data[sns])
	fs.index++
	idx := fs.index
	fs.mu.Unlock()
	if fail != 0 {
		writeFakeError(w, fail, "the shard could not read the namespace")
		return
	}
	w.Header().Set("Content-Type", wire.BackupContentType)
	if asNS != "" {
		ns = asNS
	}
	if cut {
		var buf bytes.Buffer
		bw, _ := backup.NewWriter(&buf, backup.Header{Tenant: tid, Namespace: ns, ShardID: fs.id, RaftIndex: idx, CreatedAt: time.Now().UTC(), Kinds: fakeKinds})
		for _, rec := range recs {
			_ = bw.Write(rec)
		}
		_, _ = bw.Close(nil)
		_, _ = w.Write(buf.Bytes()[:buf.Len()/2])
		return
	}
	bw, err := backup.NewWriter(w, backup.Header{Tenant: tid, Namespace: ns, ShardID: fs.id, RaftIndex: idx, CreatedAt: time.Now().UTC(), Kinds: fakeKinds})
	if err != nil {
		return
	}
	select {
	case fs.started <- struct{}{}:
	default:
	}
	for i, rec := range recs {
		if err := bw.Write(rec); err != nil {
			return
		}
		if i == 0 && gate != nil {
			w.(http.Flusher).Flush()
			<-gate
		}
	}
	_, _ = bw.Close(nil)
}

func (fs *fakeBackupShard) restore(w http.ResponseWriter, r *http.Request, sns string) {
	recs, err := readFakeStream(r.Body)
	if err != nil {
		writeFakeError(w, http.StatusBadRequest, err.Error())
		return
	}
	res := wire.RestoreResult{}
	for _, rec := range recs {
		res.Records++
		switch fakeKinds[rec.Kind] {
		case "jobs":
			res.Jobs++
		case "queues":
			res.Queues++
		case "schedules":
			res.Schedules++
		}
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if r.URL.Query().Get("mode") == "new" && len(fs.data[sns]) > 0 {
		writeFakeError(w, http.StatusConflict, "the namespace holds data")
		return
	}
	fs.data[sns] = recs
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}

func writeFakeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(wire.ErrorBody{Error: &wire.Error{Code: "fake", Message: msg}})
}
