package envelope

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSealOpensOnlyWhereSealed(t *testing.T) {
	t.Parallel()
	dek := NewKey()
	plain := []byte(`{"card":"4111-secret-marker"}`)
	h := Header{Gen: 3, Field: "payload", Ctx: "job_A"}
	v := Seal(dek, "acme", h, plain)
	require.False(t, bytes.Contains(v, []byte("secret-marker")), "the sealed value shows its plaintext")
	require.True(t, IsSealed(v))
	require.True(t, json.Valid(v), "a sealed value is one JSON string")

	got, bh, err := Parse(v)
	require.NoError(t, err)
	require.Equal(t, h, got)
	p, err := Open(dek, "acme", got, bh)
	require.NoError(t, err)
	require.Equal(t, plain, p)

	// Wrong key, another namespace, another job, another field, another
	// generation: none opens.
	_, err = Open(NewKey(), "acme", got, bh)
	require.ErrorIs(t, err, ErrKey)
	_, err = Open(dek, "other", got, bh)
	require.ErrorIs(t, err, ErrKey)
	for _, moved := range []Header{{3, "payload", "job_B"}, {3, "result", "job_A"}, {4, "payload", "job_A"}} {
		_, err = Open(dek, "acme", moved, bh)
		require.ErrorIs(t, err, ErrKey, "opened as %+v", moved)
	}
}

func TestTamperedValuesDoNotOpen(t *testing.T) {
	t.Parallel()
	dek := NewKey()
	v := Seal(dek, "acme", Header{Gen: 1, Field: "payload", Ctx: "job_A"}, []byte(`"x"`))
	h, blob, err := Parse(v)
	require.NoError(t, err)
	for i := range blob {
		b := bytes.Clone(blob)
		b[i] ^= 0x01
		_, err := Open(dek, "acme", h, b)
		require.ErrorIs(t, err, ErrKey, "a flipped bit at %d opened", i)
	}
	_, err = Open(dek, "acme", h, blob[:10])
	require.ErrorIs(t, err, ErrKey)

	// A header rewritten in the clear to name another job fails too.
	swapped := bytes.Replace(v, []byte(":job_A:"), []byte(":job_B:"), 1)
	_, err = OpenAll(swapped, func(h Header, b []byte) ([]byte, error) { return Open(dek, "acme", h, b) })
	require.ErrorIs(t, err, ErrKey)

	for _, bad := range []string{`"` + Prefix + `"`, `"` + Prefix + `x:payload:job:AAAA"`, `"` + Prefix + `1:payload:job:!!"`} {
		_, _, err := Parse([]byte(bad))
		require.Error(t, err, bad)
	}
}

func TestOpenAllOpensNestedValues(t *testing.T) {
	t.Parallel()
	dek := NewKey()
	opener := func(h Header, b []byte) ([]byte, error) { return Open(dek, "acme", h, b) }
	step := Seal(dek, "acme", Header{Gen: 1, Field: "payload", Ctx: "chain_1"}, []byte(`{"n":12345678901234567890}`))
	res := Seal(dek, "acme", Header{Gen: 1, Field: "result", Ctx: "job_1"}, []byte(`[1,"two"]`))
	wrapper := []byte(`{"previous_result":` + string(res) + `,"payload":` + string(step) + `}`)
	out, err := OpenAll(wrapper, opener)
	require.NoError(t, err)
	require.JSONEq(t, `{"previous_result":[1,"two"],"payload":{"n":12345678901234567890}}`, string(out))
	require.Contains(t, string(out), "12345678901234567890", "numbers keep their digits")

	plain := []byte(`{"a":"b"}`)
	out, err = OpenAll(plain, opener)
	require.NoError(t, err)
	require.Equal(t, plain, out)

	_, err = OpenAll(step, func(Header, []byte) ([]byte, error) { return nil, errors.New("revoked") })
	require.EqualError(t, err, "revoked")
}

func TestWrappedKeysAreBoundToTheirLabel(t *testing.T) {
	t.Parallel()
	kek, dek := NewKey(), NewKey()
	w := Wrap(kek, dek, "ns/acme/data")
	require.False(t, bytes.Contains(w, dek[:]))
	got, err := Unwrap(kek, w, "ns/acme/data")
	require.NoError(t, err)
	require.Equal(t, dek, got)
	_, err = Unwrap(kek, w, "ns/other/data")
	require.ErrorIs(t, err, ErrKey)
	_, err = Unwrap(NewKey(), w, "ns/acme/data")
	require.ErrorIs(t, err, ErrKey)
	require.NotEqual(t, kek.ID(), dek.ID())
	require.Len(t, kek.ID(), 16)
}

func TestParseKeyAndKeyFile(t *testing.T) {
	t.Parallel()
	k := NewKey()
	for _, s := range []string{b64(k[:]), strings.TrimRight(b64(k[:]), "="), hexOf(k[:]), " " + b64(k[:]) + "\n"} {
		got, err := ParseKey(s)
		require.NoError(t, err, s)
		require.Equal(t, k, got)
	}
	for _, bad := range []string{"", "short", b64(k[:16]), b64(make([]byte, KeySize))} {
		_, err := ParseKey(bad)
		require.Error(t, err, bad)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "master.key")
	require.NoError(t, os.WriteFile(p, []byte(b64(k[:])+"\n"), 0o600))
	got, err := LoadKeyFile(p)
	require.NoError(t, err)
	require.Equal(t, k, got)
	require.NoError(t, os.Chmod(p, 0o644))
	_, err = LoadKeyFile(p)
	require.ErrorContains(t, err, "readable by others")
	_, err = LoadKeyFile(filepath.Join(dir, "missing"))
	require.Error(t, err)
}
