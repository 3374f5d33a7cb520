package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// The encryption epoch moves after every commit that may change a
// namespace's encryption record, and after the state changed under the
// caches (a snapshot installed), and not for other commands: the service
// reads a record again only when it moved.
func TestEncryptionEpochMovesWithTheRecord(t *testing.T) {
	f := setupFSM(t)
	moved := func(what string, do func()) {
		t.Helper()
		before := f.e.EncryptionEpoch()
		do()
		require.Greater(t, f.e.EncryptionEpoch(), before, "%s moves the epoch", what)
	}
	still := func(what string, do func()) {
		t.Helper()
		before := f.e.EncryptionEpoch()
		do()
		require.Equal(t, before, f.e.EncryptionEpoch(), "%s leaves the epoch", what)
	}
	still("an enqueue", func() { f.enqueue(&job.Job{Queue: "q"}) })
	moved("a change", func() {
		require.NotNil(t, f.apply(NamespaceEncryption.Type, &EncryptionCmd{NS: testNS, Record: EncryptionRecord{Enabled: true}}))
	})
	still("a change refused", func() {
		require.Error(t, f.apply(NamespaceEncryption.Type, &EncryptionCmd{NS: testNS, Prev: 7}).(error))
	})
	rec, _ := ReadEncryption(f.db, testNS)
	rel := keys.Encryption(testNS)[len(keys.Namespace(testNS)):]
	moved("a restore's begin", func() {
		require.Nil(t, f.apply(RestoreBegin.Type, &RestoreBeginCmd{NS: otherNS, Token: "r1"}))
	})
	moved("a restore's chunk", func() {
		require.Nil(t, f.apply(RestoreChunk.Type, &RestoreChunkCmd{NS: otherNS, Token: "r1",
			Recs: []RestoreRecord{{Key: rel, Value: replica.Encode(&rec)}}}))
	})
	moved("a restore's end", func() { require.NotNil(t, f.apply(RestoreEnd.Type, &RestoreTokenCmd{NS: otherNS, Token: "r1"})) })
	got, ok := ReadEncryption(f.db, otherNS)
	require.True(t, ok)
	require.True(t, got.Enabled)
	moved("a purge", func() {
		for done := false; !done; {
			done = f.apply(NamespacePurge.Type, &NamespacePurgeCmd{NS: otherNS, Phase: 1}).(*PurgeStep).Done
		}
	})
	moved("a snapshot installed", f.e.reset)
	moved("an entry applied as the leader's effects", f.e.DropCommittedViews)
}

// Between a change's commit and the functions that run after it, the
// state already holds the new record and a reader may already know it:
// the replica has told those waiting on the applied index (a follower
// serving a read after the write it forwarded). The epoch a reader loads
// then must not be the one a record read before the commit was cached
// under.
func TestEncryptionEpochMovesBeforeTheCommitIsSeen(t *testing.T) {
	f := setupFSM(t)
	before := f.e.EncryptionEpoch() // a reader reads the record (none) and keeps it under this
	b := f.db.NewIndexedBatch()
	defer b.Close()
	tx := replica.NewTx(b, f.now, 100)
	cmd := replica.Command(NamespaceEncryption.Type, replica.Encode(&EncryptionCmd{NS: testNS, Record: EncryptionRecord{Enabled: true}}))
	_, err := f.e.Registry().Apply(tx, cmd)
	require.NoError(t, err)
	tx.RunBeforeCommit()
	require.NoError(t, b.Commit(nil))
	_, ok := ReadEncryption(f.db, testNS)
	require.True(t, ok, "committed: a reader sees the record")
	require.NotEqual(t, before, f.e.EncryptionEpoch(), "committed, not yet counted: what was kept under the epoch before is stale")
	tx.RunAfterCommit()
	settled := f.e.EncryptionEpoch()
	require.NotEqual(t, before, settled, "counted")
	require.NotZero(t, settled, "settled: a record read now may be kept")
}
