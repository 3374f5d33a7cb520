package wire

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// W3C Trace Context (https://www.w3.org/TR/trace-context/): a job carries
// the traceparent and tracestate it was enqueued with, as metadata beside
// its payload, and gives them back unchanged on fetch, on reads and on
// push deliveries.
const (
	// TraceParentHeader is the W3C traceparent header: on an enqueue, the
	// trace the job belongs to; on a push delivery, the job's.
	TraceParentHeader = "traceparent"
	// TraceStateHeader is the W3C tracestate header, beside traceparent.
	TraceStateHeader = "tracestate"
	// SystemTraceParentHeader is, from a gateway to a shard, the
	// traceparent of the gateway's own span of the request (the
	// operator's trace, not the tenant's): the shard's span of it is its
	// child. Only a traced gateway sends it.
	SystemTraceParentHeader = "X-Jobbie-System-Traceparent"

	// MaxTraceStateBytes and MaxTraceStateMembers bound a tracestate (the
	// W3C limits a vendor must propagate); more is refused, not cut.
	MaxTraceStateBytes   = 512
	MaxTraceStateMembers = 32
)

// CheckTraceParent checks a traceparent of version 00: "00-", 32 and 16
// lowercase hex digits (the trace id and the parent id, neither all
// zeros) and the two of the flags, separated by "-".
func CheckTraceParent(v string) error {
	if len(v) != 55 || v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return errors.New("traceparent must be 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>")
	}
	if v[:2] != "00" {
		return fmt.Errorf("traceparent version %q is not supported; version 00 is", v[:2])
	}
	traceID, parentID, flags := v[3:35], v[36:52], v[53:55]
	for _, f := range []struct{ name, hex string }{{"trace id", traceID}, {"parent id", parentID}, {"flags", flags}} {
		if !lowerHex(f.hex) {
			return fmt.Errorf("traceparent's %s must be lowercase hex", f.name)
		}
	}
	if strings.Trim(traceID, "0") == "" {
		return errors.New("traceparent's trace id must not be all zeros")
	}
	if strings.Trim(parentID, "0") == "" {
		return errors.New("traceparent's parent id must not be all zeros")
	}
	return nil
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// CheckTraceState checks a tracestate: at most MaxTraceStateBytes, at
// most MaxTraceStateMembers list members ("key=value", comma-separated,
// empty members and blanks around them allowed), each key W3C's and
// named once, each value of printable ASCII without "," or "=" and no
// trailing blank.
func CheckTraceState(v string) error {
	if len(v) > MaxTraceStateBytes {
		return fmt.Errorf("tracestate is %d bytes; the limit is %d", len(v), MaxTraceStateBytes)
	}
	seen := map[string]bool{}
	for _, m := range strings.Split(v, ",") {
		m = strings.Trim(m, " \t")
		if m == "" {
			continue
		}
		key, value, ok := strings.Cut(m, "=")
		if !ok || !traceStateKey(key) {
			return fmt.Errorf("tracestate member %q must be key=value with a lowercase key of W3C's form", m)
		}
		if !traceStateValue(value) {
			return fmt.Errorf("tracestate member %q: a value is 1 to 256 printable ASCII characters without \",\" or \"=\"", key)
		}
		if seen[key] {
			return fmt.Errorf("tracestate names %q twice", key)
		}
		seen[key] = true
	}
	if len(seen) > MaxTraceStateMembers {
		return fmt.Errorf("tracestate has %d list members; the limit is %d", len(seen), MaxTraceStateMembers)
	}
	return nil
}

// traceStateKey: a simple key (lcalpha, then up to 255 of lcalpha, digits
// and "_-*/"), or a multi-tenant one, tenant@system (tenant: lcalpha or
// digit then up to 240; system: lcalpha then up to 13).
func traceStateKey(k string) bool {
	keyChars := func(s string, first func(byte) bool, max int) bool {
		if s == "" || len(s) > max || !first(s[0]) {
			return false
		}
		for i := 1; i < len(s); i++ {
			if c := s[i]; !lcAlpha(c) && !digit(c) && c != '_' && c != '-' && c != '*' && c != '/' {
				return false
			}
		}
		return true
	}
	tenant, system, multi := strings.Cut(k, "@")
	if !multi {
		return keyChars(k, lcAlpha, 256)
	}
	return keyChars(tenant, func(c byte) bool { return lcAlpha(c) || digit(c) }, 241) && keyChars(system, lcAlpha, 14)
}

func traceStateValue(v string) bool {
	if v == "" || len(v) > 256 || v[len(v)-1] == ' ' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e || c == ',' || c == '=' {
			return false
		}
	}
	return true
}

func lcAlpha(c byte) bool { return c >= 'a' && c <= 'z' }
func digit(c byte) bool   { return c >= '0' && c <= '9' }

// NewTraceParent starts a trace: a traceparent of version 00 with a
// random trace id and parent id, sampled (flags 01).
func NewTraceParent() string {
	var b [24]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			panic(err) // crypto/rand does not fail on supported systems
		}
		if !allZero(b[:16]) && !allZero(b[16:]) {
			break
		}
	}
	return "00-" + hex.EncodeToString(b[:16]) + "-" + hex.EncodeToString(b[16:]) + "-01"
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
