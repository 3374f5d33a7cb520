package backup

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"slices"

	"github.com/klauspost/compress/zstd"
)

// ErrUnsupportedVersion is returned for a stream of a format version this
// build does not read.
var ErrUnsupportedVersion = errors.New("backup: unsupported format version")

// readChunk bounds each allocation made on the word of a length field: a
// longer item grows only as its bytes actually arrive.
const readChunk = 64 << 10

// Reader reads one backup stream, verifying it as it goes. Next returns
// io.EOF only once the trailer has been read and the checksum, counts and
// header fields all agree; anything else is an error wrapping ErrCorrupt.
type Reader struct {
	dec      *zstd.Decoder
	br       *bufio.Reader
	h        hash.Hash
	n        uint64 // bytes consumed (and hashed, while hashing)
	hashing  bool
	header   Header
	counts   map[byte]uint64
	total    uint64
	manifest *Manifest
	err      error // sticky; io.EOF once verified
	one      [1]byte
}

// NewReader reads and checks the stream's header from the compressed
// stream r. Close releases the decompressor.
func NewReader(r io.Reader) (*Reader, error) {
	dec, err := zstd.NewReader(r,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(decoderMaxWindow),
		zstd.WithDecoderMaxMemory(decoderMaxWindow))
	if err != nil {
		return nil, fmt.Errorf("backup: zstd: %w", err)
	}
	rd, err := newRawReader(dec)
	if err != nil {
		dec.Close()
		return nil, err
	}
	rd.dec = dec
	return rd, nil
}

// newRawReader reads the uncompressed stream.
func newRawReader(r io.Reader) (*Reader, error) {
	rd := &Reader{br: bufio.NewReaderSize(r, 256<<10), h: sha256.New(), hashing: true}
	var fixed [len(Magic) + 6]byte
	if err := rd.read(fixed[:]); err != nil {
		return nil, rd.fail(err, "header")
	}
	if string(fixed[:len(Magic)]) != Magic {
		return nil, corrupt("not a backup stream (bad magic)")
	}
	if v := binary.BigEndian.Uint16(fixed[len(Magic):]); v != FormatVersion {
		return nil, fmt.Errorf("%w %d (this build reads %d)", ErrUnsupportedVersion, v, FormatVersion)
	}
	hl := binary.BigEndian.Uint32(fixed[len(Magic)+2:])
	if hl > MaxHeaderLen {
		return nil, corrupt("header length %d over %d", hl, MaxHeaderLen)
	}
	hj, err := rd.readN(int(hl))
	if err != nil {
		return nil, rd.fail(err, "header")
	}
	if err := json.Unmarshal(hj, &rd.header); err != nil {
		return nil, corrupt("header: %v", err)
	}
	if err := rd.header.validate(); err != nil {
		return nil, corrupt("header: %v", err)
	}
	rd.counts = make(map[byte]uint64, len(rd.header.Kinds))
	return rd, nil
}

// Header is the stream's header, as read by NewReader.
func (r *Reader) Header() Header { return r.header }

// Next returns the next record. Its Key and Value are freshly allocated and
// the caller's to keep. After the last record it verifies the trailer and
// returns io.EOF; a stream that fails verification returns an error
// wrapping ErrCorrupt instead, even if every record before it was returned.
func (r *Reader) Next() (Record, error) {
	if r.err != nil {
		return Record{}, r.err
	}
	rec, err := r.next()
	if err != nil {
		r.err = err
	}
	return rec, err
}

// maxFrameHead is the longest record frame head: tag, kind, two uvarints.
const maxFrameHead = 2 + 2*binary.MaxVarintLen64

func (r *Reader) next() (Record, error) {
	// Parse the frame head in place: the checksum ends before the
	// trailer's tag, and one hash call per part keeps reading fast.
	head, err := r.br.Peek(maxFrameHead)
	if len(head) == 0 {
		return Record{}, r.fail(err, "record %d", r.total)
	}
	switch head[0] {
	case tagRecord:
	case tagTrailer:
		return Record{}, r.trailer()
	default:
		return Record{}, corrupt("record %d: unknown frame tag 0x%02x", r.total, head[0])
	}
	if len(head) < 2 {
		return Record{}, r.fail(err, "record %d", r.total)
	}
	kind := head[1]
	if _, ok := r.header.Kinds[kind]; !ok {
		return Record{}, corrupt("record %d: kind 0x%02x not declared in the header", r.total, kind)
	}
	kl, n1 := binary.Uvarint(head[2:])
	var vl uint64
	var n2 int
	if n1 > 0 {
		vl, n2 = binary.Uvarint(head[2+n1:])
	}
	switch {
	case n1 < 0 || n2 < 0:
		return Record{}, corrupt("record %d: length overflows", r.total)
	case n1 == 0 || n2 == 0:
		return Record{}, r.fail(err, "record %d lengths", r.total) // the stream ended inside them
	case kl > MaxKeyLen || vl > MaxValueLen:
		return Record{}, corrupt("record %d: key length %d or value length %d over the limit", r.total, kl, vl)
	}
	if kind == KindDelete && vl > 0 {
		return Record{}, corrupt("record %d: a delete record with a value", r.total)
	}
	n := 2 + n1 + n2
	r.consumed(head[:n])
	r.br.Discard(n)
	b, err := r.readN(int(kl + vl))
	if err != nil {
		return Record{}, r.fail(err, "record %d", r.total)
	}
	r.counts[kind]++
	r.total++
	return Record{Kind: kind, Key: b[:kl:kl], Value: b[kl:]}, nil
}

