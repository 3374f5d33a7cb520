package service

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Live moves of a namespace (docs/internal-api.md, "Live namespace
// moves"). The source keeps, per namespace, a session on its leader: the
// Pebble snapshot its last stream was read from, so the next stream is
// the difference between it and a new one. The target writes what it is
// sent through a restore in move mode.

// MoveSessionIdle is how long a move session lives without a call.
const MoveSessionIdle = 10 * time.Minute

type moveSession struct {
	mu    sync.Mutex // held while a stream reads snap
	token string
	snap  *pebble.Snapshot // nil once dropped
	last  time.Time        // the end of its last call
}

// moveSessions are this node's sessions, by namespace.
type moveSessions struct {
	mu sync.Mutex
	m  map[string]*moveSession
}

// drop closes the session of ns (any token if token is "").
func (ms *moveSessions) drop(ns, token string) {
	ms.mu.Lock()
	s := ms.m[ns]
	if s == nil || token != "" && s.token != token {
		ms.mu.Unlock()
		return
	}
	delete(ms.m, ns)
	ms.mu.Unlock()
	s.close()
}

func (s *moveSession) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap != nil {
		_ = s.snap.Close()
		s.snap = nil
	}
}

// DropMoveSessions closes every session idle since before idleSince, or
// all of them (zero time): the leader's loop calls it, with zero once
// this node no longer leads.
func (s *Service) DropMoveSessions(idleSince time.Time) {
	s.moves.mu.Lock()
	var gone []*moveSession
	for ns, ses := range s.moves.m {
		if idleSince.IsZero() || ses.idleSince(idleSince) {
			gone = append(gone, ses)
			delete(s.moves.m, ns)
		}
	}
	s.moves.mu.Unlock()
	for _, ses := range gone {
		ses.close()
	}
}

func (s *moveSession) idleSince(t time.Time) bool {
	if !s.mu.TryLock() {
		return false // streaming
	}
	defer s.mu.Unlock()
	return s.last.Before(t)
}

// MoveSessions is how many move sessions this node holds.
func (s *Service) MoveSessions() int {
	s.moves.mu.Lock()
	defer s.moves.mu.Unlock()
	return len(s.moves.m)
}

// MoveTokenOK refuses a missing or malformed move token (400).
func MoveTokenOK(token string) error {
	if token == "" || len(token) > 128 {
		return apierr.Field(wire.MoveTokenHeader, "a move token of 1-128 characters is required")
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return apierr.Field(wire.MoveTokenHeader, "a move token holds only letters, digits, '_' and '-'")
		}
	}
	return nil
}

func moveArgs(ns, token string) error {
	if err := namespaceOK(ns); err != nil {
		return err
	}
	return MoveTokenOK(token)
}

// MoveSnapshot opens (or replaces) the move session of (ns, token) with a
// new snapshot and writes all of ns as it is there to w, as a backup.
// The session is registered before the stream starts and held while it
// is written: its reader may have the whole stream, and ask for a delta
// on another connection, before this call returns, and that delta then
// waits for the session rather than find none. A stream that fails
// leaves no session (a delta then answers ErrMoveSessionGone).
func (s *Service) MoveSnapshot(ns, token string, src BackupSource, w io.Writer) (backup.Manifest, error) {
	if err := moveArgs(ns, token); err != nil {
		return backup.Manifest{}, err
	}
	ses := &moveSession{token: token}
	ses.mu.Lock()
	s.moves.mu.Lock()
	if s.moves.m == nil {
		s.moves.m = map[string]*moveSession{}
	}
	old := s.moves.m[ns]
	s.moves.m[ns] = ses
	s.moves.mu.Unlock()
	if old != nil {
		old.close()
	}
	snap := s.node.DB().NewSnapshot()
	m, err := s.writeSnapshot(ns, snap, src, w)
	if err != nil {
		_ = snap.Close()
		ses.mu.Unlock()
		s.moves.mu.Lock()
		if s.moves.m[ns] == ses {
			delete(s.moves.m, ns)
		}
		s.moves.mu.Unlock()
		return m, err
	}
	ses.snap, ses.last = snap, s.cfg.Clock.Now()
	ses.mu.Unlock()
	return m, nil
}

