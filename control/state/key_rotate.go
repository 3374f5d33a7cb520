package state

import (
	"time"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// maxGraceSecrets bounds the replaced secrets of one key that may be in
// their grace periods at once.
const maxGraceSecrets = 10

// RotateKeyCmd gives a tenant's key a new secret: its generation grows by
// one, and the secret it replaces keeps working for Grace (checked by the
// proposer to be within wire.MaxGracePeriod).
type RotateKeyCmd struct {
	TenantID string        `json:"tenant_id"`
	ID       string        `json:"id"`
	Grace    time.Duration `json:"grace"`
}

// KeyRotated is a rotated key and until when its previous secret works.
type KeyRotated struct {
	Key                APIKey
	PreviousValidUntil time.Time
}

// applyRotateKey rotates a key. A rotation never lengthens an earlier
// secret's grace, and cuts it to end no later than the new one's: a grace
// period of 0 ends every earlier secret at once. Secrets whose grace has
// Ended are forgotten (their generation is below the key's, which is
// enough to refuse them).
func applyRotateKey(tx *replica.Tx, c *RotateKeyCmd) (KeyRotated, error) {
	k, err := LoadKey(tx, c.TenantID, c.ID)
	if err != nil {
		return KeyRotated{}, businessErr(err)
	}
	switch {
	case k.RevokedAt != nil:
		return KeyRotated{}, apierr.New(apierr.Conflict, "API key %s is revoked: it cannot be rotated", k.ID)
	case k.ExpiresAt != nil && !tx.Now.Before(*k.ExpiresAt):
		return KeyRotated{}, apierr.New(apierr.Conflict, "API key %s has expired: it cannot be rotated", k.ID)
	}
	until := tx.Now.Add(c.Grace)
	grace := make([]GraceSecret, 0, len(k.Grace)+1)
	for _, g := range k.Grace {
		if end := minTime(g.Until, until); end.After(tx.Now) {
			grace = append(grace, GraceSecret{Generation: g.Generation, Until: end})
		}
	}
	if c.Grace > 0 {
		if len(grace) >= maxGraceSecrets {
			return KeyRotated{}, apierr.New(apierr.Conflict,
				"API key %s has %d replaced secrets in their grace periods already: wait until %s, or rotate with grace_period 0",
				k.ID, len(grace), grace[0].Until.Format(time.RFC3339))
		}
		grace = append(grace, GraceSecret{Generation: k.Generation, Until: until})
	}
	now := tx.Now
	k.Generation++
	k.Grace = grace
	k.RotatedAt = &now
	putKey(tx, k)
	mustSetJSON(tx, layout.Rotated(k.ID), SecretsOf(k))
	version := must(getUint64(tx, layout.RevocationVersion()))
	mustSet(tx, layout.RevocationVersion(), layout.Uint64(version+1))
	return KeyRotated{Key: k, PreviousValidUntil: until}, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// SecretsOf is what gateways learn of a rotated key's secrets.
func SecretsOf(k APIKey) wire.KeySecrets {
	out := wire.KeySecrets{KeyID: k.ID, Generation: k.Generation}
	for _, g := range k.Grace {
		out.Grace = append(out.Grace, wire.GraceSecret{Generation: g.Generation, Until: g.Until})
	}
	return out
}

// SecretWorks reports whether a token of generation gen of a key works
// at now: the key's current generation (or a newer one, from a rotation
// not seen yet), or a replaced one still in its grace period.
func SecretWorks(ks wire.KeySecrets, gen uint64, now time.Time) (bool, time.Time) {
	if gen >= ks.Generation {
		return true, time.Time{}
	}
	for _, g := range ks.Grace {
		if g.Generation == gen {
			return now.Before(g.Until), g.Until
		}
	}
	return false, time.Time{}
}

// RecordKeyUseCmd records when gateways saw keys in use. Uses of unknown
// keys are skipped; a time ahead of the command's is taken as the
// command's, and a time older than the one recorded changes nothing.
type RecordKeyUseCmd struct {
	Uses []KeyUse `json:"uses"`
}

type KeyUse struct {
	TenantID string    `json:"tenant_id"`
	ID       string    `json:"id"`
	At       time.Time `json:"at"`
}

func applyRecordKeyUse(tx *replica.Tx, c *RecordKeyUseCmd) (replica.None, error) {
	for _, u := range c.Uses {
		if u.At.Before(time.Unix(0, 0)) || !must(Exists(tx, layout.Key(u.TenantID, u.ID))) {
			continue
		}
		at := uint64(minTime(u.At, tx.Now).UnixNano())
		if at > must(getUint64(tx, layout.KeyUsed(u.TenantID, u.ID))) {
			mustSet(tx, layout.KeyUsed(u.TenantID, u.ID), layout.Uint64(at))
		}
	}
	return replica.None{}, nil
}
