package connectapi

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/proto/gen/jobbie/v1/jobbiev1connect"
)

// A worker stream's frames come back uncompressed when the client only
// accepts gzip (as connect-go and grpc-go do on every call), and
// compressed when it sends its own frames compressed; in gRPC and in
// the Connect protocol.
func TestWorkStreamCompressesOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		header string // the response header naming the frames' encoding
		opts   []connect.ClientOption
		want   string
	}{
		{"grpc, accepts gzip", "Grpc-Encoding", []connect.ClientOption{connect.WithGRPC()}, ""},
		{"grpc, sends gzip", "Grpc-Encoding", []connect.ClientOption{connect.WithGRPC(), connect.WithSendGzip()}, "gzip"},
		{"connect, accepts gzip", "Connect-Content-Encoding", nil, ""},
		{"connect, sends gzip", "Connect-Content-Encoding", []connect.ClientOption{connect.WithSendGzip()}, "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newWorkerRoute(2)
			srvClient, url := serveWorkAt(t, f, WorkConfig{})
			ctx, cancel := context.WithCancel(context.Background())
			bidi := jobbiev1connect.NewWorkerServiceClient(srvClient, url, tc.opts...).Work(ctx)
			t.Cleanup(func() { // before the server's Close, which waits for the stream
				cancel()
				_ = bidi.CloseResponse()
			})
			require.NoError(t, bidi.Send(&jobbiev1.WorkRequest{Hello: &jobbiev1.Hello{WorkerId: "w1", Queues: []string{"q"}},
				Credit: &jobbiev1.Credit{N: 2}}))
			recv(t, bidi, func(r *jobbiev1.WorkResponse) bool { return len(r.GetJobs()) > 0 })
			require.Equal(t, tc.want, bidi.ResponseHeader().Get(tc.header))
			require.NoError(t, bidi.CloseRequest())
			for {
				if _, err := bidi.Receive(); err != nil {
					break
				}
			}
		})
	}
}
