package service

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/envelope"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/search"
	"github.com/jobbie/jobbie/wire"
)

// Sealing a namespace's values before they are proposed, and opening them
// when they are answered. A namespace's record is read once per change of
// the engine's encryption epoch (keysOf), so a namespace that never had
// keys costs a map lookup per request that stores values, and nothing on
// reads: a value that holds no sealed value is answered as it is.

// Sealed fields, named in each value's header.
const (
	fieldPayload    = "payload"
	fieldResult     = "result"
	fieldCheckpoint = "checkpoint"
	fieldProgress   = "progress"
	fieldError      = "error"
)

// keyring keeps, per namespace, what its record said when last read and
// the epoch it was read under (engine.EncryptionEpoch): while the epoch
// stands, no commit changed it (0: one is committing, and nothing read
// is kept). The data keys opened are kept with the
// record bytes they came from, so a new epoch that leaves the record as it
// was opens nothing again.
type keyring struct {
	mu   sync.Mutex
	open map[string]keyringEntry
}

type keyringEntry struct {
	epoch uint64
	keys  *nsKeys // nil: the namespace has no record
}

// nsKeys is a namespace's record and its current data key, or why it
// cannot be opened.
type nsKeys struct {
	raw string
	rec engine.EncryptionRecord
	dek *envelope.Cipher
	err error
}

// keysOf returns ns's keys as its record on this node stands; nil when it
// has none.
func (s *Service) keysOf(ns string) *nsKeys {
	epoch := s.eng.EncryptionEpoch() // before the read: a change committed after it moves the epoch
	s.keys.mu.Lock()
	was, ok := s.keys.open[ns]
	s.keys.mu.Unlock()
	if ok && was.epoch == epoch {
		return was.keys
	}
	raw := engine.ReadEncryptionRaw(s.node.DB(), ns)
	var k *nsKeys
	switch {
	case raw == nil:
	case was.keys != nil && was.keys.raw == string(raw):
		k = was.keys
	default:
		k = &nsKeys{raw: string(raw)}
		must(replica.Decode(raw, &k.rec))
		var dek envelope.Key
		if dek, k.err = s.dataKey(&k.rec); k.err == nil {
			k.dek = envelope.NewCipher(dek)
		}
	}
	if epoch == 0 {
		return k // a change is committing: what was read may be stale at once
	}
	s.keys.mu.Lock()
	defer s.keys.mu.Unlock()
	if s.keys.open == nil {
		s.keys.open = map[string]keyringEntry{}
	}
	if cur, ok := s.keys.open[ns]; !ok || cur.epoch <= epoch {
		s.keys.open[ns] = keyringEntry{epoch: epoch, keys: k}
	}
	return k
}

func (s *Service) dataKey(rec *engine.EncryptionRecord) (envelope.Key, error) {
	switch {
	case rec.DataKey == nil:
		return envelope.Key{}, revokedError(rec, rec.Gen)
	case s.cfg.MasterKey == nil:
		return envelope.Key{}, apierr.New(apierr.EncryptionOff, "this shard has no master key: the namespace's encrypted values cannot be opened")
	}
	nsKey, err := s.namespaceKey(rec)
	if err != nil {
		return envelope.Key{}, err
	}
	dek, err := envelope.Unwrap(nsKey, rec.DataKey, keyLabel(rec, "data"))
	if err != nil {
		return envelope.Key{}, masterMismatch()
	}
	return dek, nil
}

// revokedError names the tenant key whose revoke ended generation gen.
func revokedError(rec *engine.EncryptionRecord, gen uint32) error {
	i := slices.IndexFunc(rec.Revoked, func(r engine.RevokedKey) bool { return r.Gen == gen })
	if i < 0 {
		return apierr.New(apierr.EncryptionKeyRevoked, "the namespace has no key: supply a tenant key or enable encryption (PUT /api/v1/encryption)")
	}
	r := rec.Revoked[i]
	return apierr.New(apierr.EncryptionKeyRevoked, "sealed under tenant key %s, revoked at %s: it can never be read again",
		r.KeyID, time.Unix(0, r.At).UTC().Format(time.RFC3339))
}

// sealer seals the values of ns's new records; nil when ns does not
// seal. A namespace that seals but has no key (its tenant key was
// revoked) or cannot open it refuses to store.
type sealer struct {
	k *nsKeys
}

func (s *Service) sealerOf(ns string) (*sealer, error) {
	k := s.keysOf(ns)
	if k == nil || !k.rec.Enabled {
		return nil, nil
	}
	if k.err != nil {
		return nil, k.err
	}
	return &sealer{k: k}, nil
}

