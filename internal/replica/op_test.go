package replica

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
)

// ledger is a state machine for the refusal rules: put writes a key, and
// with Fail set it refuses afterwards (a handler that wrote first); bump
// changes an in-memory counter (marking itself dirty) and may refuse too.
type ledger struct {
	mem    int // in-memory state derived from the store, reset on OnReset
	resets int
	hooks  int // after-commit hooks run
}

type putCmd struct {
	Key  string `codec:"k"`
	Fail bool   `codec:"f"`
}

var (
	opPut  = Op[putCmd, string]{Type: 1, Name: "put"}
	opBump = Op[putCmd, int]{Type: 2, Name: "bump"}
)

func (l *ledger) registry() *Registry {
	r := new(Registry)
	r.OnReset(func() { l.mem, l.resets = 0, l.resets+1 })
	opPut.Handle(r, func(tx *Tx, c *putCmd) (string, error) {
		tx.AfterCommit(func() { l.hooks++ })
		if err := tx.Set([]byte(c.Key), []byte("v"), nil); err != nil {
			panic(err)
		}
		if c.Fail {
			return "", apierr.New(apierr.Conflict, "refused %s after writing", c.Key)
		}
		return "put " + c.Key, nil
	})
	opBump.Handle(r, func(tx *Tx, c *putCmd) (int, error) {
		l.mem++
		tx.MarkDirty()
		if c.Fail {
			return 0, apierr.New(apierr.Conflict, "refused bump")
		}
		return l.mem, nil
	})
	return r
}

func memDB(t testing.TB) *pebble.DB {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func has(db *pebble.DB, k string) bool {
	_, closer, err := db.Get([]byte(k))
	if err != nil {
		return false
	}
	closer.Close()
	return true
}

// A command refused after it wrote leaves nothing: not its writes, not its
// after-commit hook, while the commands around it in the same entry keep
// theirs.
func TestRefusedCommandLeavesNoWrites(t *testing.T) {
	t.Parallel()
	db := memDB(t)
	l := &ledger{}
	loc, err := NewLocal(db, l.registry())
	require.NoError(t, err)
	outs := loc.Apply(time.Unix(1_800_000_000, 0),
		opPut.Command(&putCmd{Key: "a"}), opPut.Command(&putCmd{Key: "b", Fail: true}), opPut.Command(&putCmd{Key: "c"}))
	require.Len(t, outs, 3)
	v, err := opPut.Result(outs[0])
	require.NoError(t, err)
	require.Equal(t, "put a", v)
	_, err = opPut.Result(outs[1])
	require.Equal(t, apierr.Conflict, apierr.CodeOf(err))
	v, err = opPut.Result(outs[2])
	require.NoError(t, err)
	require.Equal(t, "put c", v)
	require.True(t, has(db, "a"))
	require.False(t, has(db, "b"), "the refused command's write was dropped")
	require.True(t, has(db, "c"))
	require.Equal(t, 2, l.hooks, "only the applied commands' hooks ran")
	require.EqualValues(t, 1, loc.Redos())
	require.Equal(t, 1, l.resets, "caches were reset before the group applied again")
}

// In-memory changes of a refused command are undone too: the group
// applies again from the committed state without it.
func TestRefusedDirtyCommandIsUndone(t *testing.T) {
	t.Parallel()
	l := &ledger{}
	loc, err := NewLocal(memDB(t), l.registry())
	require.NoError(t, err)
	outs := loc.Apply(time.Unix(1_800_000_000, 0),
		opBump.Command(&putCmd{}), opBump.Command(&putCmd{Fail: true}), opBump.Command(&putCmd{}))
	n, err := opBump.Result(outs[2])
	require.NoError(t, err)
	require.Equal(t, 2, n, "the refused bump counted nothing")
	require.Equal(t, 2, l.mem)
	require.EqualValues(t, 1, loc.Redos())
}

// A command refused before it changed anything costs no second pass: only
// its own after-commit hooks are dropped.
func TestCleanRefusalNeedsNoRedo(t *testing.T) {
	t.Parallel()
	l := &ledger{}
	r := l.registry()
	opClean := Op[putCmd, None]{Type: 3, Name: "clean"}
	opClean.Handle(r, func(tx *Tx, c *putCmd) (None, error) {
		tx.AfterCommit(func() { l.hooks += 100 })
		return None{}, apierr.New(apierr.NotFound, "nothing here")
	})
	loc, err := NewLocal(memDB(t), r)
	require.NoError(t, err)
	outs := loc.Apply(time.Unix(1_800_000_000, 0), opPut.Command(&putCmd{Key: "a"}), opClean.Command(&putCmd{}))
	_, err = opClean.Result(outs[1])
	require.Equal(t, apierr.NotFound, apierr.CodeOf(err))
	require.Equal(t, 1, l.hooks, "the refused command's hook was dropped, the other ran")
	require.Zero(t, loc.Redos())
	require.Zero(t, l.resets)
}

// Op.Propose returns the typed result, the business error, or a
// replication failure in the error catalog, naming the group.
func TestOpProposeMapsErrors(t *testing.T) {
	t.Parallel()
	l := &ledger{}
	n, err := Open(Config{Dir: t.TempDir(), Bootstrap: true, Subject: "this test group", HeartbeatTimeout: 100 * time.Millisecond,
		ElectionTimeout: 100 * time.Millisecond}, l.registry())
	require.NoError(t, err)
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, n.WaitLeader(ctx))
	v, err := opPut.Propose(ctx, n, &putCmd{Key: "x"})
	require.NoError(t, err)
	require.Equal(t, "put x", v)
	_, err = opPut.Propose(ctx, n, &putCmd{Key: "y", Fail: true})
	require.Equal(t, apierr.Conflict, apierr.CodeOf(err))
	require.False(t, has(n.DB(), "y"))

	for _, c := range []struct {
		in   error
		code apierr.Code
	}{
		{ErrNotLeader, apierr.NoLeader}, {ErrLeadershipLost, apierr.Unavailable}, {ErrClosed, apierr.Unavailable},
		{context.Canceled, apierr.Unavailable}, {context.DeadlineExceeded, apierr.Unavailable},
		{ErrKeyBusy, apierr.RateLimited}, {ErrBusy, apierr.Unavailable},
	} {
		got := apierr.From(proposeError("this test group", c.in))
		require.Equal(t, c.code, got.Code, c.in)
		require.Equal(t, 1, got.RetryAfter, c.in)
		require.Contains(t, got.Message, "this test group")
	}
	require.Equal(t, apierr.Internal, apierr.From(proposeError("g", errors.New("disk on fire"))).Code)
}

// Commands written as JSON (the control plane's log before MessagePack)
// still decode.
func TestJSONCommandsStillDecode(t *testing.T) {
	t.Parallel()
	l := &ledger{}
	loc, err := NewLocal(memDB(t), l.registry())
	require.NoError(t, err)
	raw, err := json.Marshal(map[string]any{"Key": "legacy"})
	require.NoError(t, err)
	outs := loc.Apply(time.Unix(1_800_000_000, 0), Command(opPut.Type, raw))
	v, err := opPut.Result(outs[0])
	require.NoError(t, err)
	require.Equal(t, "put legacy", v)
}
