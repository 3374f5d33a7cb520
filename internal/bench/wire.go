package bench

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// API paths the bench calls.
const (
	pathEnqueue = "/api/v1/enqueue"
	pathBatch   = "/api/v1/enqueue/batch"
	pathFetch   = "/api/v1/fetch"
	pathAck     = "/api/v1/ack/"
)

// jobBody is the JSON of one job: the queue and a payload of exactly size
// bytes ({"d":"xxx…"}).
func jobBody(queue string, size int) []byte {
	q, _ := json.Marshal(queue)
	b := append([]byte(`{"queue":`), q...)
	b = append(b, `,"payload":{"d":"`...)
	b = append(b, strings.Repeat("x", size-8)...)
	return append(b, `"}}`...)
}

// enqueueBody is the body of one enqueue call: a single job, or a batch.
func enqueueBody(queue string, size, batch int) []byte {
	job := jobBody(queue, size)
	if batch == 1 {
		return job
	}
	b := []byte(`{"jobs":[`)
	for i := range batch {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, job...)
	}
	return append(b, "]}"...)
}

// fetchBody is a worker's fetch request.
func fetchBody(queue, workerID, hostname string, timeout time.Duration) []byte {
	b, _ := json.Marshal(map[string]any{
		"queues": []string{queue}, "worker_id": workerID, "hostname": hostname,
		"timeout": timeout.Seconds(),
	})
	return b
}

// ackBody is a worker's ack request.
func ackBody(workerID string) []byte {
	b, _ := json.Marshal(map[string]string{"worker_id": workerID})
	return b
}

// The parts of responses the bench reads.
type (
	enqueueReply struct {
		JobID string `json:"job_id"`
	}
	batchReply struct {
		JobIDs []string `json:"job_ids"`
	}
	fetchReply struct {
		JobID string `json:"job_id"`
	}
	errorReply struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
)

// errorCode names a failed call for the report: the API's error code, a
// transport failure ("timeout", "network"), or "http_<status>" for a
// response without the API's error shape.
func errorCode(r reply, err error) string {
	if err != nil {
		var ne net.Error
		if errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, os.ErrDeadlineExceeded) ||
			errors.Is(err, context.DeadlineExceeded) ||
			(errors.As(err, &ne) && ne.Timeout()) {
			return "timeout"
		}
		return "network"
	}
	var e errorReply
	if json.Unmarshal(r.body, &e) == nil && e.Error.Code != "" {
		return e.Error.Code
	}
	return "http_" + strconv.Itoa(r.status)
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "bench"
	}
	return h
}
