package keys

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// The shard-wide keys, outside every namespace: the namespace registry,
// the restore and move marks, and the usage meters.

// registryPrefix starts the shard-wide namespace registry. It sorts before
// any namespace ("t_…") and after the replica's own 0x00 keys.
var registryPrefix = []byte{0x01, 'n'}

// The usage keys are shard-wide, outside every namespace: a purged
// namespace leaves the usage it ran up for control to read, and an hour's
// buckets lie together in (hour, namespace) order, the order the usage
// endpoint pages in and the usage sweep prunes from the bottom of.
var (
	usageBucketPrefix = []byte{0x01, 'U'}
	usageGaugePrefix  = []byte{0x01, 'G'}
	usageClock        = []byte{0x01, 'M'}
)

// Registry is the key recording that namespace ns has state on this shard.
func Registry(ns string) []byte {
	b := make([]byte, 0, len(registryPrefix)+len(ns))
	b = append(b, registryPrefix...)
	return append(b, ns...)
}

// restoringPrefix starts the markers of namespaces a restore is writing.
// They lie outside the namespace, so a backup never carries one and the
// restore's own deletes never remove it.
var restoringPrefix = []byte{0x01, 'X'}

// Restoring is the key marking that a restore into ns is running.
func Restoring(ns string) []byte {
	b := make([]byte, 0, len(restoringPrefix)+len(ns))
	b = append(b, restoringPrefix...)
	return append(b, ns...)
}

// RestoringPrefix is the prefix of the restore markers.
func RestoringPrefix() []byte { return append([]byte(nil), restoringPrefix...) }

// restoreRefusing marks that commands into a namespace a restore is
// writing are refused in their apply (the engine's RestoreStartRefusing):
// one key, apart from the markers' prefix.
var restoreRefusing = []byte{0x01, 'Y'}

// RestoreRefusing is the key marking that the apply refuses commands
// into a namespace being restored.
func RestoreRefusing() []byte { return append([]byte(nil), restoreRefusing...) }

// RestoringNamespace returns the namespace of a restore marker's key.
func RestoringNamespace(k []byte) string { return string(k[len(restoringPrefix):]) }

// The marks of a live move, outside the namespace like the restore
// marker: a fence holds the namespace's writes for the cut-over; the moved
// tombstone stays once its keys are gone; the moved-in mark says which
// move ended the namespace here, so that move's abort can still remove it.
var (
	moveFencePrefix = []byte{0x01, 'F'}
	movedPrefix     = []byte{0x01, 'W'}
	movedInPrefix   = []byte{0x01, 'E'}
)

// MoveFence is the key of ns's move fence.
func MoveFence(ns string) []byte { return append(MoveFencePrefix(), ns...) }

// MoveFencePrefix is the prefix of the move fences.
func MoveFencePrefix() []byte { return append([]byte(nil), moveFencePrefix...) }

// MoveFenceNamespace returns the namespace of a move fence's key.
func MoveFenceNamespace(k []byte) string { return string(k[len(moveFencePrefix):]) }

// Moved is the key of ns's moved tombstone.
func Moved(ns string) []byte { return append(MovedPrefix(), ns...) }

// MovedPrefix is the prefix of the moved tombstones.
func MovedPrefix() []byte { return append([]byte(nil), movedPrefix...) }

// MovedNamespace returns the namespace of a moved tombstone's key.
func MovedNamespace(k []byte) string { return string(k[len(movedPrefix):]) }

// MovedIn is the key of ns's moved-in mark.
func MovedIn(ns string) []byte { return append(MovedInPrefix(), ns...) }

// MovedInPrefix is the prefix of the moved-in marks.
func MovedInPrefix() []byte { return append([]byte(nil), movedInPrefix...) }

// MovedInNamespace returns the namespace of a moved-in mark's key.
func MovedInNamespace(k []byte) string { return string(k[len(movedInPrefix):]) }

// RegistryPrefix is the prefix of the namespace registry.
func RegistryPrefix() []byte { return append([]byte(nil), registryPrefix...) }

// RegistryNamespace returns the namespace of a registry key.
func RegistryNamespace(key []byte) string { return string(key[len(registryPrefix):]) }

// UsageBucketPrefix is the prefix of every usage bucket.
func UsageBucketPrefix() []byte { return append([]byte(nil), usageBucketPrefix...) }

// UsageBucket is the key of ns's usage meters in the hour starting at hour
// (unix ns); ns "" is the first key of the hour.
func UsageBucket(hour int64, ns string) []byte {
	b := make([]byte, 0, len(usageBucketPrefix)+8+len(ns))
	b = append(b, usageBucketPrefix...)
	b = binary.BigEndian.AppendUint64(b, uint64(hour))
	return append(b, ns...)
}

// ParseUsageBucket splits a usage bucket key into its hour and namespace.
func ParseUsageBucket(key []byte) (hour int64, ns string, err error) {
	p := usageBucketPrefix
	if !bytes.HasPrefix(key, p) || len(key) <= len(p)+8 {
		return 0, "", fmt.Errorf("keys: %q is not a usage bucket key", key)
	}
	rest := key[len(p):]
	return int64(binary.BigEndian.Uint64(rest[:8])), string(rest[8:]), nil
}

// UsageGaugePrefix is the prefix of every namespace's stored-bytes gauge.
func UsageGaugePrefix() []byte { return append([]byte(nil), usageGaugePrefix...) }

// UsageGauge is the key of namespace ns's stored-bytes gauge.
func UsageGauge(ns string) []byte {
	b := make([]byte, 0, len(usageGaugePrefix)+len(ns))
	b = append(b, usageGaugePrefix...)
	return append(b, ns...)
}

// UsageGaugeNamespace returns the namespace of a gauge key.
func UsageGaugeNamespace(key []byte) string { return string(key[len(usageGaugePrefix):]) }

// UsageClock is the key of the metering clock record.
func UsageClock() []byte { return append([]byte(nil), usageClock...) }
