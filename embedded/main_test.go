package embedded

import (
	"testing"

	"github.com/jobbie/jobbie/internal/leakcheck"
)

// Every test's node is closed before the check: Close must leave no
// goroutine behind.
func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }
