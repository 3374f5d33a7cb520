// Package webhooks is the shard leader's delivery of lifecycle webhooks:
// for every enabled endpoint of every namespace (engine.WebhookRecord) a
// runner reads the namespace's event log after the endpoint's cursor,
// sends each event it subscribes to as a signed CloudEvent through
// internal/outbound, one at a time and in order, retrying a failure with
// exponential backoff and jitter for 24 h, and records its progress
// (engine.WebhookProgress) so the next leader resumes there: delivery is
// at-least-once. An endpoint failing for 3 days is disabled. The delivery
// log (the last attempts per endpoint), test events and redeliveries are
// the leader's, in its memory.
package webhooks