// trailer reads and checks the manifest, then requires the end of the
// stream. It returns io.EOF when all is well.
func (r *Reader) trailer() error {
	sum := hex.EncodeToString(r.h.Sum(nil))
	hashed := r.n
	r.hashing = false
	r.readByte() // the tag, peeked by next; not hashed
	var fixed [4]byte
	if err := r.read(fixed[:]); err != nil {
		return r.fail(err, "trailer")
	}
	tl := binary.BigEndian.Uint32(fixed[:])
	if tl > MaxTrailerLen {
		return corrupt("trailer length %d over %d", tl, MaxTrailerLen)
	}
	mj, err := r.readN(int(tl))
	if err != nil {
		return r.fail(err, "trailer")
	}
	if err := r.read(fixed[:]); err != nil {
		return r.fail(err, "trailer checksum")
	}
	if binary.BigEndian.Uint32(fixed[:]) != crc32.Checksum(mj, castagnoli) {
		return corrupt("trailer checksum mismatch")
	}
	if _, err := r.br.ReadByte(); err == nil {
		return corrupt("data after the trailer")
	} else if err != io.EOF {
		return r.fail(err, "end of stream")
	}
	var m Manifest
	if err := json.Unmarshal(mj, &m); err != nil {
		return corrupt("trailer: %v", err)
	}
	if err := r.verify(m, sum, hashed); err != nil {
		return err
	}
	r.manifest = &m
	return io.EOF
}

func (r *Reader) verify(m Manifest, sum string, hashed uint64) error {
	h := r.header
	switch {
	case m.FormatVersion != FormatVersion:
		return corrupt("trailer format version %d, header %d", m.FormatVersion, FormatVersion)
	case m.SHA256 != sum:
		return corrupt("checksum mismatch: trailer says %s, stream is %s", m.SHA256, sum)
	case m.Bytes != hashed:
		return corrupt("size mismatch: trailer says %d bytes, stream has %d", m.Bytes, hashed)
	case m.Records != r.total:
		return corrupt("trailer says %d records, stream has %d", m.Records, r.total)
	case m.Tenant != h.Tenant || m.Namespace != h.Namespace || m.ShardID != h.ShardID ||
		m.RaftIndex != h.RaftIndex || !m.CreatedAt.Equal(h.CreatedAt) || m.Delta != h.Delta:
		return corrupt("trailer and header disagree on the snapshot")
	case len(m.Counts) != len(h.Kinds):
		return corrupt("trailer counts %d kinds, header declares %d", len(m.Counts), len(h.Kinds))
	}
	for code, name := range h.Kinds {
		if got, ok := m.Counts[name]; !ok || got != r.counts[code] {
			return corrupt("trailer counts %d %q records, stream has %d", got, name, r.counts[code])
		}
	}
	return nil
}

// Manifest is the verified trailer, once Next has returned io.EOF.
func (r *Reader) Manifest() (Manifest, error) {
	if r.manifest == nil {
		if r.err != nil && r.err != io.EOF {
			return Manifest{}, r.err
		}
		return Manifest{}, errors.New("backup: manifest read before the end of the stream")
	}
	return *r.manifest, nil
}

// Close releases the decompressor. It does not close the underlying reader.
func (r *Reader) Close() error {
	if r.dec != nil {
		r.dec.Close()
	}
	return nil
}

// fail turns a read error into a corruption error naming where it happened.
func (r *Reader) fail(err error, where string, args ...any) error {
	at := fmt.Sprintf(where, args...)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return corrupt("truncated in %s (after %d bytes)", at, r.n)
	}
	if errors.Is(err, ErrCorrupt) {
		return err
	}
	return corrupt("%s: %v", at, err)
}

func (r *Reader) read(p []byte) error {
	if _, err := io.ReadFull(r.br, p); err != nil {
		return err
	}
	r.consumed(p)
	return nil
}

func (r *Reader) readByte() (byte, error) {
	b, err := r.br.ReadByte()
	if err != nil {
		return 0, err
	}
	r.one[0] = b
	r.consumed(r.one[:])
	return b, nil
}

func (r *Reader) consumed(p []byte) {
	if r.hashing {
		r.h.Write(p)
	}
	r.n += uint64(len(p))
}

// readN reads n bytes, allocating them as they arrive rather than all up
// front, so a forged length costs no more memory than the data behind it.
func (r *Reader) readN(n int) ([]byte, error) {
	if n <= readChunk {
		b := make([]byte, n)
		return b, r.read(b)
	}
	b := make([]byte, 0, readChunk)
	for len(b) < n {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(cap(b), n-len(b)))
		}
		end := min(cap(b), n)
		if err := r.read(b[len(b):end]); err != nil {
			return nil, err
		}
		b = b[:end]
	}
	return b, nil
}
