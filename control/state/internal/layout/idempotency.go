package layout

import (
	"encoding/binary"
	"fmt"
)

// Idempotency-Key records of tenants' creating requests. Prefixes
// continue moves.go's list. A key is printable ASCII (no 0x00), so it
// ends a key as any component does.
const (
	prefixIdem       byte = 0x29 // tenant id, Idempotency-Key → the first answer's record (MessagePack)
	prefixIdemExpiry byte = 0x2a // tenant id, expiry (8 bytes, unix ns), Idempotency-Key → nothing
	prefixIdemCount  byte = 0x2b // tenant id → how many records the tenant keeps (uint64)
)

// Idem is the key of tenant tid's record of Idempotency-Key k.
func Idem(tid, k string) []byte { return key(prefixIdem, tid, k) }

// IdemExpiry is the expiry index entry of tenant tid's record of k,
// which expires at unix nanoseconds at: a tenant's entries sort by
// expiry.
func IdemExpiry(tid string, at int64, k string) []byte {
	b := within(prefixIdemExpiry, tid)
	b = binary.BigEndian.AppendUint64(b, uint64(at))
	return append(b, k...)
}

// IdemExpiries is the prefix of tenant tid's expiry index.
func IdemExpiries(tid string) []byte { return within(prefixIdemExpiry, tid) }

// ParseIdemExpiry decodes an IdemExpiry key of tenant tid.
func ParseIdemExpiry(tid string, k []byte) (int64, string, error) {
	p := IdemExpiries(tid)
	if len(k) < len(p)+8 || string(k[:len(p)]) != string(p) {
		return 0, "", fmt.Errorf("layout: %q is not an idempotency expiry key of tenant %s", k, tid)
	}
	return int64(binary.BigEndian.Uint64(k[len(p):])), string(k[len(p)+8:]), nil
}

// IdemCount holds how many records tenant tid keeps.
func IdemCount(tid string) []byte { return key(prefixIdemCount, tid) }
