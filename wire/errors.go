package wire

// ErrorCode is a stable, documented error code. internal/apierr maps each
// to its HTTP status.
type ErrorCode string

// Error codes.
const (
	CodeBadRequest       ErrorCode = "bad_request"        // malformed or invalid input; Field names it
	CodeInvalidJSON      ErrorCode = "invalid_json"       // the body is not the JSON expected
	CodeUnauthenticated  ErrorCode = "unauthenticated"    // no, invalid, expired or revoked key
	CodeForbidden        ErrorCode = "forbidden"          // the key's role or namespaces do not allow it
	CodeNotFound         ErrorCode = "not_found"          // unknown object, or another tenant's
	CodeMethodNotAllowed ErrorCode = "method_not_allowed" // a known path, a method it does not serve: Allow lists those it does
	CodeConflict         ErrorCode = "conflict"           // state conflict (exists already, wrong state)
	CodeLeaseMismatch    ErrorCode = "lease_mismatch"     // ack/fail/heartbeat of a job not active under this lease
	CodeTooLarge         ErrorCode = "payload_too_large"  // body or payload over its limit
	CodeRateLimited      ErrorCode = "rate_limited"       // over a rate or quota; Retry-After set
	CodeNoLeader         ErrorCode = "no_leader"          // the shard has no leader yet; Retry-After set
	CodeUnavailable      ErrorCode = "unavailable"        // a dependency is down; Retry-After set
	CodeInternal         ErrorCode = "internal"           // a bug or an unexpected failure
)

// Error codes of the gateway's own limits: each names the limit the
// request ran into.
const (
	CodeConnectionLimit     ErrorCode = "connection_limit"       // too many open connections from the client's address; Retry-After set
	CodeKeyLongPollLimit    ErrorCode = "key_long_poll_limit"    // the key has as many long-polls waiting as allowed; Retry-After set
	CodeTenantLongPollLimit ErrorCode = "tenant_long_poll_limit" // the tenant has as many long-polls waiting as allowed; Retry-After set
	CodeHeadersTooLarge     ErrorCode = "headers_too_large"      // the request line and headers are over their size limit
	CodeRevocationsStale    ErrorCode = "revocations_stale"      // the gateway cannot confirm revocations (control unreachable): keys refused; Retry-After set
	CodeShardAnswerTooLarge ErrorCode = "shard_answer_too_large" // the shard's answer is over the most the gateway passes on (502; not retried)
	CodeSelfHostedBudget    ErrorCode = "self_hosted_budget"     // the tenant's self-hosted nodes have all of this gateway's share for them in flight; Retry-After set
)

// Error codes of encryption at rest.
const (
	CodeEncryptionKeyRevoked ErrorCode = "encryption_key_revoked" // what was asked for was sealed under a tenant key since revoked (409)
	CodeEncryptionOff        ErrorCode = "encryption_unavailable" // the shard has no master key, or one that does not open the namespace's keys (409)
)

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error *Error `json:"error"`
}

// Error is an error response's "error" object.
type Error struct {
	Code      ErrorCode `json:"code"`
	Message   string    `json:"message"`
	Field     string    `json:"field,omitempty"` // the offending input field of a 400
	RequestID string    `json:"request_id,omitempty"`
}
