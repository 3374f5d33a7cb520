package shard

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/sstable"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/envelope"
	"github.com/jobbie/jobbie/wire"
)

// withMasterKey runs the node with an operator master key.
func withMasterKey(k envelope.Key) func(*Config) {
	return func(c *Config) { c.MasterKey = &k }
}

// filesHolding is every file under dir whose bytes hold marker, a
// Pebble table's entries read through its blocks: a compressed block can
// hold a string as back-references, which no grep of the file finds.
func filesHolding(t *testing.T, dir string, marker []byte) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, marker) || strings.HasSuffix(p, ".sst") && tableHolds(t, p, marker) || snapshotHolds(t, b, marker) {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	}))
	return out
}

// snapshotHolds reports whether b is a Raft snapshot of a node's state
// (the replica's format: its magic, then a tar of a Pebble checkpoint)
// with a table that holds marker.
func snapshotHolds(t *testing.T, b, marker []byte) bool {
	t.Helper()
	const magic = "jobbie-pebble-checkpoint/1\n"
	if !bytes.HasPrefix(b, []byte(magic)) {
		return false
	}
	tr := tar.NewReader(bytes.NewReader(b[len(magic):]))
	dir := t.TempDir()
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return false
		}
		require.NoError(t, err)
		if !strings.HasSuffix(hdr.Name, ".sst") {
			continue
		}
		body, err := io.ReadAll(tr)
		require.NoError(t, err)
		p := filepath.Join(dir, filepath.Base(hdr.Name))
		require.NoError(t, os.WriteFile(p, body, 0o600))
		if tableHolds(t, p, marker) {
			return true
		}
	}
}

// tableHolds reports whether any entry of the Pebble table at path, every
// version and deletion included, holds marker in its key or value.
func tableHolds(t *testing.T, path string, marker []byte) bool {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	readable, err := sstable.NewSimpleReadable(f)
	require.NoError(t, err)
	r, err := sstable.NewReader(readable, sstable.ReaderOptions{})
	require.NoError(t, err)
	defer r.Close() // closes f
	it, err := r.NewIter(nil, nil)
	require.NoError(t, err)
	defer it.Close()
	for k, v := it.First(); k != nil; k, v = it.Next() {
		val, _, err := v.Value(nil)
		require.NoError(t, err)
		if bytes.Contains(k.UserKey, marker) || bytes.Contains(val, marker) {
			return true
		}
	}
	require.NoError(t, it.Error())
	return false
}

