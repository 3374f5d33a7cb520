package rolelog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// JSON lines or text, from the chosen level up, and attributes named as
// secrets redacted in both.
func TestLogger(t *testing.T) {
	t.Parallel()
	const secret = "jk_live_0123456789abcdef"
	for _, format := range []string{FormatJSON, FormatText} {
		var out bytes.Buffer
		log := Options{Format: format, Level: "warn"}.New(&out)
		log.Info("dropped", "n", 1)
		log.Warn("kept", "key", secret, "join_token", secret, "Authorization", "Bearer "+secret,
			"s3_secret", secret, "key_id", "k_1", "keys", 2)
		got := out.String()
		require.NotContains(t, got, "dropped", format)
		require.NotContains(t, got, secret, format)
		require.Contains(t, got, "k_1", "%s: a key's id is no secret", format)
		if format == FormatJSON {
			var line map[string]any
			require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(got)), &line))
			require.Equal(t, "kept", line["msg"])
			require.Equal(t, "[redacted]", line["key"])
			require.Equal(t, "[redacted]", line["join_token"])
			require.EqualValues(t, 2, line["keys"])
		} else {
			require.Contains(t, got, "msg=kept")
			require.Contains(t, got, "key=[redacted]")
		}
	}
	var out bytes.Buffer
	Options{Format: FormatText, Level: "debug"}.New(&out).Debug("shown")
	require.Contains(t, out.String(), "level=DEBUG msg=shown")
}
