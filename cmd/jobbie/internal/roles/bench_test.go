package roles

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli"
	"github.com/jobbie/jobbie/internal/bench"
)

// bench reads the gateway's flags and variables as the CLI does, and its
// help never prints the key a variable holds.
func TestBenchTakesTheCLIFlags(t *testing.T) {
	t.Setenv("JOBBIE_URL", "http://10.0.0.5:8080")
	t.Setenv("JOBBIE_KEY", "s3cret-from-env")
	t.Setenv("JOBBIE_KEY_FILE", "")
	t.Setenv("JOBBIE_NAMESPACE", "")
	out, _, err := runJobbie(t, "", "bench", "--help")
	require.NoError(t, err)
	require.NotContains(t, out, "s3cret")
	require.Contains(t, out, "($JOBBIE_KEY_FILE)")

	var cfg bench.Config
	cmd := &cobra.Command{Use: "bench"}
	api := cli.GatewayFlags(cmd)
	keyFile := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(keyFile, []byte("from-file\n"), 0o600))
	require.NoError(t, cmd.ParseFlags([]string{"--key-file", keyFile, "--namespace", "ops"}))
	require.NoError(t, loadBenchCredentials(&cfg, api, roleTLS{}))
	require.Equal(t, "http://10.0.0.5:8080", cfg.URL)
	require.Equal(t, "from-file", cfg.Key, "a flag beats a variable")
	require.Equal(t, "ops", cfg.Namespace)
}
