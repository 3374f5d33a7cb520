package backup

import (
	"os"
	"testing"

	"github.com/jobbie/jobbie/internal/leakcheck"
)

func TestMain(m *testing.M) {
	if os.Getenv(s3ServerEnv) != "" {
		serveS3()
		return
	}
	leakcheck.VerifyTestMain(m)
}