// The bar of encryption at rest: a payload's plaintext is in no file of
// the node (Pebble's, the Raft log's) and in no backup, while every read
// answers it in the clear. A namespace without encryption on the same
// node shows its marker in those same files, so the grep can fail.
func TestEncryptedPayloadsNeverReachTheDisk(t *testing.T) {
	t.Parallel()
	b := setup(t, withMasterKey(envelope.NewKey()))
	enc, plain := b.in(testNS), b.in(otherNS)
	on := enc.ok("PUT", "/api/v1/encryption", map[string]any{"enabled": true}, 200)
	require.Equal(t, wire.KeySourceOperator, on.Body["key_source"])
	require.EqualValues(t, 1, on.Body["generation"])

	secret := fmt.Sprintf("secret-marker-%d", os.Getpid())
	stepSecret, cbSecret, schedSecret := secret+"-step", secret+"-callback", secret+"-schedule"
	clear := strings.Replace(secret, "secret", "clear", 1)
	payload := json.RawMessage(`{"card":"` + secret + `","n":12345678901234567890}`)
	id := enc.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "pay", "payload": payload,
		"chain": map[string]any{"steps": []any{map[string]any{}, map[string]any{"queue": "pay2", "payload": map[string]any{"s": stepSecret}}}}}, 201).Body["job_id"].(string)
	enc.ok("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": []any{map[string]any{"queue": "bq", "payload": secret}},
		"batch": map[string]any{"callback_queue": "cb", "callback_payload": cbSecret}}, 201)
	sched := enc.ok("POST", "/api/v1/schedules", map[string]any{"name": "nightly", "queue": "sq", "cron": "0 3 * * *", "payload": map[string]any{"s": schedSecret}}, 201)
	require.Equal(t, map[string]any{"s": schedSecret}, sched.Body["payload"])
	plain.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "pay", "payload": map[string]any{"card": clear}}, 201)

	// Every read answers the plaintext.
	got := enc.ok("GET", "/api/v1/jobs/"+id, nil, 200)
	require.JSONEq(t, `{"card":"`+secret+`","n":12345678901234567890}`, string(mustJSON(got.Body["payload"])))
	require.Contains(t, string(got.Raw), "12345678901234567890", "numbers keep their digits")
	f := enc.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"pay"}, "worker_id": "w", "timeout": 0}, 200)
	require.Equal(t, id, f.Body["job_id"])
	require.Equal(t, secret, f.Body["payload"].(map[string]any)["card"])
	enc.ok("POST", "/api/v1/ack/"+id, map[string]any{"result": map[string]any{"ok": true}}, 200)
	next := enc.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"pay2"}, "worker_id": "w", "timeout": 0}, 200)
	require.Equal(t, map[string]any{"s": stepSecret}, next.Body["payload"].(map[string]any)["payload"], "the chain's next step opens its sealed payload")
	fb := enc.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"bq"}, "worker_id": "w", "timeout": 0}, 200)
	require.Equal(t, secret, fb.Body["payload"])
	enc.ok("POST", "/api/v1/ack/"+fb.Body["job_id"].(string), nil, 200)
	cb := enc.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"cb"}, "worker_id": "w", "timeout": 0}, 200)
	require.Contains(t, string(cb.Raw), `"callback_payload":"`+cbSecret+`"`, "the batch callback opens its sealed payload")
	list := enc.ok("GET", "/api/v1/schedules", nil, 200)
	require.Contains(t, string(list.Raw), schedSecret)

	// Another namespace's key (header) finds nothing of this one's.
	require.Equal(t, 404, plain.call("GET", "/api/v1/jobs/"+id, nil).Status)

	// A backup is a zstd stream: its records, decompressed, are grepped.
	backup := b.backupOf(testNS)
	records := backupBytes(t, backup)
	require.Contains(t, string(records), "job_", "the backup holds the namespace's records")
	for _, m := range []string{secret, stepSecret, cbSecret, schedSecret} {
		require.False(t, bytes.Contains(records, []byte(m)), "the backup holds %s", m)
	}
	require.True(t, bytes.Contains(backupBytes(t, b.backupOf(otherNS)), []byte(clear)), "the grep of a backup finds a plaintext payload")

	// Restored into another namespace, the backup's wrapped keys open
	// its payloads there.
	require.Equal(t, 200, b.restoreInto(restoredNS, wire.RestoreNew, backup).Status)
	r := b.in(restoredNS).ok("GET", "/api/v1/jobs/"+id, nil, 200)
	require.Equal(t, secret, r.Body["payload"].(map[string]any)["card"])

	// On disk: nothing, with a Raft snapshot taken and the node stopped
	// so every write is in its files; the plaintext namespace's marker
	// is, in the Raft log, in Pebble's files and in the snapshot.
	require.NoError(t, b.srv.repl.Snapshot())
	require.NoError(t, b.srv.Stop())
	for _, m := range []string{secret, stepSecret, cbSecret, schedSecret} {
		require.Empty(t, filesHolding(t, b.dir, []byte(m)), "files holding %s", m)
	}
	found := filesHolding(t, b.dir, []byte(clear))
	t.Logf("files holding the plaintext marker: %v", found)
	require.True(t, anyUnder(found, "raft/"), "the Raft log (raft/) holds the plaintext marker: %v", found)
	require.True(t, anyUnder(found, "state/"), "Pebble's files (state/) hold the plaintext marker: %v", found)
	require.True(t, anyUnder(found, "snapshots/"), "the Raft snapshot holds the plaintext marker: %v", found)
}

// backupBytes is every key and value of a backup's records, end to end.
func backupBytes(t *testing.T, raw []byte) []byte {
	var out []byte
	for _, r := range readStream(t, raw).records {
		out = append(append(out, r.Key...), r.Value...)
	}
	return out
}

