package keys

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// The keys of what a namespace keeps for calls in and out: its webhook
// signing keys, its endpoints and their delivery logs, and its records
// of Idempotency-Keys.

// SigningKeys is the key of namespace ns's webhook signing key set (push
// deliveries are signed with it). Under Namespace(ns), as its settings.
func SigningKeys(ns string) []byte { return kindPrefix(ns, KindSigningKeys, 0) }

// Webhook is the key of one of ns's webhook endpoints; WebhookPrefix
// covers them all, in id order.
func Webhook(ns, id string) []byte {
	return append(kindPrefix(ns, KindWebhook, len(id)), id...)
}

// WebhookPrefix is the prefix of every webhook endpoint of ns.
func WebhookPrefix(ns string) []byte { return kindPrefix(ns, KindWebhook, 0) }

// WebhookDeliveries is the prefix of one endpoint's delivery log, its
// records in the order they were written.
func WebhookDeliveries(ns, id string) []byte {
	b := append(kindPrefix(ns, KindWebhookDelivery, len(id)+1+8), id...)
	return append(b, 0)
}

// WebhookDelivery is the key of the n-th record of an endpoint's delivery
// log (n counts from 1 over the endpoint's life).
func WebhookDelivery(ns, id string, n uint64) []byte {
	return binary.BigEndian.AppendUint64(WebhookDeliveries(ns, id), n)
}

// AlertRule is the key of one of ns's alert rules (with its firing
// state); AlertRulePrefix covers them all, in name order.
func AlertRule(ns, name string) []byte {
	return append(kindPrefix(ns, KindAlertRule, len(name)), name...)
}

// AlertRulePrefix is the prefix of every alert rule of ns.
func AlertRulePrefix(ns string) []byte { return kindPrefix(ns, KindAlertRule, 0) }

// Idempotency is the key of namespace ns's record of an Idempotency-Key.
func Idempotency(ns, key string) []byte {
	return append(kindPrefix(ns, KindIdempotency, len(key)), key...)
}

// IdempotencyExpiryIndex is the prefix of ns's records by expiry.
func IdempotencyExpiryIndex(ns string) []byte { return kindPrefix(ns, KindIdempotencyExpiry, 8+64) }

// IdempotencyExpiry is the key of a record in the expiry index: when it
// expires, then its Idempotency-Key.
func IdempotencyExpiry(ns string, at int64, key string) []byte {
	b := binary.BigEndian.AppendUint64(IdempotencyExpiryIndex(ns), uint64(at))
	return append(b, key...)
}

// ParseIdempotencyExpiry splits an expiry index key into its time and key.
func ParseIdempotencyExpiry(ns string, k []byte) (at int64, key string, err error) {
	p := IdempotencyExpiryIndex(ns)
	if !bytes.HasPrefix(k, p) || len(k) <= len(p)+8 {
		return 0, "", fmt.Errorf("keys: %q is not an idempotency expiry key of %s", k, ns)
	}
	rest := k[len(p):]
	return int64(binary.BigEndian.Uint64(rest[:8])), string(rest[8:]), nil
}

// IdempotencyCount is the key of ns's count of idempotency records.
func IdempotencyCount(ns string) []byte { return kindPrefix(ns, KindIdempotencyCount, 0) }
