package control

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// fakeMoveShard serves the /internal/v1/move/* routes as the move
// contract (docs/internal-api.md) says a shard leader does, over mutual
// TLS with a shard node's certificate, to control certificates only. As
// a source it holds each namespace's keys (which a test changes while a
// move runs), a session per namespace (the token and the keys as of its
// last snapshot), a fence with its expiry and a moved tombstone; as a
// target, a move mark and the keys applied under it. Streams are real
// internal/backup streams; a delta's deletions are records of kind 'd'.
type fakeMoveShard struct {
	addr, id string

	mu       sync.Mutex
	data     map[string]map[string]string // by shard namespace: key → value
	sessions map[string]moveSession       // source: by shard namespace
	fences   map[string]fakeFence         // source: by shard namespace
	moved    map[string]string            // source: shard namespace → the shard it moved to
	marks    map[string]string            // target: shard namespace → token
	staged   map[string]map[string]string // target: what was applied under the mark
	calls    []string                     // "step ns" in the order asked
	fail     map[string]int               // step → status to answer
	gates    map[string]chan struct{}     // step → held until closed
	reached  chan string                  // gets a step when it reaches its gate
	onDelta  func()                       // runs before each delta is taken
}

type moveSession struct {
	token string
	snap  map[string]string
}

type fakeFence struct {
	token string
	until time.Time
	ttlMS int64
}

var moveKinds = map[byte]string{'j': "jobs", 'd': "deletes"}

func newFakeMoveShard(t *testing.T, ca *pkitest.CA, id pki.Identity) *fakeMoveShard {
	t.Helper()
	fs := &fakeMoveShard{id: id.Shard, data: map[string]map[string]string{}, sessions: map[string]moveSession{},
		fences: map[string]fakeFence{}, moved: map[string]string{}, marks: map[string]string{}, staged: map[string]map[string]string{},
		fail: map[string]int{}, gates: map[string]chan struct{}{}, reached: make(chan string, 64)}
	fs.addr = serveFakeShard(t, ca, id, fs, fs.openGates)
	return fs
}

func (fs *fakeMoveShard) openGates() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for step, g := range fs.gates {
		close(g)
		delete(fs.gates, step)
	}
}

// gate holds step until the returned function is called.
func (fs *fakeMoveShard) gate(step string) (open func()) {
	g := make(chan struct{})
	fs.mu.Lock()
	fs.gates[step] = g
	fs.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			fs.mu.Lock()
			if fs.gates[step] == g {
				delete(fs.gates, step)
			}
			fs.mu.Unlock()
			close(g)
		})
	}
}

func (fs *fakeMoveShard) failStep(step string, status int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.fail[step] = status
}

// set sets keys of namespace sns (a value of "" deletes the key).
func (fs *fakeMoveShard) set(sns string, kv map[string]string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d := fs.data[sns]
	if d == nil {
		d = map[string]string{}
		fs.data[sns] = d
	}
	for k, v := range kv {
		if v == "" {
			delete(d, k)
		} else {
			d[k] = v
		}
	}
}

func (fs *fakeMoveShard) get(sns string) map[string]string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return maps.Clone(fs.data[sns])
}

func (fs *fakeMoveShard) steps() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]string, len(fs.calls))
	for i, c := range fs.calls {
		out[i], _, _ = strings.Cut(c, " ")
	}
	return out
}

func (fs *fakeMoveShard) state(sns string) (fence fakeFence, mark, moved string, session bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	_, session = fs.sessions[sns]
	return fs.fences[sns], fs.marks[sns], fs.moved[sns], session
}

func (fs *fakeMoveShard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if peer, ok := pki.PeerIdentity(r.TLS); !ok || peer.Role != pki.RoleControl {
		writeFakeError(w, http.StatusForbidden, "control only")
		return
	}
	step, ok := strings.CutPrefix(r.URL.Path, "/internal/v1/move/")
	sns, token := r.Header.Get(wire.ShardNamespaceHeader), r.Header.Get(wire.MoveTokenHeader)
	if !ok || sns == "" || token == "" {
		writeFakeError(w, http.StatusBadRequest, "not a move request")
		return
	}
	fs.mu.Lock()
	fs.calls = append(fs.calls, step+" "+sns)
	status, g := fs.fail[step], fs.gates[step]
	fs.mu.Unlock()
	if g != nil {
		fs.reached <- step
		select {
		case <-g:
		case <-r.Context().Done():
			return
		}
	}
	if status != 0 {
		writeFakeError(w, status, "the shard refused "+step)
		return
	}
	get := r.Method == http.MethodGet
	switch {
	case step == "snapshot" && get, step == "delta" && get:
		fs.stream(w, step, sns, token)
	case step == "apply" && r.Method == http.MethodPost:
		fs.apply(w, r, sns, token)
	case r.Method == http.MethodPost:
		fs.command(w, r, step, sns, token)
	default:
		http.NotFound(w, r)
	}
}