func anyUnder(files []string, part string) bool {
	for _, f := range files {
		if strings.Contains(f, part) {
			return true
		}
	}
	return false
}

// The tenant's key: supplied (the namespace key wrapped by it), rotated
// (payloads stay readable, nothing rewritten), revoked (its payloads
// unreadable, by its name; another namespace untouched); the key itself
// is in no answer.
func TestTenantKeyRotatesAndRevokes(t *testing.T) {
	t.Parallel()
	b := setup(t, withMasterKey(envelope.NewKey()))
	ns, other := b.in(testNS), b.in(otherNS)
	k1, k2, k3 := envelope.NewKey(), envelope.NewKey(), envelope.NewKey()
	b64 := func(k envelope.Key) string { return base64.StdEncoding.EncodeToString(k[:]) }

	audited := b.call("PUT", "/api/v1/encryption", map[string]any{"enabled": true, "tenant_key": b64(k1)},
		auditHeader(t, "k1", "encryption.manage", "PUT /api/v1/encryption", "encryption", "", 30)...)
	require.Equal(t, 200, audited.Status, string(audited.Raw))
	on := ns.ok("GET", "/api/v1/encryption", nil, 200)
	require.Equal(t, wire.KeySourceTenant, on.Body["key_source"])
	require.Equal(t, k1.ID(), on.Body["tenant_key_id"])
	require.NotContains(t, string(on.Raw), b64(k1))
	require.NotContains(t, string(audited.Raw), b64(k1))
	records := b.auditPage("")
	require.Len(t, records.Records, 1, "the change is audited")
	require.NotContains(t, string(mustJSON(records)), b64(k1), "the audit record holds no key")
	other.ok("PUT", "/api/v1/encryption", map[string]any{"enabled": true}, 200)
	before := ns.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": "before"}, 201).Body["job_id"].(string)
	kept := other.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": "other"}, 201).Body["job_id"].(string)

	rot := ns.ok("PUT", "/api/v1/encryption", map[string]any{"tenant_key": b64(k2)}, 200)
	require.Equal(t, k2.ID(), rot.Body["tenant_key_id"])
	require.EqualValues(t, 1, rot.Body["generation"], "a rotation keeps the data key")
	require.Equal(t, "before", ns.ok("GET", "/api/v1/jobs/"+before, nil, 200).Body["payload"])
	after := ns.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": "after"}, 201).Body["job_id"].(string)
	require.Equal(t, "after", ns.ok("GET", "/api/v1/jobs/"+after, nil, 200).Body["payload"])
	got := ns.ok("GET", "/api/v1/encryption", nil, 200)
	for _, k := range []envelope.Key{k1, k2} {
		require.NotContains(t, string(got.Raw), b64(k))
	}

	rev := ns.ok("PUT", "/api/v1/encryption", map[string]any{"revoke_tenant_key": true}, 200)
	require.Equal(t, wire.KeySourceRevoked, rev.Body["key_source"])
	require.Nil(t, rev.Body["tenant_key_id"])
	for _, id := range []string{before, after} {
		r := ns.call("GET", "/api/v1/jobs/"+id, nil)
		require.Equal(t, 409, r.Status, string(r.Raw))
		require.Equal(t, string(wire.CodeEncryptionKeyRevoked), errCode(r))
		require.Contains(t, string(r.Raw), k2.ID(), "the error names the revoked key")
	}
	f := ns.call("POST", "/api/v1/fetch", map[string]any{"queues": []string{"q"}, "worker_id": "w", "timeout": 0})
	require.Equal(t, 409, f.Status, string(f.Raw))
	require.Equal(t, string(wire.CodeEncryptionKeyRevoked), errCode(f))
	q := ns.ok("GET", "/api/v1/queues/q", nil, 200)
	require.EqualValues(t, 0, q.Body["counts"].(map[string]any)["active"], "a fetch that cannot open its job gives the lease back: %s", q.Raw)
	e := ns.call("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": "lost"})
	require.Equal(t, 409, e.Status, string(e.Raw))
	require.Equal(t, string(wire.CodeEncryptionKeyRevoked), errCode(e))
	require.Equal(t, "other", other.ok("GET", "/api/v1/jobs/"+kept, nil, 200).Body["payload"], "another namespace reads on")

	// Only a new tenant key ends the revoke: a change of another setting
	// (or none) makes no keys under the operator's master key.
	for _, body := range []map[string]any{{"search_decrypt": true}, {}, {"enabled": true}} {
		still := ns.ok("PUT", "/api/v1/encryption", body, 200)
		require.Equal(t, wire.KeySourceRevoked, still.Body["key_source"], "PUT %v after a revoke: %s", body, still.Raw)
		require.EqualValues(t, 1, still.Body["generation"], "PUT %v after a revoke", body)
		require.Equal(t, 409, ns.call("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": "lost"}).Status)
	}

	// A new key starts a new generation; the revoked one stays unreadable.
	again := ns.ok("PUT", "/api/v1/encryption", map[string]any{"tenant_key": b64(k3)}, 200)
	require.EqualValues(t, 2, again.Body["generation"])
	fresh := ns.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q2", "payload": "fresh"}, 201).Body["job_id"].(string)
	require.Equal(t, "fresh", ns.ok("GET", "/api/v1/jobs/"+fresh, nil, 200).Body["payload"])
	require.Equal(t, 409, ns.call("GET", "/api/v1/jobs/"+before, nil).Status)
}

