package proxy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

func TestFetchWait(t *testing.T) {
	t.Parallel()
	def := wire.DefaultFetchTimeout
	wait := func(body string) time.Duration {
		d, err := fetchWait([]byte(body))
		require.NoError(t, err, body)
		return d
	}
	require.Equal(t, 5*time.Second, wait(`{"queues":["a"],"timeout":5}`))
	require.Equal(t, 1500*time.Millisecond, wait(`{"timeout":1.5}`))
	require.Equal(t, def, wait(`{"queues":["a"]}`))
	require.Equal(t, def, wait(`not json`), "the shard answers a body it cannot decode")
	require.Equal(t, def, wait("   "))
	require.Equal(t, wire.MaxFetchTimeout, wait(`{"timeout":60}`))
	// Out of bounds: refused at the gateway with the shard's own rule.
	for _, body := range []string{`{"timeout":3600}`, `{"timeout":120}`, `{"timeout":-1}`} {
		_, err := fetchWait([]byte(body))
		require.Equal(t, "timeout", apierr.From(err).Field, body)
	}
}
