package main

import (
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/settings"
)

// docs/configuration.md is generated from the roles' settings, so a
// setting added, renamed or given another default without the docs
// fails TestConfigurationDocIsCurrent. `go test ./cmd/jobbie -run
// TestConfigurationDocIsCurrent -update-config-doc` writes it again.
var updateConfigDoc = flag.Bool("update-config-doc", false, "write docs/configuration.md from the settings schema")

const configDoc = "../../docs/configuration.md"

func TestConfigurationDocIsCurrent(t *testing.T) {
	t.Parallel()
	roles := settings.Roles(newRoot())
	var names []string
	for _, r := range roles {
		names = append(names, r.Role)
	}
	require.Equal(t, []string{"control", "dev", "gateway", "shard", "worker"}, names, "every role reads its settings")
	got := settings.Markdown(roles)
	if *updateConfigDoc {
		require.NoError(t, os.WriteFile(configDoc, []byte(got), 0o644))
	}
	want, err := os.ReadFile(configDoc)
	require.NoError(t, err)
	require.Equal(t, string(want), got, "docs/configuration.md is not current: go test ./cmd/jobbie -run TestConfigurationDocIsCurrent -update-config-doc")
}
