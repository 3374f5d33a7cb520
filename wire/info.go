package wire

// GatewayInfo is GET /api/v1/info: what a gateway tells anyone, with no
// key, about how to reach it.
type GatewayInfo struct {
	// GRPCURL is where the gateway serves gRPC and Connect
	// (docs/api/grpc.md), the worker stream among them:
	// "http://host:port" for HTTP/2 without TLS, "https://host:port" with
	// TLS. Empty when it serves none.
	GRPCURL string `json:"grpc_url"`
}
