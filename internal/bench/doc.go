// Package bench is the load generator behind `jobbie bench`.
//
// Producers enqueue as fast as the server lets them (one job per call, or
// Batch jobs per enqueue/batch call), workers long-poll fetch and ack one
// job per call, as the seed protocol does; the run stops after Duration or
// once Jobs jobs were acked. A gate keeps at most MaxOutstanding jobs
// enqueued but not yet fetched, so a server that executes slower than it
// accepts is measured at its sustainable rate instead of growing a backlog
// without bound.
//
// Every enqueued job's id is remembered with the time its enqueue call
// started and returned; when a worker's fetch returns that id, the run
// records enqueue→delivered (from the call's return) and pickup (from the
// call's start). A fetch can return a job before its producer has recorded
// the return time; whichever of the two sides comes second completes the
// sample, and a delivery that beat the return counts as zero.
//
// Latency mode sends one job at a time to idle, waiting workers and
// measures how fast one job is picked up when nothing else is going on.
//
// The load generator shares the machine with the server in most runs, so
// it is frugal: valyala/fasthttp with one reused request and response per
// goroutine (BenchmarkTransport measures it at about half the cost per call
// of net/http, with no allocations), request bodies built once, no
// goroutine per request, and per-goroutine histograms merged at the end.
// Its worker streams read and write their frames by hand (streamcodec.go),
// reading only the ids, lease tokens and results they use.
package bench
