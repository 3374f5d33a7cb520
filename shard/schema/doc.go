// Package schema is the payload schemas of typed queues: a queue's JSON
// Schema (draft 2020-12) checked when it is set (Canonical: at most
// wire.MaxQueueSchemaBytes, no $ref outside the schema itself, so
// nothing is ever fetched), compiled once per version and kept
// (Cache), and every payload enqueued to the queue checked against it
// (Check), refused with the JSON pointer and the rule that failed.
// The engine stores the canonical bytes and the versions; it never
// compiles or validates, so its apply depends on no cache.
package schema
