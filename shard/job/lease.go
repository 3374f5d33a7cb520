package job

import (
	"encoding/base64"
	"encoding/binary"
)

// A lease is named by what the record already holds for it: the attempt it
// started and the leader's stamp of the entry that leased it (StartedAt).
// A release takes the attempt back and a manual retry resets it, so the
// attempt alone repeats; the stamp makes the pair unique, provided every
// lease of a job is stamped after the one before (LeaseAfter), which the
// entries' clock alone does not promise: it only never goes back.

// LeaseID names one lease of one job. The zero value names none.
type LeaseID struct {
	Attempt int   `codec:"a"`
	At      int64 `codec:"t"` // StartedAt of the lease
}

// IsZero reports whether l names no lease. Commands omit a zero lease
// from their encoding; with a pointer receiver the encoder asks without
// boxing the value (an allocation per command or batch item).
func (l *LeaseID) IsZero() bool { return *l == LeaseID{} }

// LeaseOf names j's current (or last) lease.
func LeaseOf(j *Job) LeaseID { return LeaseID{Attempt: j.Attempt, At: j.StartedAt} }

// Holds reports whether j is held under lease l.
func (j *Job) Holds(l LeaseID) bool { return j.Attempt == l.Attempt && j.StartedAt == l.At }

// leaseTokenV1 is the first byte of a token: the layout below.
const leaseTokenV1 = 1

// tokenLen bounds a token: the encoding of the longest layout.
const tokenLen = 24

// Token is l as the opaque lease_token a worker is handed: a version byte
// and the two numbers, base64url. Workers never read it.
func (l LeaseID) Token() string {
	var out [tokenLen]byte
	return string(l.appendToken(out[:0]))
}

func (l LeaseID) appendToken(dst []byte) []byte {
	var b [1 + 2*binary.MaxVarintLen64]byte
	b[0] = leaseTokenV1
	n := 1 + binary.PutUvarint(b[1:], uint64(l.Attempt))
	n += binary.PutVarint(b[n:], l.At)
	return base64.RawURLEncoding.AppendEncode(dst, b[:n])
}

// ParseLeaseToken reads a token Token made; false for anything else. It
// allocates nothing: every ack, fail and heartbeat item passes here.
func ParseLeaseToken(s string) (LeaseID, bool) {
	var src, out [tokenLen]byte
	var b [1 + 2*binary.MaxVarintLen64]byte
	if len(s) == 0 || len(s) > tokenLen {
		return LeaseID{}, false
	}
	n, err := base64.RawURLEncoding.Decode(b[:], src[:copy(src[:], s)])
	if err != nil || n < 3 || b[0] != leaseTokenV1 {
		return LeaseID{}, false
	}
	a, k := binary.Uvarint(b[1:n])
	if k <= 0 || a < 1 || a > 1<<31 {
		return LeaseID{}, false
	}
	at, m := binary.Varint(b[1+k : n])
	if m <= 0 || 1+k+m != n || at == 0 {
		return LeaseID{}, false
	}
	l := LeaseID{Attempt: int(a), At: at}
	if string(l.appendToken(out[:0])) != s { // one spelling per lease: no padding bits, no long varints
		return LeaseID{}, false
	}
	return l, true
}
