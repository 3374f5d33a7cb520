package replica

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
)

var effectsLogDir = flag.String("effects-log", "", "BenchmarkEffectsCodec: a copy of a member's Raft log folder (its raft/wal) holding effects entries, to compress those batches instead of built ones")

// BenchmarkEffectsCodec weighs the codecs an effects entry could carry
// its batch in: the time to compress the batches in turn (ns/op is one
// batch on average over enough of them; MB/s of raw batch), raw-B/batch,
// and what all of them weigh compressed as a share of raw (ratio-%). With -effects-log the batches are
// a real group's (run `jobbie dev --replicas 3 --replicate-effects`
// under load, stop it, copy a shard member's raft/wal); without, batches
// built to look like the engine's (see builtBatches).
func BenchmarkEffectsCodec(b *testing.B) {
	batches := builtBatches()
	if *effectsLogDir != "" {
		batches = loggedBatches(b, *effectsLogDir)
	}
	raw := 0
	for _, r := range batches {
		raw += len(r)
	}
	codecs := []struct {
		name   string
		encode func(dst, src []byte) []byte
	}{
		{"snappy", snappy.Encode}, // s2.EncodeSnappyBetter
		{"s2-snappy", s2.EncodeSnappy},
		{"s2", s2.Encode},
		{"s2-better", s2.EncodeBetter},
	}
	for _, c := range codecs {
		b.Run(c.name, func(b *testing.B) {
			var dst []byte
			out := 0
			for _, r := range batches {
				dst = c.encode(dst[:cap(dst)], r)
				out += len(dst)
			}
			b.SetBytes(int64(raw / len(batches)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				dst = c.encode(dst[:cap(dst)], batches[i%len(batches)])
			}
			b.ReportMetric(float64(raw)/float64(len(batches)), "raw-B/batch")
			b.ReportMetric(100*float64(out)/float64(raw), "ratio-%")
		})
	}
}

// loggedBatches reads the batches of every effects entry in the Raft log
// folder dir (a copy: opening it may write).
func loggedBatches(b *testing.B, dir string) [][]byte {
	meta := &metadb.BoltMetaDB{}
	defer meta.Close()
	logs, err := wal.Open(dir, wal.WithMetaStore(meta))
	if err != nil {
		b.Fatal(err)
	}
	defer logs.Close()
	first, _ := logs.FirstIndex()
	last, _ := logs.LastIndex()
	var out [][]byte
	for i := first; i <= last && i > 0; i++ {
		var l raft.Log
		if err := logs.GetLog(i, &l); err != nil {
			b.Fatal(err)
		}
		if l.Type != raft.LogCommand || len(l.Data) == 0 || l.Data[0] != entryEffects {
			continue
		}
		e, err := decodeEffects(l.Data)
		if err != nil {
			b.Fatal(err)
		}
		repr, err := snappy.Decode(nil, e.repr)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, repr)
	}
	if len(out) == 0 {
		b.Fatalf("no effects entries in %s", filepath.Clean(dir))
	}
	raw := 0
	for _, r := range out {
		raw += len(r)
	}
	b.Logf("%d effects entries, %d bytes raw", len(out), raw)
	return out
}

// builtBatches are batches shaped as the engine's lifecycle writes them,
// 100 jobs an entry: an enqueue sets each job's record and its pending
// index key, a fetch deletes that key and sets the record again with a
// lease key, an ack deletes the lease key and sets the record a third
// time with a finished key. Every key starts with a 36-byte namespace,
// ids are ULID-like (a millisecond clock, then random bytes), records are
// MessagePack-like maps with a 64-byte JSON payload.
func builtBatches() [][]byte {
	r := rand.New(rand.NewPCG(3, 4))
	ns := []byte("6f1c2a9e-0b7d-4c1e-9a53-2f8d41b7c0aa")
	clock := uint64(1_800_000_000_000)
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	var out [][]byte
	for round := 0; round < 20; round++ {
		ids := make([][]byte, 100)
		for i := range ids {
			id := make([]byte, 16)
			for k := 0; k < 6; k++ {
				id[k] = byte(clock >> (8 * (5 - k)))
			}
			for k := 6; k < 16; k++ {
				id[k] = byte(r.Uint32())
			}
			clock += uint64(r.IntN(3))
			ids[i] = id
		}
		key := func(kind string, id []byte) []byte {
			return append(append(append([]byte{}, ns...), kind...), id...)
		}
		record := func(id []byte, state string, at uint64) []byte {
			return fmt.Appendf(nil, "\x8a\xa2id\xc4\x10%s\xa5queue\xa5bench\xa5state\xa7%-7s\xa7payload\xc4\x40{\"n\":%d,\"pad\":\"%040d\"}\xa8attempts\x01\xa6run_at\xcf%016x\xa9leased_by\xa1w\xa8lease_ns\xce\x03\x93\x87\x00\xa7created\xcf%016x\xa8priority\x00",
				id, state, r.IntN(1e6), 0, at, clock)
		}
		for _, step := range []string{"enqueue", "fetch", "ack"} {
			bt := db.NewBatch()
			for _, id := range ids {
				switch step {
				case "enqueue":
					must(bt.Set(key("p", id), nil, nil))
					must(bt.Set(key("j", id), record(id, "pending", clock), nil))
				case "fetch":
					must(bt.Delete(key("p", id), nil))
					must(bt.Set(key("l", id), nil, nil))
					must(bt.Set(key("j", id), record(id, "active", clock), nil))
				case "ack":
					must(bt.Delete(key("l", id), nil))
					must(bt.Set(key("f", id), nil, nil))
					must(bt.Set(key("j", id), record(id, "done", clock), nil))
				}
			}
			out = append(out, append([]byte(nil), bt.Repr()...))
			bt.Close()
		}
	}
	return out
}
