package outbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/jobbie/jobbie/client"
)

// Job is what a row asks Jobbie to enqueue: the SDK's enqueue request,
// every field of which the row keeps.
type Job = client.EnqueueRequest

// Enqueue writes job into the outbox in the caller's transaction and
// returns the row's id, which is also the Idempotency-Key the relay will
// send it with. The job exists for the relay once tx commits, and never
// if it rolls back. A job without a queue, or whose payload cannot be
// encoded as JSON, is refused, naming the field, and nothing is written.
// A trace context ctx carries (client.WithTraceParent) is kept with the
// job unless it names its own.
func Enqueue(ctx context.Context, tx *sql.Tx, job Job) (string, error) {
	if tx == nil {
		return "", errors.New("outbox: enqueue needs the caller's transaction")
	}
	if job.Queue == "" {
		return "", errors.New("outbox: queue is required")
	}
	if job.TraceParent == "" {
		job.TraceParent, job.TraceState = client.TraceParentFrom(ctx)
	}
	req, payload, err := encodeJob(job)
	if err != nil {
		return "", err
	}
	now := time.Now()
	id := "obx_" + ulid.MustNew(ulid.Timestamp(now), rand.Reader).String()
	if _, err := tx.ExecContext(ctx, `INSERT INTO jobbie_outbox (id, queue, request, payload, created_at, next_attempt_at)
		VALUES ($1, $2, $3, $4, $5, $5)`, id, job.Queue, req, payload, now.UnixMilli()); err != nil {
		return "", fmt.Errorf("outbox: enqueue: %w", err)
	}
	return id, nil
}

// storedJob is a Job as the row keeps it: the request's own Go fields
// (storedJob has none of EnqueueRequest's methods, so encoding/json writes
// the fields rather than the wire shape), with the payload kept apart, in
// its own column, byte for byte. Every send of a row is the same request,
// as its Idempotency-Key needs.
type storedJob Job

// encodeJob is a job's options and payload as the row's columns; the
// payload is nil when the job has none.
func encodeJob(job Job) (request string, payload *string, err error) {
	if job.Payload != nil {
		raw, err := json.Marshal(job.Payload)
		if err != nil {
			return "", nil, fmt.Errorf("outbox: payload: %w", err)
		}
		s := string(raw)
		payload = &s
	}
	job.Payload = nil
	raw, err := json.Marshal(storedJob(job))
	if err != nil {
		return "", nil, fmt.Errorf("outbox: job options: %w", err)
	}
	return string(raw), payload, nil
}

// decodeJob is a row's job again. Numbers in chain steps' payloads stay
// as written (json.Number), so a resend encodes them the same.
func decodeJob(request string, payload sql.NullString) (Job, error) {
	var s storedJob
	dec := json.NewDecoder(bytes.NewReader([]byte(request)))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return Job{}, fmt.Errorf("outbox: the row's job options: %w", err)
	}
	job := Job(s)
	if payload.Valid {
		job.Payload = json.RawMessage(payload.String)
	}
	return job, nil
}