// ErrMoveSessionGone refuses a delta with no session to diff from.
var ErrMoveSessionGone = apierr.New(apierr.Conflict, "no move session for this namespace and token on this node (the leader changed, restarted or it expired): start the move over")

// MoveDelta writes to w what changed in ns since the session's snapshot,
// as a delta stream (records set or changed, and deletions), from a new
// snapshot that the session keeps once the stream was written whole.
func (s *Service) MoveDelta(ns, token string, src BackupSource, w io.Writer) (backup.Manifest, error) {
	if err := moveArgs(ns, token); err != nil {
		return backup.Manifest{}, err
	}
	s.moves.mu.Lock()
	ses := s.moves.m[ns]
	s.moves.mu.Unlock()
	if ses == nil || ses.token != token {
		return backup.Manifest{}, ErrMoveSessionGone
	}
	ses.mu.Lock()
	defer ses.mu.Unlock()
	if ses.snap == nil {
		return backup.Manifest{}, ErrMoveSessionGone
	}
	snap := s.node.DB().NewSnapshot()
	m, err := s.writeDelta(ns, ses.snap, snap, src, w)
	if err != nil {
		_ = snap.Close()
		return m, err
	}
	_ = ses.snap.Close()
	ses.snap, ses.last = snap, s.cfg.Clock.Now()
	return m, nil
}

// MoveSessionOK checks there is a session to diff from before the API
// answers 200: once the stream started, an error can only cut it short.
func (s *Service) MoveSessionOK(ns, token string) error {
	if err := moveArgs(ns, token); err != nil {
		return err
	}
	s.moves.mu.Lock()
	ses := s.moves.m[ns]
	s.moves.mu.Unlock()
	if ses == nil || ses.token != token {
		return ErrMoveSessionGone
	}
	return nil
}

func (s *Service) streamHeader(ns string, snap *pebble.Snapshot, src BackupSource, delta bool) (backup.Header, error) {
	tid, name, err := tenancy.ParseShardNamespace(ns)
	if err != nil {
		return backup.Header{}, namespaceOK(ns)
	}
	index, err := replica.AppliedIndexOf(snap)
	if err != nil {
		return backup.Header{}, err
	}
	h := backup.Header{Tenant: tid, Namespace: name, ShardID: src.ShardID, RaftIndex: index, CreatedAt: src.Now.UTC(), Kinds: BackupKinds}
	if delta {
		h.Kinds = make(map[byte]string, len(BackupKinds)+1)
		for k, v := range BackupKinds {
			h.Kinds[k] = v
		}
		h.Kinds[backup.KindDelete] = backup.KindDeleteName
		h.Delta = true
	}
	return h, nil
}

// writeSnapshot writes every key of ns in snap to w as a backup stream.
func (s *Service) writeSnapshot(ns string, snap *pebble.Snapshot, src BackupSource, w io.Writer) (backup.Manifest, error) {
	bw, p, err := s.streamWriter(ns, snap, src, false, w)
	if err != nil {
		return backup.Manifest{}, err
	}
	it, err := snap.NewIter(prefixBounds(p))
	if err != nil {
		return backup.Manifest{}, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		rel := it.Key()[len(p):]
		if err := writeKept(bw, backup.Record{Kind: BackupKind(rel), Key: rel, Value: it.Value()}); err != nil {
			it.Close()
			return backup.Manifest{}, err
		}
	}
	if err := it.Close(); err != nil {
		return backup.Manifest{}, err
	}
	return bw.Close(nil)
}

// streamWriter starts a backup stream of ns as of snap on w, and returns
// it with ns's key prefix, to which the stream's keys are relative.
func (s *Service) streamWriter(ns string, snap *pebble.Snapshot, src BackupSource, delta bool, w io.Writer) (*backup.Writer, []byte, error) {
	h, err := s.streamHeader(ns, snap, src, delta)
	if err != nil {
		return nil, nil, err
	}
	bw, err := backup.NewWriter(w, h)
	if err != nil {
		return nil, nil, err
	}
	return bw, keys.Namespace(ns), nil
}

// prefixBounds bounds an iterator to the keys under prefix p.
func prefixBounds(p []byte) *pebble.IterOptions {
	return &pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)}
}

