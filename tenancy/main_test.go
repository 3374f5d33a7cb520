package tenancy

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks no test leaves a goroutine behind. tenancy imports
// nothing of Jobbie's, so it calls goleak itself (internal/leakcheck is
// the others' way in).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
