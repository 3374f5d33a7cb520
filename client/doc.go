// Package client is the Go SDK for Jobbie: a thin HTTP/JSON wrapper over
// the public API, plus a worker runtime.
//
// A Client talks to a gateway (or, with the right headers, straight to a
// shard or the control plane). It holds no job-lifecycle logic: a job's
// retries, backoff, uniqueness, priority and rate limits are the server's
// business.
//
// A request that did not get through is sent again by the client's
// RetryPolicy (DefaultRetryPolicy: 5 sends within 30 s, jittered
// exponential backoff from 100 ms to 5 s, honouring Retry-After), but only
// where sending it twice cannot act twice: a GET, and the creating calls
// (Enqueue, EnqueueBatch, CreateSchedule, CreateWebhook), each of which
// sends an Idempotency-Key, new per call and the same for its retries, so
// an enqueue whose answer was lost is not enqueued again: the server
// answers the first's job (docs/api/README.md, "Idempotency"). A 429, a
// 502, 503 or 504 and a network error are retried; WithRetryPolicy tunes
// it, WithoutRetries turns it off, WithIdempotencyKey sends a key of the
// caller's own (an order id) that outlives the process. Other calls (ack,
// fail, cancel, updates, deletes) are sent once; the worker runtime paces
// its own retries of fetches, acks and fails by the same policy.
//
//	c := client.New("https://jobbie.example.com", apiKey)
//	res, err := c.Enqueue(ctx, client.EnqueueRequest{Queue: "emails.send", Payload: msg})
//
// Workers use Fetch (a long-poll that returns nil, nil when no job arrived),
// Ack, Fail and Heartbeat, passing back the job's LeaseToken (Lease) so
// that a worker whose lease ran out cannot settle the attempt of the
// worker that has the job now, or let a Worker run the loops, which does:
//
//	w := client.NewWorker(c, client.WorkerConfig{Queues: []string{"emails.send"}, Concurrency: 8},
//		func(ctx context.Context, job *client.JobContext) (any, error) {
//			var msg Email
//			if err := job.Decode(&msg); err != nil {
//				return nil, err
//			}
//			return send(ctx, msg)
//		})
//	err := w.Run(ctx) // returns after a graceful shutdown once ctx is cancelled
//
// A Worker works over the gateway's worker stream when it can have it:
// one WorkerService.Work stream to the gateway's gRPC port
// (docs/api/grpc.md), found with Client.Info (GET /api/v1/info) unless
// WorkerConfig.StreamURL names it. Jobs come down the stream up to
// Concurrency, acks, fails and heartbeats go up it gathered into frames,
// a cancel arrives as a frame as soon as it applies (heartbeats or not:
// the handler's context ends with ErrJobCancelled), a broken stream is
// opened again with backoff, and on the gateway's Drain the worker
// finishes its jobs and reconnects. When the gateway serves no gRPC
// port, or the stream cannot be reached (connection refused, no HTTP/2
// on the way, the method not served), the worker long-polls the HTTP API
// instead, with the same Handler, JobContext and shutdown, and tries the
// stream again after WorkerConfig.StreamRetry (doubling while it stays
// out of reach).
// Worker.Transport says which it is on, and the log says when it
// changes. Transport TransportHTTP or TransportStream forces one; a
// worker forced onto the stream fails with ErrNoStream when there is
// none:
//
//	w := client.NewWorker(c, client.WorkerConfig{Queues: []string{"emails.send"}, Concurrency: 8,
//		Transport: client.TransportStream, StreamURL: "https://jobbie.example.com:9090"}, handle)
//
// A handler's error is retried by the job's policy; one no retry can fix
// is returned as Permanent(err) (or wraps one), and the job is dead at
// once with dead_reason "non_retryable" (Fail takes NonRetryable for the
// same by hand; a PushHandler answers "non_retryable": true).
//
// Operators find jobs with Search (one page) or SearchAll and SearchPages
// (iterators that follow cursors), and act on many at once with Bulk, by
// ids or by the same SearchFilter; a bulk over a large filter runs in the
// background, followed with WatchBulk:
//
//	for job, err := range c.SearchAll(ctx, client.SearchRequest{SearchFilter: client.SearchFilter{
//		Queue: "emails.send", State: []string{client.StateDead}}}) {
//		...
//	}
//
// A push queue's HTTPS handler runs the same Handler with PushHandler,
// which verifies each delivery's Standard Webhooks signature
// (WebhookVerifier, VerifyWebhook) first; docs/api/push.md is the
// delivery contract. A namespace's lifecycle webhook endpoints are
// managed with CreateWebhook and its siblings, their delivery log read
// with WebhookDeliveries (docs/api/webhooks.md); their requests verify
// the same way. A namespace's alert rules are CreateAlertRule and its
// siblings (docs/api/alerts.md); the tenant's audit log is read a page
// at a time with Audit, or whole, following cursors, with AuditAll
// (docs/api/audit.md).
//
// A W3C trace context rides in a context.Context (WithTraceParent,
// TraceParentFrom): Enqueue and EnqueueBatch send it with each job that
// names none, and a Worker runs each handler with its job's, so what a
// handler enqueues continues the job's trace. The worker records a
// `process <queue>` span around each handler with the OpenTelemetry API
// (WorkerConfig.TracerProvider, or the global provider); the package
// links no OpenTelemetry SDK or exporter. docs/api/jobs.md, "Trace
// context", says how the span relates to the job's trace.
//
// The examples show each resource family: jobs (Client.Enqueue), batches
// (Client.EnqueueBatch), chains (Client.GetChain), dependencies, queues
// (Client.PutQueue), schedules (Client.CreateSchedule), search with
// cursors (Client.SearchPages), bulk with progress (Client.WatchBulk),
// workers (NewWorker, Permanent, Client.DrainWorker), events with resume
// (Client.Events), namespaces, keys, roles, usage, webhooks (with
// WebhookVerifier.Verify), alert rules (Client.CreateAlertRule), the
// audit log (Client.Audit, Client.AuditAll), trace context
// (WithTraceParent) and idempotent retries (WithIdempotencyKey,
// RetryPolicy).
//
// Every non-2xx answer is returned as *Error carrying the server's stable
// error code; IsNotFound, IsRateLimited and friends test for the common
// ones, and Error.RetryAfter says when a 429 or 503 may be retried.
package client
