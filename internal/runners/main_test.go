package runners

import (
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/leakcheck"
)

const (
	testWait  = 10 * time.Second
	pollEvery = time.Millisecond
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }
