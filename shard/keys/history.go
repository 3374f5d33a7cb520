package keys

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Queue history (keys.go lists the rest of the layout):
//
//	<ns> 00 't' <queue> 00 <resolution 1B> <bucket start 8B>   one bucket of a queue's history
//	01 'h'                                                     the history's start (present once it is on)
//
// The buckets lie under the namespace, so a purge, a backup and a move
// take them with the rest; a queue's buckets of one resolution lie
// together in time order, so a range read is one scan and a trim one
// range delete. The start is shard-wide, as the event log's is.
const KindHistory byte = 't'

// The resolutions of history buckets, on-disk format.
const (
	HistoryMinute byte = 'm'
	HistoryHour   byte = 'h'
)

var historyStart = []byte{0x01, 'h'}

// HistoryPrefix is the prefix of every history bucket of ns.
func HistoryPrefix(ns string) []byte { return kindPrefix(ns, KindHistory, 0) }

// HistorySeries is the prefix of queue's buckets of one resolution.
func HistorySeries(ns, queue string, res byte) []byte {
	b := kindPrefix(ns, KindHistory, len(queue)+2+8)
	b = append(b, queue...)
	return append(b, 0, res)
}

// History is the key of queue's bucket of resolution res starting at
// start (unix ns).
func History(ns, queue string, res byte, start int64) []byte {
	return binary.BigEndian.AppendUint64(HistorySeries(ns, queue, res), uint64(start))
}

// ParseHistory returns the queue, resolution and start of one of ns's
// history keys.
func ParseHistory(ns string, key []byte) (queue string, res byte, start int64, err error) {
	p := HistoryPrefix(ns)
	rest := key[min(len(p), len(key)):]
	i := bytes.IndexByte(rest, 0)
	if !bytes.HasPrefix(key, p) || i < 0 || len(rest) != i+2+8 {
		return "", 0, 0, fmt.Errorf("keys: %q is not a history key of %q", key, ns)
	}
	return string(rest[:i]), rest[i+1], int64(binary.BigEndian.Uint64(rest[i+2:])), nil
}

// HistoryStart is the key of the shard's history start.
func HistoryStart() []byte { return append([]byte(nil), historyStart...) }