// stream answers a snapshot (every key) or a delta (what changed since
// the session's last snapshot) and keeps the new snapshot.
func (fs *fakeMoveShard) stream(w http.ResponseWriter, step, sns, token string) {
	fs.mu.Lock()
	onDelta := fs.onDelta
	fs.mu.Unlock()
	if step == "delta" && onDelta != nil {
		onDelta()
	}
	fs.mu.Lock()
	now := maps.Clone(fs.data[sns])
	sess, ok := fs.sessions[sns]
	if step == "delta" && (!ok || sess.token != token) {
		fs.mu.Unlock()
		writeFakeError(w, http.StatusConflict, "no move session for this namespace and token: start the move over")
		return
	}
	fs.sessions[sns] = moveSession{token: token, snap: now}
	fs.mu.Unlock()
	var recs []backup.Record
	for _, k := range slices.Sorted(maps.Keys(now)) {
		if step == "snapshot" || sess.snap[k] != now[k] {
			recs = append(recs, backup.Record{Kind: 'j', Key: []byte(k), Value: []byte(now[k])})
		}
	}
	if step == "delta" {
		for _, k := range slices.Sorted(maps.Keys(sess.snap)) {
			if _, ok := now[k]; !ok {
				recs = append(recs, backup.Record{Kind: 'd', Key: []byte(k)})
			}
		}
	}
	w.Header().Set("Content-Type", wire.BackupContentType)
	bw, err := backup.NewWriter(w, backup.Header{Namespace: sns, ShardID: fs.id, CreatedAt: time.Now().UTC(), Kinds: moveKinds})
	if err != nil {
		return
	}
	for _, rec := range recs {
		if bw.Write(rec) != nil {
			return
		}
	}
	_, _ = bw.Close(nil)
}

// apply verifies the whole stream, then applies it under the mark.
func (fs *fakeMoveShard) apply(w http.ResponseWriter, r *http.Request, sns, token string) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeFakeError(w, http.StatusBadRequest, err.Error())
		return
	}
	recs, err := readFakeStream(bytes.NewReader(raw))
	if err != nil {
		writeFakeError(w, http.StatusBadRequest, err.Error())
		return
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.marks[sns] != token {
		writeFakeError(w, http.StatusConflict, "the namespace's move mark is not this token's")
		return
	}
	var res struct {
		Records int64 `json:"records"`
		Deletes int64 `json:"deletes"`
		Bytes   int64 `json:"bytes"`
	}
	for _, rec := range recs {
		if rec.Kind == 'd' {
			delete(fs.staged[sns], string(rec.Key))
			res.Deletes++
		} else {
			fs.staged[sns][string(rec.Key)] = string(rec.Value)
			res.Records++
		}
	}
	res.Bytes = int64(len(raw))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}

// command is one of the small replicated steps.
func (fs *fakeMoveShard) command(w http.ResponseWriter, r *http.Request, step, sns, token string) {
	body, _ := io.ReadAll(r.Body)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	switch step {
	case "begin":
		if m := fs.marks[sns]; (m != "" && m != token) || len(fs.data[sns]) > 0 {
			writeFakeError(w, http.StatusConflict, "the namespace holds data")
			return
		}
		fs.marks[sns], fs.staged[sns] = token, map[string]string{}
		delete(fs.moved, sns)
	case "end":
		if fs.marks[sns] != token {
			writeFakeError(w, http.StatusConflict, "the namespace's move mark is not this token's")
			return
		}
		fs.data[sns] = fs.staged[sns]
		delete(fs.marks, sns)
		delete(fs.staged, sns)
	case "abort":
		if fs.marks[sns] == token {
			delete(fs.marks, sns)
			delete(fs.staged, sns)
		}
	case "fence":
		var req struct {
			TTLMS int64 `json:"ttl_ms"`
		}
		if json.Unmarshal(body, &req) != nil || req.TTLMS < 1000 || req.TTLMS > 120000 {
			writeFakeError(w, http.StatusBadRequest, "ttl_ms must be 1000..120000")
			return
		}
		if f, ok := fs.fences[sns]; ok && f.token != token && time.Now().Before(f.until) {
			writeFakeError(w, http.StatusConflict, "fenced by another move")
			return
		}
		fs.fences[sns] = fakeFence{token: token, until: time.Now().Add(time.Duration(req.TTLMS) * time.Millisecond), ttlMS: req.TTLMS}
	case "unfence":
		if fs.fences[sns].token == token {
			delete(fs.fences, sns)
		}
		delete(fs.sessions, sns)
	case "finish":
		var req wire.NamespaceMoveRequest
		if json.Unmarshal(body, &req) != nil || req.ToShard == "" {
			writeFakeError(w, http.StatusBadRequest, "to_shard is required")
			return
		}
		delete(fs.data, sns)
		delete(fs.fences, sns)
		delete(fs.sessions, sns)
		fs.moved[sns] = req.ToShard
	default:
		writeFakeError(w, http.StatusNotFound, "no such step")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{}`))
}
