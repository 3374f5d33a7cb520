package roles

import (
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/settings"
	"github.com/jobbie/jobbie/gateway"
)

func TestGatewayLimitFlags(t *testing.T) {
	t.Parallel()
	// The ranges are checked with the role's settings, as a run does.
	parse := func(args ...string) (gateway.Config, error) {
		var l gatewayLimits
		cmd := &cobra.Command{Use: "gateway"}
		l.flags(cmd.Flags())
		require.NoError(t, cmd.Flags().Parse(args))
		var cfg gateway.Config
		if err := settings.Check(settings.Schema(cmd, "gateway")); err != nil {
			return cfg, err
		}
		l.apply(&cfg)
		return cfg, nil
	}
	cfg, err := parse()
	require.NoError(t, err)
	def := gateway.Config{}.WithDefaults()
	require.Equal(t, def.MaxConnsPerAddr, cfg.MaxConnsPerAddr, "the flags default to the config's defaults")
	require.Equal(t, def.RevocationMaxAge, cfg.RevocationMaxAge)
	require.Equal(t, def.MaxConns, cfg.MaxConns)
	require.Equal(t, def.TunnelHandshakeTimeout, cfg.TunnelHandshakeTimeout)
	require.Equal(t, def.TunnelMaxHandshakes, cfg.TunnelMaxHandshakes)
	require.Equal(t, def.TunnelMaxHandshakesPerAddr, cfg.TunnelMaxHandshakesPerAddr)

	cfg, err = parse("--max-conns", "-1", "--tunnel-handshake-timeout", "2s", "--tunnel-max-handshakes", "50", "--tunnel-max-handshakes-per-addr", "4")
	require.NoError(t, err)
	require.Equal(t, -1, cfg.MaxConns)
	require.Equal(t, 2*time.Second, cfg.TunnelHandshakeTimeout)
	require.Equal(t, 50, cfg.TunnelMaxHandshakes)
	require.Equal(t, 4, cfg.TunnelMaxHandshakesPerAddr)

	cfg, err = parse("--max-conns-per-addr", "-1", "--max-long-polls-per-key", "5", "--max-long-polls-per-tenant", "9", "--revocation-max-age", "2m")
	require.NoError(t, err)
	require.Equal(t, -1, cfg.MaxConnsPerAddr)
	require.Equal(t, 5, cfg.MaxLongPollsPerKey)
	require.Equal(t, 9, cfg.MaxLongPollsPerTenant)
	require.Equal(t, 2*time.Minute, cfg.RevocationMaxAge)

	require.Equal(t, 30*time.Minute, def.SessionIdleTimeout)
	require.Equal(t, 12*time.Hour, def.SessionMaxAge)
	cfg, err = parse("--session-idle-timeout", "10m", "--session-max-age", "8h")
	require.NoError(t, err)
	require.Equal(t, 10*time.Minute, cfg.SessionIdleTimeout)
	require.Equal(t, 8*time.Hour, cfg.SessionMaxAge)

	for _, bad := range [][]string{{"--max-conns-per-addr", "0"}, {"--max-long-polls-per-key", "-2"}, {"--revocation-max-age", "0s"},
		{"--max-conns", "0"}, {"--tunnel-max-handshakes", "-3"}, {"--tunnel-max-handshakes-per-addr", "0"}, {"--tunnel-handshake-timeout", "0s"},
		{"--session-idle-timeout", "0s"}, {"--session-max-age", "-1h"}} {
		_, err := parse(bad...)
		require.ErrorContains(t, err, bad[0])
	}
}