// seal returns v sealed as field of the record ctx; nil and "null" stay
// as they are (nothing to hide, and the engine tests for them).
func (z *sealer) seal(field, ctx string, v []byte) []byte {
	if z == nil || len(v) == 0 || string(v) == "null" {
		return v
	}
	return z.k.dek.Seal(z.k.rec.Keyspace, envelope.Header{Gen: z.k.rec.Gen, Field: field, Ctx: ctx}, v)
}

// openValue returns v with every sealed value in it opened. A v that is
// one sealed value must have been sealed as field for one of records (a
// sealed value moved from another record does not open; no records: a
// search's matching, whose answers are opened again with them); values the
// engine nested inside one of its own (a chain's next payload) are bound
// to their namespace, field and record by their seal alone.
func (s *Service) openValue(ns, field string, v []byte, records ...string) ([]byte, error) {
	if !envelope.Mentions(v) {
		return v, nil
	}
	k := s.keysOf(ns)
	if k == nil {
		return v, nil // a plain value that happens to hold the prefix
	}
	if len(records) > 0 && envelope.IsSealed(v) {
		h, _, err := envelope.Parse(v)
		if err == nil && (h.Field != field || !slices.Contains(records, h.Ctx)) {
			return nil, apierr.New(apierr.Internal, "a sealed %s was sealed for %s %s, not for this record", field, h.Field, h.Ctx)
		}
	}
	return envelope.OpenAll(v, func(h envelope.Header, blob []byte) ([]byte, error) {
		if h.Gen != k.rec.Gen || k.err != nil {
			if h.Gen != k.rec.Gen || k.rec.DataKey == nil {
				return nil, revokedError(&k.rec, h.Gen)
			}
			return nil, k.err
		}
		p, err := k.dek.Open(k.rec.Keyspace, h, blob)
		if err != nil {
			return nil, apierr.New(apierr.Internal, "a sealed %s of the namespace does not open: it was altered or moved", h.Field)
		}
		return p, nil
	})
}

// openJob returns j with its sealed values opened: a copy, since j may be
// the engine's own.
func (s *Service) openJob(ns string, j *job.Job) (*job.Job, error) {
	if !envelope.Mentions(j.Payload) && !envelope.Mentions(j.Result) && !envelope.Mentions(j.Checkpoint) &&
		!envelope.Mentions(j.Progress) && !errorsSealed(j) {
		return j, nil
	}
	c := *j
	records := []string{j.ID}
	for _, id := range []string{j.ChainID, j.BatchID, j.Tags[engine.TagScheduleID]} {
		if id != "" {
			records = append(records, id)
		}
	}
	var err error
	if c.Payload, err = s.openValue(ns, fieldPayload, j.Payload, records...); err != nil {
		return nil, jobValueError(j.ID, fieldPayload, err)
	}
	if c.Result, err = s.openValue(ns, fieldResult, j.Result, j.ID); err != nil {
		return nil, jobValueError(j.ID, fieldResult, err)
	}
	if c.Checkpoint, err = s.openValue(ns, fieldCheckpoint, j.Checkpoint, j.ID); err != nil {
		return nil, jobValueError(j.ID, fieldCheckpoint, err)
	}
	if c.Progress, err = s.openValue(ns, fieldProgress, j.Progress, j.ID); err != nil {
		return nil, jobValueError(j.ID, fieldProgress, err)
	}
	if errorsSealed(j) {
		c.Errors = slices.Clone(j.Errors)
		for i := range c.Errors {
			e, err := s.openString(ns, fieldError, c.Errors[i].Error, j.ID)
			if err != nil {
				return nil, jobValueError(j.ID, fieldError, err)
			}
			bt, err := s.openString(ns, fieldError, c.Errors[i].Backtrace, j.ID)
			if err != nil {
				return nil, jobValueError(j.ID, fieldError, err)
			}
			c.Errors[i].Error, c.Errors[i].Backtrace = e, bt
		}
	}
	return &c, nil
}

func errorsSealed(j *job.Job) bool {
	for _, e := range j.Errors {
		if strings.HasPrefix(e.Error, envelope.Prefix) || strings.HasPrefix(e.Backtrace, envelope.Prefix) {
			return true
		}
	}
	return false
}

func jobValueError(id, field string, err error) error {
	e := apierr.From(err)
	return apierr.New(e.Code, "the %s of job %s: %s", field, id, e.Message)
}

