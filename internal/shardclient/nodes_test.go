package shardclient

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseShardAddr(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]struct {
		host      string
		tls, unix bool
	}{
		"127.0.0.1:7101":            {host: "127.0.0.1:7101"},
		"http://10.0.0.5:8082":      {host: "10.0.0.5:8082"},
		"https://shard.example:443": {host: "shard.example:443", tls: true},
		"unix:/run/jobbie/s1.sock":  {host: "/run/jobbie/s1.sock", unix: true},
	} {
		host, tls, unix, err := parseAddr(addr)
		require.NoError(t, err, addr)
		require.Equal(t, want.host, host, addr)
		require.Equal(t, want.tls, tls, addr)
		require.Equal(t, want.unix, unix, addr)
	}
	for _, bad := range []string{"unix:", "ftp://x:1", "no-port"} {
		_, _, _, err := parseAddr(bad)
		require.Error(t, err, bad)
	}
}