// writeDelta writes the difference of ns from old to cur: both
// snapshots' keys in one ordered merge; a key only in cur or with
// another value there is set, a key only in old is deleted.
func (s *Service) writeDelta(ns string, old, cur *pebble.Snapshot, src BackupSource, w io.Writer) (backup.Manifest, error) {
	bw, p, err := s.streamWriter(ns, cur, src, true, w)
	if err != nil {
		return backup.Manifest{}, err
	}
	opts := prefixBounds(p)
	a, err := old.NewIter(opts)
	if err != nil {
		return backup.Manifest{}, err
	}
	defer a.Close()
	b, err := cur.NewIter(opts)
	if err != nil {
		return backup.Manifest{}, err
	}
	defer b.Close()
	okA, okB := a.First(), b.First()
	for (okA || okB) && err == nil {
		c := 1 // a is done: only b's keys are left
		if okA && okB {
			c = bytes.Compare(a.Key(), b.Key())
		} else if okA {
			c = -1
		}
		switch {
		case c < 0:
			err = writeKept(bw, backup.Record{Kind: backup.KindDelete, Key: a.Key()[len(p):]})
			okA = a.Next()
		case c > 0:
			rel := b.Key()[len(p):]
			err = writeKept(bw, backup.Record{Kind: BackupKind(rel), Key: rel, Value: b.Value()})
			okB = b.Next()
		default:
			if !bytes.Equal(a.Value(), b.Value()) {
				rel := b.Key()[len(p):]
				err = writeKept(bw, backup.Record{Kind: BackupKind(rel), Key: rel, Value: b.Value()})
			}
			okA, okB = a.Next(), b.Next()
		}
	}
	if err != nil {
		return backup.Manifest{}, err
	}
	if err := errors.Join(a.Error(), b.Error()); err != nil {
		return backup.Manifest{}, err
	}
	return bw.Close(nil)
}

// MoveFence holds ns's writes for the move token for ttl, then wakes the
// fetches parked on its queues, which answer that the namespace is
// moving. It returns when the fence lapses, by the entry's clock.
func (s *Service) MoveFence(ctx context.Context, ns, token string, ttl time.Duration) (time.Time, error) {
	if err := moveArgs(ns, token); err != nil {
		return time.Time{}, err
	}
	if ttl < engine.MinFenceTTL || ttl > engine.MaxFenceTTL {
		return time.Time{}, apierr.Field("ttl_ms", "ttl_ms must be between 1000 and 120000; got %d", ttl.Milliseconds())
	}
	until, err := engine.MoveFence.Propose(ctx, s.node, &engine.MoveFenceCmd{NS: ns, Token: token, TTL: int64(ttl)})
	if err != nil {
		return time.Time{}, err
	}
	s.waiters.WakeNamespace(ns)
	return time.Unix(0, until).UTC(), nil
}

// MoveUnfence lets ns's writes go on (a cancelled or failed move) and
// drops the session.
func (s *Service) MoveUnfence(ctx context.Context, ns, token string) error {
	if err := moveArgs(ns, token); err != nil {
		return err
	}
	s.moves.drop(ns, token)
	_, err := engine.MoveUnfence.Propose(ctx, s.node, &engine.MoveTokenCmd{NS: ns, Token: token})
	return err
}

// MoveFinish removes ns, moved by token to shard to, from this shard.
func (s *Service) MoveFinish(ctx context.Context, ns, token, to string) error {
	if err := moveArgs(ns, token); err != nil {
		return err
	}
	if to == "" || len(to) > 128 {
		return apierr.Field("to_shard", "to_shard must name the shard the namespace moved to (1-128 characters)")
	}
	s.moves.drop(ns, "")
	_, err := engine.MoveFinish.Propose(ctx, s.node, &engine.MoveFinishCmd{NS: ns, Token: token, To: to})
	if err == nil {
		s.waiters.WakeNamespace(ns)
	}
	return err
}

// Moving says whether ns is fenced (wire.MovingFenced) or moved away
// (wire.MovingMoved) here, as last committed; "" if neither. A memory
// read, asked on every /api/v1 request.
func (s *Service) Moving(ns string) string { return s.eng.Moving(s.node.DB(), ns, s.now()) }

