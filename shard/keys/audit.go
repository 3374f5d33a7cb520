package keys

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// The audit log (keys.go lists the rest of the layout):
//
//	<ns> 00 'U' <time 8B> <index 8B> <pos 2B>   one audit record, in time order
//	<ns> 00 'z'                                 the days the namespace's plan keeps them
//
// A record's time is its entry's (the leader's stamp), its index the
// entry's Raft index and pos its place among the entry's records, so
// every member keys it alike and a trim by age is one range delete. The
// records lie under the namespace, so a move or a backup carries them and
// a purge removes them.
const (
	KindAudit          byte = 'U'
	KindAuditRetention byte = 'z'
)

// AuditPrefix is the prefix of every audit record of ns.
func AuditPrefix(ns string) []byte { return kindPrefix(ns, KindAudit, 18) }

// AuditAt is the first key of ns's audit records at or after time at
// (unix nanoseconds): the bound of a trim or of a read from a time.
func AuditAt(ns string, at int64) []byte {
	return binary.BigEndian.AppendUint64(AuditPrefix(ns), uint64(max(at, 0)))
}

// Audit is the key of one of ns's audit records.
func Audit(ns string, at int64, index uint64, pos uint16) []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint64(AuditAt(ns, at), index), pos)
}

// ParseAudit returns the time, index and position of one of ns's audit
// record keys.
func ParseAudit(ns string, key []byte) (at int64, index uint64, pos uint16, err error) {
	p := AuditPrefix(ns)
	if !bytes.HasPrefix(key, p) || len(key) != len(p)+18 {
		return 0, 0, 0, fmt.Errorf("keys: %q is not an audit key of %q", key, ns)
	}
	rest := key[len(p):]
	return int64(binary.BigEndian.Uint64(rest)), binary.BigEndian.Uint64(rest[8:]), binary.BigEndian.Uint16(rest[16:]), nil
}

// AuditRetention is the key of ns's audit retention record.
func AuditRetention(ns string) []byte { return kindPrefix(ns, KindAuditRetention, 0) }
