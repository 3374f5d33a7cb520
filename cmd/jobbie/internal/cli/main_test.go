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
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(os.TempDir(), fmt.Sprintf("jobbie-test-noconfig-%d", os.Getpid())))
	goleak.VerifyTestMain(m)
}
