package wire

import (
	"fmt"
	"strings"
	"time"
)

// Limits of the protocol, the same at every hop (SDK, gateway, shard).
const (
	MaxPayloadBytes    = 1 << 20 // one job's payload, a result, a callback payload
	MaxBatchJobs       = 1000    // jobs in one enqueue/batch
	MaxTags            = 32      // tags on one job
	MaxTagKey          = 64      // bytes of a tag key
	MaxTagValue        = 256     // bytes of a tag value
	MaxUniqueKey       = 256     // bytes of a unique_key
	MaxFairnessKey     = 128     // bytes of a concurrency_key or fairness_key
	MaxKeyConcurrency  = 10_000  // a queue's key_concurrency max
	MaxMaxRetries      = 1000    // max_retries
	MaxDelay           = 30 * 24 * time.Hour
	MaxErrorBytes      = 64 << 10 // error and backtrace of one failure
	MaxProgressBytes   = 64 << 10
	MaxCheckpointBytes = 1 << 20
	MaxChainSteps      = 100
	MaxDependsOn       = 100
	MaxWorkerID        = 256 // bytes of a worker_id or hostname
	MaxFetchQueues     = 64  // queues one fetch may name
	MaxHeartbeatJobs   = 1000
	DefaultFetchBatch  = 100  // jobs per fetch/batch when max is not given
	MaxFetchBatch      = 1000 // jobs one fetch/batch may lease
	MaxAckBatch        = 1000 // acks in one ack/batch
	MaxBulkIDs         = 10_000
	MaxBulkSync        = 10_000 // a bulk by filter matching more runs in the background
	MaxDeadLimit       = 1000
	DefaultDeadLimit   = 50
	MaxScheduleName    = 128
	MaxBulkListLimit   = 1000 // bulk operations on one page of GET /api/v1/bulk
	DefaultBulkLimit   = 100
	MaxBatchListLimit  = 200 // batches on one page of GET /api/v1/batches
	DefaultBatchLimit  = 50
)

// Bounds of times and periods a request names.
const (
	// MaxAhead bounds every absolute time a request names (scheduled_at):
	// a job cannot wait longer than this, and a time past it (or before
	// the Unix epoch) is refused rather than overflowing.
	MaxAhead = 10 * 365 * 24 * time.Hour
	// MinEvery is the shortest period of an "@every" schedule, which must
	// be a whole number of seconds.
	MinEvery = time.Second
)

// CheckEvery refuses an "@every" period under MinEvery or of a fraction
// of a second: the cron library rounds those up to a second, so "@every
// 0s" or "1ns" would fire every second. Any other spec passes (the cron
// parser judges it). Shard schedules and backup policies both decide
// with it.
func CheckEvery(spec string) error {
	const every = "@every "
	spec = strings.TrimSpace(spec)
	if !strings.HasPrefix(spec, every) {
		return nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(spec[len(every):]))
	if err != nil || d < MinEvery || d%time.Second != 0 {
		return fmt.Errorf("@every takes a whole number of seconds, at least %s (like \"@every 90s\"); got %q", MinEvery, spec)
	}
	return nil
}

// Leases and long-polls. A fetch waits up to its timeout for a job; the
// job is leased for its lease_duration unless a heartbeat extends it.
const (
	DefaultFetchTimeout = 30 * time.Second
	MaxFetchTimeout     = 60 * time.Second
	DefaultLease        = 60 * time.Second
	MinLease            = time.Second
	MaxLease            = 12 * time.Hour
)

// FetchWait is the long-poll wait a fetch's timeout (seconds, nil for the
// default) asks for, or an error when it is out of bounds. Gateway and
// shard both decide with it.
func FetchWait(timeout *float64) (time.Duration, error) {
	if timeout == nil {
		return DefaultFetchTimeout, nil
	}
	// Bounds are checked in seconds: a huge number would overflow a Duration.
	if !(*timeout >= 0 && *timeout <= MaxFetchTimeout.Seconds()) {
		return 0, fmt.Errorf("timeout must be between 0 and %d seconds", int(MaxFetchTimeout/time.Second))
	}
	return time.Duration(*timeout * float64(time.Second)), nil
}

// LeaseFor is the lease a fetch's lease_duration (seconds, nil for the
// default) asks for, or an error when it is out of bounds.
func LeaseFor(seconds *float64) (time.Duration, error) {
	if seconds == nil {
		return DefaultLease, nil
	}
	if !(*seconds >= MinLease.Seconds() && *seconds <= MaxLease.Seconds()) {
		return 0, fmt.Errorf("lease_duration must be between %d and %d seconds", int(MinLease/time.Second), int(MaxLease/time.Second))
	}
	return time.Duration(*seconds * float64(time.Second)), nil
}
