package roles

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway"
)

func TestGatewayLimitFlags(t *testing.T) {
	t.Parallel()
	parse := func(args ...string) (gateway.Config, error) {
		var l gatewayLimits
		f := pflag.NewFlagSet("gateway", pflag.ContinueOnError)
		l.flags(f)
		require.NoError(t, f.Parse(args))
		var cfg gateway.Config
		return cfg, l.apply(&cfg)
	}
	cfg, err := parse()
	require.NoError(t, err)
	def := gateway.Config{}.WithDefaults()
	require.Equal(t, def.MaxConnsPerAddr, cfg.MaxConnsPerAddr, "the flags default to the config's defaults")
	require.Equal(t, def.RevocationMaxAge, cfg.RevocationMaxAge)

	cfg, err = parse("--max-conns-per-addr", "-1", "--max-long-polls-per-key", "5", "--max-long-polls-per-tenant", "9", "--revocation-max-age", "2m")
	require.NoError(t, err)
	require.Equal(t, -1, cfg.MaxConnsPerAddr)
	require.Equal(t, 5, cfg.MaxLongPollsPerKey)
	require.Equal(t, 9, cfg.MaxLongPollsPerTenant)
	require.Equal(t, 2*time.Minute, cfg.RevocationMaxAge)

	for _, bad := range [][]string{{"--max-conns-per-addr", "0"}, {"--max-long-polls-per-key", "-2"}, {"--revocation-max-age", "0s"}} {
		_, err := parse(bad...)
		require.ErrorContains(t, err, bad[0])
	}
}
