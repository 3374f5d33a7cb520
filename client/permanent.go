package client

import "errors"

// PermanentError is a handler's error that no retry can fix (bad input, a
// declined card): the worker fails the job as non-retryable, and the
// server makes it dead at once with dead_reason "non_retryable", whatever
// retries remain. Made by Permanent; its message is the wrapped error's.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent marks err as non-retryable (nil stays nil). A handler returns
// it, or an error wrapping it: the worker finds it with errors.As, and a
// PushHandler answers with "non_retryable": true.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// IsPermanent reports whether err is, or wraps, a PermanentError.
func IsPermanent(err error) bool {
	var p *PermanentError
	return errors.As(err, &p)
}

// NonRetryable makes a Fail non-retryable: the job is dead at once (its
// FailResult says "dead" with Reason "non_retryable").
func NonRetryable() ReportOption {
	return func(r *report) { r.nonRetryable = true }
}

// failOptions are the options of the worker's fail of cause.
func failOptions(leaseToken string, cause error) []ReportOption {
	opts := []ReportOption{Lease(leaseToken)}
	if IsPermanent(cause) {
		opts = append(opts, NonRetryable())
	}
	return opts
}
