package wire

// Typed payloads: a queue may carry a JSON Schema (draft 2020-12) that
// every payload enqueued to it must satisfy (docs/api/queues.md, "Payload
// schemas").

// MaxQueueSchemaBytes bounds a queue's schema, in bytes of its JSON.
const MaxQueueSchemaBytes = 64 << 10

// CodeSchemaChanged (409) answers an enqueue whose queue's schema changed
// between the check of its payload and the write, more than the shard
// retries: the request stored nothing and may be sent again.
const CodeSchemaChanged ErrorCode = "schema_changed"