// Bad input is a 400 naming the field and changes nothing; a node
// without a master key refuses to encrypt.
func TestEncryptionBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t, withMasterKey(envelope.NewKey()))
	ns := b.in(testNS)
	ns.ok("PUT", "/api/v1/encryption", map[string]any{"enabled": true}, 200)
	before := ns.ok("GET", "/api/v1/encryption", nil, 200).Raw
	for _, c := range []struct {
		body  string
		field string
	}{
		{`{"tenant_key":"c2hvcnQ="}`, "tenant_key"},
		{`{"tenant_key":""}`, "tenant_key"},
		{`{"tenant_key":"` + base64.StdEncoding.EncodeToString(make([]byte, 32)) + `"}`, "tenant_key"},
		{`{"revoke_tenant_key":true}`, "revoke_tenant_key"},
		{`{"revoke_tenant_key":true,"tenant_key":"` + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32)) + `"}`, "revoke_tenant_key"},
		{`{"enabled":"yes"}`, "enabled"},
		{`{"tenant_keys":"x"}`, "tenant_keys"},
	} {
		r := ns.call("PUT", "/api/v1/encryption", []byte(c.body))
		require.Equal(t, 400, r.Status, "%s: %s", c.body, r.Raw)
		require.Equal(t, c.field, errField(r), "%s: %s", c.body, r.Raw)
		require.NotContains(t, string(r.Raw), "c2hvcnQ", "the key is in no answer")
	}
	require.Equal(t, before, ns.ok("GET", "/api/v1/encryption", nil, 200).Raw, "a refused request changes nothing")

	r := setup(t).in(testNS).call("PUT", "/api/v1/encryption", map[string]any{"enabled": true})
	require.Equal(t, 409, r.Status, string(r.Raw))
	require.Equal(t, string(wire.CodeEncryptionOff), errCode(r))
}

