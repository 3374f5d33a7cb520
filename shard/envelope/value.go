package envelope

import (
	"bytes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Prefix starts every sealed value's JSON string. A value is sealed as a
// whole into one JSON string, so the engine, which copies values into
// others (a chain's next payload holds its step's), keeps handling JSON.
const Prefix = "$jobbie:enc:v1:"

// Header is what a sealed value says of itself, in the clear: the
// generation of the namespace's data key that sealed it, the field it is
// (payload, result, checkpoint, …) and the record it was sealed for (a
// job's id, or the chain, batch or schedule whose jobs carry it). All
// three are bound into the ciphertext, with the key space (the name the
// namespace's keys were made under): a value copied to another namespace,
// field or record, or with its header altered, does not open.
type Header struct {
	Gen   uint32
	Field string
	Ctx   string
}

func (h Header) aad(space string) []byte {
	return []byte("jobbie value\x00" + space + "\x00" + h.Field + "\x00" + h.Ctx + "\x00" + strconv.FormatUint(uint64(h.Gen), 10))
}

// Cipher is a data key made ready to seal and open many values (its AES
// key schedule and GCM tables built once); safe for concurrent use.
type Cipher struct{ g cipher.AEAD }

// NewCipher returns dek's Cipher.
func NewCipher(dek Key) *Cipher { return &Cipher{g: gcm(dek)} }

// Seal returns plain (one JSON value) sealed under dek for the key space
// and h, as a JSON string.
func Seal(dek Key, space string, h Header, plain []byte) []byte {
	return NewCipher(dek).Seal(space, h, plain)
}

// Seal is Seal with c's key.
func (c *Cipher) Seal(space string, h Header, plain []byte) []byte {
	if strings.Contains(h.Field, ":") || strings.Contains(h.Ctx, ":") {
		panic(fmt.Sprintf("envelope: field %q or record %q holds a colon", h.Field, h.Ctx))
	}
	blob := sealWith(c.g, plain, h.aad(space))
	out := make([]byte, 0, len(Prefix)+len(h.Field)+len(h.Ctx)+16+base64.RawURLEncoding.EncodedLen(len(blob)))
	out = append(out, '"')
	out = append(out, Prefix...)
	out = strconv.AppendUint(out, uint64(h.Gen), 10)
	out = append(out, ':')
	out = append(out, h.Field...)
	out = append(out, ':')
	out = append(out, h.Ctx...)
	out = append(out, ':')
	out = base64.RawURLEncoding.AppendEncode(out, blob)
	return append(out, '"')
}

// Mentions reports whether v may hold a sealed value anywhere inside it:
// the cheap test before Parse or OpenAll.
func Mentions(v []byte) bool { return bytes.Contains(v, []byte(Prefix)) }

// IsSealed reports whether v, one JSON value, is a sealed value.
func IsSealed(v []byte) bool {
	return len(v) > len(Prefix)+2 && v[0] == '"' && bytes.HasPrefix(v[1:], []byte(Prefix))
}

var errMalformed = errors.New("envelope: a sealed value is malformed")

// Parse splits a sealed value (IsSealed) into its header and ciphertext.
func Parse(v []byte) (Header, []byte, error) {
	if !IsSealed(v) || v[len(v)-1] != '"' {
		return Header{}, nil, errMalformed
	}
	return parseString(string(v[1+len(Prefix) : len(v)-1]))
}

func parseString(rest string) (Header, []byte, error) {
	parts := strings.SplitN(rest, ":", 4)
	if len(parts) != 4 {
		return Header{}, nil, errMalformed
	}
	gen, err := strconv.ParseUint(parts[0], 10, 32)
	if err != nil {
		return Header{}, nil, errMalformed
	}
	blob, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil {
		return Header{}, nil, errMalformed
	}
	return Header{Gen: uint32(gen), Field: parts[1], Ctx: parts[2]}, blob, nil
}

// Open returns the plain JSON value of a sealed value's ciphertext, when
// dek, space and h are those it was sealed with.
func Open(dek Key, space string, h Header, blob []byte) ([]byte, error) {
	return NewCipher(dek).Open(space, h, blob)
}

// Open is Open with c's key.
func (c *Cipher) Open(space string, h Header, blob []byte) ([]byte, error) {
	return openWith(c.g, blob, h.aad(space))
}

// Opener opens one sealed value found inside another (OpenAll): it picks
// the key by the header and checks the header is one it expects there.
type Opener func(h Header, blob []byte) ([]byte, error)

// OpenAll returns v with every sealed value inside it opened: v itself
// when it is one, or the strings of its arrays and objects (the engine
// wraps sealed values in objects of its own, as a chain's next payload
// holds its step's payload and the previous step's result). v without
// one is returned as it is.
func OpenAll(v []byte, open Opener) ([]byte, error) {
	if !Mentions(v) {
		return v, nil
	}
	if IsSealed(v) {
		h, blob, err := Parse(v)
		if err != nil {
			return nil, err
		}
		return open(h, blob)
	}
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var tree any
	if err := d.Decode(&tree); err != nil {
		return nil, errMalformed
	}
	tree, err := openTree(tree, open)
	if err != nil {
		return nil, err
	}
	return json.Marshal(tree)
}

func openTree(t any, open Opener) (any, error) {
	switch x := t.(type) {
	case string:
		if !strings.HasPrefix(x, Prefix) {
			return x, nil
		}
		h, blob, err := parseString(x[len(Prefix):])
		if err != nil {
			return nil, err
		}
		p, err := open(h, blob)
		if err != nil {
			return nil, err
		}
		return json.RawMessage(p), nil
	case []any:
		for i := range x {
			v, err := openTree(x[i], open)
			if err != nil {
				return nil, err
			}
			x[i] = v
		}
	case map[string]any:
		for k, e := range x {
			v, err := openTree(e, open)
			if err != nil {
				return nil, err
			}
			x[k] = v
		}
	}
	return t, nil
}
