package layout

import "encoding/binary"

// A tenant's audit log of the requests control serves (tenant
// administration) and of those its gateways refused. Prefixes continue
// sso.go's (each prefix is one family's alone: TestPrefixesAreDistinct).
const (
	prefixAudit    byte = 0x2d // tenant id, time 8B, entry index 8B, position 2B → one record (JSON)
	prefixAuditRet byte = 0x2e // tenant id → the days its plan keeps the records (uint64)
)

// Audits prefixes a tenant's audit records, in time order.
func Audits(tid string) []byte { return within(prefixAudit, tid) }

// AllAudits prefixes every tenant's audit records.
func AllAudits() []byte { return []byte{prefixAudit} }

// AuditAt is the first key of tid's records at or after time at (unix
// nanoseconds).
func AuditAt(tid string, at int64) []byte {
	return binary.BigEndian.AppendUint64(Audits(tid), uint64(max(at, 0)))
}

// Audit is the key of one of tid's records.
func Audit(tid string, at int64, index uint64, pos uint16) []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint64(AuditAt(tid, at), index), pos)
}

// AuditPlace decodes the time, index and position of one of tid's
// records; ok is false for any other key.
func AuditPlace(tid string, k []byte) (at int64, index uint64, pos uint16, ok bool) {
	p := Audits(tid)
	if len(k) != len(p)+18 || string(k[:len(p)]) != string(p) {
		return 0, 0, 0, false
	}
	rest := k[len(p):]
	return int64(binary.BigEndian.Uint64(rest)), binary.BigEndian.Uint64(rest[8:]), binary.BigEndian.Uint16(rest[16:]), true
}

// AuditRetention is the key of the days tid's plan keeps its records.
func AuditRetention(tid string) []byte { return key(prefixAuditRet, tid) }
