// Package connectapi serves JobService, AdminService and WorkerService
// (proto/jobbie/v1), and KEDA's ExternalScaler (proto/externalscaler),
// over Connect, so one handler speaks gRPC, gRPC-Web
// and the Connect protocol. It decides nothing: each call becomes the HTTP API's request
// for the same thing (method, path, JSON body, the caller's key and
// namespace) and is served by the gateway's own route table in process
// (Route), behind the same chain as over HTTP: authentication, namespace,
// RBAC, queue scope, plan limits, fair admission, metering, the forward
// to the shard. Its answer becomes the call's response, or a Connect
// error by one table (errors.go). A worker stream (work.go) is such
// requests too, one per thing it does for the worker, and so is KEDA's
// external scaler (scaler.go), whose trigger metadata names the queue,
// the key and the namespace of GET /api/v1/queues/{name}/scale.
package connectapi