// A search into encrypted payloads is refused unless the namespace lets
// the shard open them while it scans.
func TestSearchOverEncryptedPayloads(t *testing.T) {
	t.Parallel()
	b := setup(t, withMasterKey(envelope.NewKey()))
	ns := b.in(testNS)
	ns.ok("PUT", "/api/v1/encryption", map[string]any{"enabled": true}, 200)
	id := ns.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": map[string]any{"amount": 250, "who": "ada"}}, 201).Body["job_id"].(string)
	ns.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": map[string]any{"amount": 5, "who": "bob"}}, 201)

	for field, filter := range map[string]map[string]any{
		"payload_contains": {"payload_contains": "ada"},
		"payload_jq":       {"payload_jq": ".amount > 100"},
	} {
		r := ns.call("POST", "/api/v1/jobs/search", filter)
		require.Equal(t, 400, r.Status, string(r.Raw))
		require.Equal(t, field, errField(r), string(r.Raw))
	}
	all := ns.ok("POST", "/api/v1/jobs/search", map[string]any{"queue": "q"}, 200)
	require.Len(t, all.Body["jobs"], 2, "a search that looks at no payload answers them opened")

	ns.ok("PUT", "/api/v1/encryption", map[string]any{"search_decrypt": true}, 200)
	for _, filter := range []map[string]any{{"payload_contains": "ada"}, {"payload_jq": ".amount > 100"}, {"queue": "q", "payload_jq": ".who == \"ada\""}} {
		r := ns.ok("POST", "/api/v1/jobs/search", filter, 200)
		jobs := r.Body["jobs"].([]any)
		require.Len(t, jobs, 1, "%v: %s", filter, r.Raw)
		require.Equal(t, id, jobs[0].(map[string]any)["id"])
		require.Equal(t, "ada", jobs[0].(map[string]any)["payload"].(map[string]any)["who"])
	}
}

// What workers store is sealed as a payload is: results, progress,
// checkpoints, error texts and backtraces are in no file and no backup,
// and every read answers them in the clear (a chain's next step gets the
// previous result, a retry its checkpoint).
func TestWorkerValuesAreEncrypted(t *testing.T) {
	t.Parallel()
	b := setup(t, withMasterKey(envelope.NewKey()))
	ns := b.in(testNS)
	ns.ok("PUT", "/api/v1/encryption", map[string]any{"enabled": true, "search_decrypt": true}, 200)
	m := fmt.Sprintf("worker-marker-%d", os.Getpid())
	result, progress, checkpoint, text, trace := m+"-result", m+"-progress", m+"-checkpoint", m+"-error", m+"-trace"

	id := ns.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "w", "max_retries": 3, "retry_backoff": "fixed", "retry_base_delay": "1ms",
		"chain": map[string]any{"steps": []any{map[string]any{}, map[string]any{"queue": "w2"}}}}, 201).Body["job_id"].(string)
	fetch := func(q string) resp {
		return ns.ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{q}, "worker_id": "w", "timeout": 5}, 200)
	}
	fetch("w")
	ns.ok("POST", "/api/v1/heartbeat", map[string]any{"worker_id": "w", "jobs": map[string]any{id: map[string]any{"progress": progress, "checkpoint": map[string]any{"at": checkpoint}}}}, 200)
	ns.ok("POST", "/api/v1/fail/"+id, map[string]any{"error": text, "backtrace": trace}, 200)
	again := fetch("w")
	require.Equal(t, map[string]any{"at": checkpoint}, again.Body["checkpoint"], "a retry gets its checkpoint opened")
	ns.ok("POST", "/api/v1/ack/"+id, map[string]any{"result": result}, 200)
	next := fetch("w2")
	require.Equal(t, result, next.Body["payload"].(map[string]any)["previous_result"])

	d := ns.ok("GET", "/api/v1/jobs/"+id, nil, 200)
	require.Equal(t, result, d.Body["result"])
	require.Equal(t, progress, d.Body["progress"])
	errs := d.Body["errors"].([]any)
	require.Len(t, errs, 1)
	require.Equal(t, text, errs[0].(map[string]any)["error"])
	require.Equal(t, trace, errs[0].(map[string]any)["backtrace"])
	found := ns.ok("POST", "/api/v1/jobs/search", map[string]any{"error_contains": "marker"}, 200)
	require.Len(t, found.Body["jobs"], 1, "error_contains opens error texts when the namespace allows it: %s", found.Raw)
	require.Equal(t, text, found.Body["jobs"].([]any)[0].(map[string]any)["last_error"])

	records := backupBytes(t, b.backupOf(testNS))
	require.NoError(t, b.srv.Stop())
	for _, v := range []string{result, progress, checkpoint, text, trace} {
		require.False(t, bytes.Contains(records, []byte(v)), "the backup holds %s", v)
		require.Empty(t, filesHolding(t, b.dir, []byte(v)), "files holding %s", v)
	}
}