// MoveApplied is what the target wrote of one stream.
type MoveApplied struct {
	Records int64 `json:"records"`
	Deletes int64 `json:"deletes"`
	Bytes   int64 `json:"bytes"`
}

// MoveBegin starts a move of ns into this shard under token: a restore
// into a new namespace (or over an interrupted restore or move of its
// own), which clears a moved tombstone.
func (s *Service) MoveBegin(ctx context.Context, ns, token string) error {
	if err := moveArgs(ns, token); err != nil {
		return err
	}
	_, err := engine.RestoreBegin.Propose(ctx, s.node, &engine.RestoreBeginCmd{NS: ns, Token: token})
	return err
}

// ErrNotThisMove refuses a step of a move that does not hold the
// namespace's restore mark.
var ErrNotThisMove = apierr.New(apierr.Conflict, "this namespace is not being moved here by this move (begin it first, or it was aborted or taken over)")

// MoveApply writes a snapshot or delta stream (body) into ns: spooled and
// verified whole first, so a corrupt or truncated one changes nothing
// (400), then written through Raft in bounded chunks.
func (s *Service) MoveApply(ctx context.Context, ns, token string, body io.Reader) (MoveApplied, error) {
	var out MoveApplied
	if err := moveArgs(ns, token); err != nil {
		return out, err
	}
	if t, ok := engine.RestoreMarker(s.node.DB(), ns); !ok || t != token {
		return out, ErrNotThisMove
	}
	f, err := os.CreateTemp("", "jobbie-move-*")
	if err != nil {
		return out, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	n, err := io.Copy(f, body)
	if err != nil {
		return out, apierr.New(apierr.BadRequest, "reading the stream: %v", err)
	}
	out.Bytes = n
	if _, err := readBackup(f, nil); err != nil {
		return out, err
	}
	chunk := &engine.MoveChunkCmd{NS: ns, Token: token}
	size := 0
	flush := func() error {
		if len(chunk.Recs)+len(chunk.Dels) == 0 {
			return nil
		}
		_, err := engine.MoveChunk.Propose(ctx, s.node, chunk)
		chunk.Recs, chunk.Dels, size = chunk.Recs[:0], chunk.Dels[:0], 0
		if errors.Is(err, engine.ErrRestoreGone) {
			return ErrNotThisMove
		}
		return err
	}
	if _, err := readBackup(f, func(r backup.Record) error {
		if r.Kind == backup.KindDelete {
			chunk.Dels = append(chunk.Dels, r.Key)
			out.Deletes++
		} else {
			chunk.Recs = append(chunk.Recs, engine.RestoreRecord{Key: r.Key, Value: r.Value})
			out.Records++
		}
		if size += len(r.Key) + len(r.Value) + 16; size >= restoreChunkBytes {
			return flush()
		}
		return nil
	}); err != nil {
		return MoveApplied{}, err
	}
	if err := flush(); err != nil {
		return MoveApplied{}, err
	}
	return out, nil
}

// MoveEnd makes the moved namespace live here: its active jobs keep their
// leases. Again with the same token (a lost answer) it is done.
func (s *Service) MoveEnd(ctx context.Context, ns, token string) error {
	if err := moveArgs(ns, token); err != nil {
		return err
	}
	_, err := engine.MoveEndMarked.Propose(ctx, s.node, &engine.RestoreTokenCmd{NS: ns, Token: token})
	if errors.Is(err, engine.ErrRestoreGone) {
		return ErrNotThisMove
	}
	return err
}

// MoveAbort deletes what the move wrote into ns, also after its end as long
// as no client's command reached the namespace since (else 409: it is live
// here). A move that no longer holds the namespace has nothing to abort.
func (s *Service) MoveAbort(ctx context.Context, ns, token string) error {
	if err := moveArgs(ns, token); err != nil {
		return err
	}
	_, err := engine.RestoreAbort.Propose(ctx, s.node, &engine.RestoreTokenCmd{NS: ns, Token: token})
	// Not errors.Is: apierr matches any conflict by it, ErrMovedInLive too.
	if ae := (*apierr.Error)(nil); errors.As(err, &ae) && ae == engine.ErrRestoreGone {
		return nil
	}
	return err
}
