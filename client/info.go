package client

import (
	"context"

	"github.com/jobbie/jobbie/wire"
)

// GatewayInfo is what a gateway tells anyone about how to reach it
// (GET /api/v1/info): GRPCURL, where it serves gRPC and the worker
// stream, "" when it serves none.
type GatewayInfo = wire.GatewayInfo

// Info asks the gateway how to reach it; no key is needed. A Worker asks
// it to find the worker stream (WorkerConfig.Transport).
func (c *Client) Info(ctx context.Context) (*GatewayInfo, error) {
	var out GatewayInfo
	if _, err := c.do(ctx, "GET", "/api/v1/info", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