// A live move carries the namespace's wrapped keys with its sealed
// values: a target with the same master key reads them; the stream
// holds no plaintext; a target with another master key refuses by name.
func TestEncryptedNamespaceMoves(t *testing.T) {
	t.Parallel()
	master := envelope.NewKey()
	src, dst, stranger := setup(t, withMasterKey(master)), setup(t, withMasterKey(master)), setup(t, withMasterKey(envelope.NewKey()))
	s := src.in(testNS)
	s.ok("PUT", "/api/v1/encryption", map[string]any{"enabled": true}, 200)
	secret := fmt.Sprintf("moved-marker-%d", os.Getpid())
	id := s.ok("POST", "/api/v1/enqueue", map[string]any{"queue": "q", "payload": secret}, 201).Body["job_id"].(string)

	move := func(to *bundle, tok string) {
		to.mvOK("POST", "begin", testNS, tok, nil)
		raw := src.mvOK("GET", "snapshot", testNS, tok, nil).Raw
		require.False(t, bytes.Contains(backupBytes(t, raw), []byte(secret)), "the move's stream holds the plaintext")
		r := to.mv("POST", "apply", testNS, tok, raw)
		require.Equal(t, 200, r.Status, string(r.Raw))
		to.mvOK("POST", "end", testNS, tok, nil)
	}
	move(dst, "mov_01JD0000000000000000000007")
	require.Equal(t, secret, dst.in(testNS).ok("GET", "/api/v1/jobs/"+id, nil, 200).Body["payload"])
	require.Equal(t, secret, dst.in(testNS).ok("POST", "/api/v1/fetch", map[string]any{"queues": []string{"q"}, "worker_id": "w", "timeout": 0}, 200).Body["payload"])

	move(stranger, "mov_01JD0000000000000000000008")
	r := stranger.in(testNS).call("GET", "/api/v1/jobs/"+id, nil)
	require.Equal(t, 409, r.Status, string(r.Raw))
	require.Equal(t, string(wire.CodeEncryptionOff), errCode(r))
}

// A push queue of an encrypted namespace delivers the payload opened, and
// the handler's result and failure text are sealed as a worker's are.
func TestPushDeliversEncryptedPayloadsOpened(t *testing.T) {
	t.Parallel()
	secret := fmt.Sprintf("push-marker-%d", os.Getpid())
	rcv := newReceiver(t, func(w http.ResponseWriter, d wire.PushDelivery, n int) {
		if d.Attempt == 1 {
			http.Error(w, "down: "+secret+"-error", 500)
			return
		}
		fmt.Fprintf(w, `{"result":{"seen":%s}}`, d.Payload)
	})
	k := envelope.NewKey()
	pool := x509.NewCertPool()
	pool.AddCert(rcv.srv.Certificate())
	b := setup(t, withMasterKey(k), func(c *Config) { c.PushAllowPrivate, c.PushRootCAs = true, pool })
	r := b.call("GET", "/api/v1/signing-keys", nil)
	require.Equal(t, 200, r.Status, string(r.Raw))
	var keys []string
	for _, k := range r.Body["keys"].([]any) {
		keys = append(keys, k.(map[string]any)["public_key"].(string))
	}
	rcv.keys.Store(keys)
	b.in(testNS).ok("PUT", "/api/v1/encryption", map[string]any{"enabled": true}, 200)
	b.putQueue("hooks", map[string]any{"push": map[string]any{"url": rcv.srv.URL + "/jobs"},
		"defaults": map[string]any{"retry_base_delay": 1, "retry_max_delay": 1}})
	id := b.enqueue(map[string]any{"queue": "hooks", "payload": map[string]any{"s": secret}})
	j := b.waitState(id, "completed")
	require.Equal(t, map[string]any{"seen": map[string]any{"s": secret}}, j["result"], "the handler got the payload opened")
	require.Contains(t, j["errors"].([]any)[0].(map[string]any)["error"], secret+"-error")
	require.Zero(t, rcv.bad.Load(), "every request verified")
	records := backupBytes(t, b.backupOf(testNS))
	require.False(t, bytes.Contains(records, []byte(secret)), "the backup holds the payload, result or error in the clear")
}
