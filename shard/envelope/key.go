package envelope

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// KeySize is the size of every key: AES-256.
const KeySize = 32

// Key is an AES-256 key.
type Key [KeySize]byte

// ErrKey is what opening with the wrong key, or a tampered or swapped
// blob, returns: GCM cannot tell those apart, and neither should callers.
var ErrKey = errors.New("envelope: the key does not open this value (wrong key, or the value was altered or moved)")

// NewKey returns a fresh random key.
func NewKey() Key {
	var k Key
	if _, err := rand.Read(k[:]); err != nil {
		panic(fmt.Sprintf("envelope: no randomness: %v", err)) // crypto/rand never fails on supported systems
	}
	return k
}

// ID names k without revealing it: the first 8 bytes of its SHA-256, in
// hex, under a label so the digest is of no use elsewhere.
func (k Key) ID() string {
	h := sha256.Sum256(append([]byte("jobbie key id\x00"), k[:]...))
	return hex.EncodeToString(h[:8])
}

// ParseKey reads a key written as base64 (standard or URL alphabet, with
// or without padding) or hex; what names it goes in errors.
func ParseKey(s string) (Key, error) {
	s = strings.TrimSpace(s)
	var k Key
	var raw []byte
	var err error
	switch {
	case len(s) == 2*KeySize:
		raw, err = hex.DecodeString(s)
	default:
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if raw, err = enc.DecodeString(s); err == nil {
				break
			}
		}
	}
	if err != nil || len(raw) != KeySize {
		return k, fmt.Errorf("a key is %d random bytes in base64 or hex", KeySize)
	}
	copy(k[:], raw)
	if k == (Key{}) {
		return k, errors.New("a key of zero bytes is not a key")
	}
	return k, nil
}

// LoadKeyFile reads a master key file: one key (ParseKey) and nothing
// else. The file must not be readable by group or others.
func LoadKeyFile(path string) (Key, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Key{}, fmt.Errorf("envelope: master key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return Key{}, fmt.Errorf("envelope: master key %s is readable by others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Key{}, fmt.Errorf("envelope: master key: %w", err)
	}
	k, err := ParseKey(string(b))
	if err != nil {
		return Key{}, fmt.Errorf("envelope: master key %s: %w", path, err)
	}
	return k, nil
}

// Wrap seals key under kek, bound to label (what the wrapped key is for,
// e.g. "ns/acme/data"), so a wrapped key cannot be used in another place.
func Wrap(kek, key Key, label string) []byte {
	return seal(kek, key[:], []byte("jobbie wrap\x00"+label))
}

// Unwrap opens what Wrap sealed under kek for label.
func Unwrap(kek Key, wrapped []byte, label string) (Key, error) {
	var k Key
	b, err := open(kek, wrapped, []byte("jobbie wrap\x00"+label))
	if err != nil {
		return k, err
	}
	if len(b) != KeySize {
		return k, ErrKey
	}
	copy(k[:], b)
	return k, nil
}

// seal is nonce || AES-256-GCM(plain, aad). A random 96-bit nonce per
// call: a data key seals far fewer than the 2^32 values GCM allows.
func seal(k Key, plain, aad []byte) []byte { return sealWith(gcm(k), plain, aad) }

func sealWith(g cipher.AEAD, plain, aad []byte) []byte {
	out := make([]byte, g.NonceSize(), g.NonceSize()+len(plain)+g.Overhead())
	if _, err := rand.Read(out); err != nil {
		panic(fmt.Sprintf("envelope: no randomness: %v", err))
	}
	return g.Seal(out, out, plain, aad)
}

func open(k Key, blob, aad []byte) ([]byte, error) { return openWith(gcm(k), blob, aad) }

func openWith(g cipher.AEAD, blob, aad []byte) ([]byte, error) {
	if len(blob) < g.NonceSize()+g.Overhead() {
		return nil, ErrKey
	}
	b, err := g.Open(nil, blob[:g.NonceSize()], blob[g.NonceSize():], aad)
	if err != nil {
		return nil, ErrKey
	}
	return b, nil
}

func gcm(k Key) cipher.AEAD {
	b, err := aes.NewCipher(k[:])
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	g, err := cipher.NewGCM(b)
	if err != nil {
		panic(err)
	}
	return g
}