// sealString seals a text (an error's) as a JSON string, and keeps the
// sealed value's text: the record stores text there.
func (z *sealer) sealString(field, ctx, text string) string {
	if z == nil || text == "" {
		return text
	}
	b, _ := json.Marshal(text)
	v := z.seal(field, ctx, b)
	return string(v[1 : len(v)-1])
}

// openString opens what sealString sealed for record ("": any, for a
// search's matching); other text is returned as is.
func (s *Service) openString(ns, field, text, record string) (string, error) {
	if !strings.HasPrefix(text, envelope.Prefix) {
		return text, nil
	}
	var records []string
	if record != "" {
		records = []string{record}
	}
	v, err := s.openValue(ns, field, []byte(`"`+text+`"`), records...)
	if err != nil {
		return "", err
	}
	var out string
	if err := json.Unmarshal(v, &out); err != nil {
		return "", apierr.New(apierr.Internal, "a sealed %s is not text", field)
	}
	return out, nil
}

// sealJob seals a new job's payload for the job, and its chain's step
// payloads for the chain (its steps' jobs are made by the engine, which
// copies them).
func (z *sealer) sealJob(j *job.Job) error {
	if z == nil {
		return nil
	}
	j.Payload = z.seal(fieldPayload, j.ID, j.Payload)
	if j.Chain == nil {
		return nil
	}
	var c wire.ChainSpec
	if err := json.Unmarshal(j.Chain, &c); err != nil {
		return apierr.New(apierr.Internal, "chain: %v", err)
	}
	for i := range c.Steps {
		c.Steps[i].Payload = z.seal(fieldPayload, j.ChainID, c.Steps[i].Payload)
	}
	for _, h := range []*wire.StepSpec{c.OnFailure, c.OnExit} {
		if h != nil {
			h.Payload = z.seal(fieldPayload, j.ChainID, h.Payload)
		}
	}
	raw, err := json.Marshal(&c)
	if err != nil {
		return apierr.New(apierr.Internal, "chain: %v", err)
	}
	j.Chain = raw
	return nil
}

// sealSchedule seals the payload a schedule gives its jobs, for the
// schedule (its jobs carry its id in a tag).
func (s *Service) sealSchedule(ns string, sc *engine.Schedule) error {
	z, err := s.sealerOf(ns)
	if err != nil {
		return err
	}
	sc.Payload = z.seal(fieldPayload, sc.ID, sc.Payload)
	return nil
}

// searchOpener is how a search of ns with filter f reads payloads and
// error texts: as stored, unless ns has sealed some and f looks into
// them, which it may only when ns allows search over opened values (else
// 400 naming the filter's field).
func (s *Service) searchOpener(ns string, f *search.Filter) (func(*job.Job) bool, error) {
	field := ""
	switch {
	case f.PayloadContains != "":
		field = "payload_contains"
	case f.PayloadJQ != "":
		field = "payload_jq"
	case f.ErrorContains != "":
		field = "error_contains"
	default:
		return nil, nil
	}
	k := s.keysOf(ns)
	if k == nil || k.rec.Gen == 0 {
		return nil, nil
	}
	if !k.rec.SearchDecrypt {
		return nil, apierr.Field(field, "%s: the namespace's payloads and errors are encrypted; a search into them needs search_decrypt (PUT /api/v1/encryption)", field)
	}
	return func(j *job.Job) bool {
		var err error
		if j.Payload, err = s.openValue(ns, fieldPayload, j.Payload); err != nil {
			return false
		}
		for i := range j.Errors {
			if j.Errors[i].Error, err = s.openString(ns, fieldError, j.Errors[i].Error, ""); err != nil {
				return false
			}
		}
		return true
	}, nil
}

// sealWork seals a value a worker's call stores for job id (a result, a
// progress, a checkpoint). A namespace that cannot seal refuses only a
// call that stores one: an ack without a result still settles its job.
func (s *Service) sealWork(ns, field, id string, v []byte) ([]byte, error) {
	if len(v) == 0 || string(v) == "null" {
		return v, nil
	}
	z, err := s.sealerOf(ns)
	if err != nil {
		return nil, err
	}
	return z.seal(field, id, v), nil
}

// sealFailure seals a failure's error text and backtrace for job id.
func (s *Service) sealFailure(ns, id, text, trace string) (string, string, error) {
	if text == "" && trace == "" {
		return text, trace, nil
	}
	z, err := s.sealerOf(ns)
	if err != nil {
		return "", "", err
	}
	return z.sealString(fieldError, id, text), z.sealString(fieldError, id, trace), nil
}
