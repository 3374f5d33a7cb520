package bench

import (
	"context"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// BenchmarkTransport compares the load generator's cost per call of the
// two transports against a server that does nothing, so the difference is
// the client's. Run with -benchmem: fasthttp allocates next to nothing.
// cpu-µs/call is the process's CPU time (user and system: the client's,
// the do-nothing server's and the loopback's) a call: the floor of one
// HTTP exchange on the machine, under any server behind the HTTP API
// (docs/BENCHMARKS.md, "The floors under the fast path's last bars").
func BenchmarkTransport(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	srv := &fasthttp.Server{Handler: func(c *fasthttp.RequestCtx) {
		c.SetStatusCode(201)
		c.SetContentType("application/json")
		c.SetBodyString(`{"job_id":"job_01HX7Y2K3M0000000000000000","status":"pending","unique_existing":false}`)
	}}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Shutdown() })
	base := "http://" + ln.Addr().String()
	headers := []header{{"Authorization", "Bearer k"}}
	body := []byte(`{"queue":"bench","payload":{"d":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}`)
	for name, tr := range map[string]transport{
		"fasthttp": newFastTransport(base, headers, 64, nil),
		"nethttp":  newStdTransport(base, headers, 64, nil),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(4)
			cpu0 := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				c := tr.newCaller()
				for pb.Next() {
					r, err := c.post(context.Background(), "/api/v1/enqueue", "", body, 5*time.Second)
					if err != nil || r.status != 201 {
						b.Errorf("post: %v %d", err, r.status)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/call")
			tr.close()
		})
	}
}

// processCPU is the process's CPU time so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
