package limits

import (
	"log/slog"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
)

// Config configures the plans, quotas and schedule counts; its fields
// are the gateway Config's of the same names.
type Config struct {
	Control controlapi.Control
	Clock   clockwork.Clock
	Logger  *slog.Logger
	// Gossip, when set, is the pool whose gateways divide rate limits;
	// TLS signs this gateway's demand reports and checks the others'
	// (without it, none is sent or taken).
	Gossip                *gossip.Pool
	TLS                   *pki.Credentials
	PlanRefreshInterval   time.Duration
	PlanFetchWait         time.Duration
	RateLimitSyncInterval time.Duration
	ControlTimeout        time.Duration // bounds a quota fetch
	ShardTimeout          time.Duration // a schedule count waits twice this for its turn
}
