package state

import (
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// CheckSecret refuses a token whose secret a rotation replaced, once its
// grace period has ended.
func CheckSecret(r pebble.Reader, claims *tenancy.KeyClaims, now time.Time) error {
	gen, err := wire.SecretGeneration(claims.ID)
	if err != nil {
		return apierr.New(apierr.Unauthenticated, "invalid key: %v", err)
	}
	var ks wire.KeySecrets
	ok, err := getJSON(r, layout.Rotated(claims.Subject), &ks)
	if err != nil || !ok {
		return err
	}
	if works, _ := SecretWorks(ks, gen, now); !works {
		return apierr.New(apierr.Unauthenticated, "this secret of key %s was replaced by a rotation and no longer works", claims.Subject)
	}
	return nil
}
