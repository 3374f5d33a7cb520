package bench

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// BenchmarkTransport compares the load generator's cost per call of the
// two transports against a server that does nothing, so the difference is
// the client's. Run with -benchmem: fasthttp allocates next to nothing.
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
			tr.close()
		})
	}
}
