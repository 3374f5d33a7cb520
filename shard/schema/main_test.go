package schema

import (
	"testing"

	"github.com/jobbie/jobbie/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }
