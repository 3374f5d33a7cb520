package bench

import (
	"testing"

	"github.com/jobbie/jobbie/internal/leakcheck"
)

func TestMain(m *testing.M) {
	// fasthttp's pool and DNS cache cleaners outlive a closed client (the
	// DNS one for the life of the process); they are not goroutines of ours.
	leakcheck.VerifyTestMain(m)
}
