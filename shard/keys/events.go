package keys

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// The event log (keys.go lists the rest of the layout):
//
//	<ns> 00 'v' <seq 8B>     one event of the namespace, in sequence order, or (once the log
//	                         writes blocks) a block of events numbered seq, seq+1…
//	<ns> 00 'V'              the namespace's log floor: events at or below it were trimmed
//	<ns> 00 'E'              the namespace's retention, as its plan last set it (absent: the default)
//	<ns> 00 'n'              the namespace's count of events, uvarint (once the log is counted)
//	01 'L'                   the event log's start: the index of the entry that switched it on
//
// The events lie under the namespace like its jobs, so a purge removes
// them with the rest; the start is shard-wide, as the usage clock is.
const (
	KindEvent      byte = 'v'
	KindEventFloor byte = 'V'
	// KindEventRetention: what the namespace's plan keeps of its log.
	// Part of the log (IsEvent): it stays on the shard, as the log does.
	KindEventRetention byte = 'E'
	// KindEventCount: how many events the namespace's log holds.
	KindEventCount byte = 'n'
)

var eventLogStart = []byte{0x01, 'L'}

// EventPrefix is the prefix of every event of ns.
func EventPrefix(ns string) []byte { return kindPrefix(ns, KindEvent, 8) }

// Event is the key of ns's event numbered seq, or of the block whose
// first event it is.
func Event(ns string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(EventPrefix(ns), seq)
}

// ParseEvent returns the sequence number of one of ns's event keys.
func ParseEvent(ns string, key []byte) (uint64, error) {
	p := EventPrefix(ns)
	if !bytes.HasPrefix(key, p) || len(key) != len(p)+8 {
		return 0, fmt.Errorf("keys: %q is not an event key of %q", key, ns)
	}
	return binary.BigEndian.Uint64(key[len(p):]), nil
}

// IsEvent reports whether key, relative to a namespace's prefix
// (Namespace(ns) stripped), is one of its event log's keys: an event or
// the floor, the retention or the count.
func IsEvent(rel []byte) bool {
	return len(rel) > 0 && (rel[0] == KindEvent || rel[0] == KindEventFloor || rel[0] == KindEventRetention || rel[0] == KindEventCount)
}

// EventFloor is the key of ns's log floor.
func EventFloor(ns string) []byte { return kindPrefix(ns, KindEventFloor, 0) }

// EventRetention is the key of ns's log retention record.
func EventRetention(ns string) []byte { return kindPrefix(ns, KindEventRetention, 0) }

// EventCount is the key of ns's count of events.
func EventCount(ns string) []byte { return kindPrefix(ns, KindEventCount, 0) }

// EventLogStart is the key of the shard's event log start.
func EventLogStart() []byte { return append([]byte(nil), eventLogStart...) }
