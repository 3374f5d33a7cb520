package replica

import (
	"testing"

	"github.com/jobbie/jobbie/internal/leakcheck"
)

func TestMain(m *testing.M) {
	checkOwnEffects = true // race builds check anyway; the others in tests
	leakcheck.VerifyTestMain(m)
}
