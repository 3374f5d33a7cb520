package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// TestMain points the config file at a directory with none, so a
// developer's own contexts never reach the tests.
func TestMain(m *testing.M) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("jobbie-test-noconfig-%d", os.Getpid()))
	os.Setenv("XDG_CONFIG_HOME", dir)
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) { _ = os.RemoveAll(dir); os.Exit(code) }))
}
