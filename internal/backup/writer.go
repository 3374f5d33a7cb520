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
	"maps"

	"github.com/klauspost/compress/zstd"
)

// encoderWindow is the zstd window the writer uses; decoderMaxWindow bounds
// what a reader accepts, so a forged frame cannot ask for a huge history.
const (
	encoderWindow    = 8 << 20
	decoderMaxWindow = 16 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Writer writes one backup stream. It is not safe for concurrent use.
type Writer struct {
	enc    *zstd.Encoder
	hw     *hashingWriter
	bw     *bufio.Writer
	header Header
	counts map[byte]uint64
	total  uint64
	err    error // sticky: once failed, every call returns it
	closed bool
	frame  [1 + 1 + 2*binary.MaxVarintLen64]byte
}

// hashingWriter hashes and counts what it passes on, while hashing is on.
type hashingWriter struct {
	w       io.Writer
	h       hash.Hash
	n       uint64
	hashing bool
}

func (hw *hashingWriter) Write(p []byte) (int, error) {
	if hw.hashing {
		hw.h.Write(p)
		hw.n += uint64(len(p))
	}
	return hw.w.Write(p)
}

// NewWriter starts a backup stream on w with its header. Close must be
// called to finish it; the stream is not valid without its trailer.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	if err := h.validate(); err != nil {
		return nil, err
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("backup: encode header: %w", err)
	}
	if len(hj) > MaxHeaderLen {
		return nil, fmt.Errorf("backup: header is %d bytes, over %d", len(hj), MaxHeaderLen)
	}
	enc, err := zstd.NewWriter(w,
		zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(encoderWindow),
		zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return nil, fmt.Errorf("backup: zstd: %w", err)
	}
	hw := &hashingWriter{w: enc, h: sha256.New(), hashing: true}
	bw := bufio.NewWriterSize(hw, 256<<10)
	bw.WriteString(Magic)
	var fixed [6]byte
	binary.BigEndian.PutUint16(fixed[0:2], FormatVersion)
	binary.BigEndian.PutUint32(fixed[2:6], uint32(len(hj)))
	bw.Write(fixed[:])
	bw.Write(hj)
	h.Kinds = maps.Clone(h.Kinds)
	return &Writer{enc: enc, hw: hw, bw: bw, header: h, counts: make(map[byte]uint64, len(h.Kinds))}, nil
}

// Write appends one record. Key and Value are copied before it returns.
func (w *Writer) Write(r Record) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("backup: write after close")
	}
	if _, ok := w.header.Kinds[r.Kind]; !ok {
		return fmt.Errorf("backup: record kind %q is not declared in the header", r.Kind)
	}
	if len(r.Key) > MaxKeyLen {
		return fmt.Errorf("backup: key of %d bytes, over %d", len(r.Key), MaxKeyLen)
	}
	if len(r.Value) > MaxValueLen {
		return fmt.Errorf("backup: value of %d bytes, over %d", len(r.Value), MaxValueLen)
	}
	if r.Kind == KindDelete && len(r.Value) > 0 {
		return errors.New("backup: a delete record has no value")
	}
	f := w.frame[:0]
	f = append(f, tagRecord, r.Kind)
	f = binary.AppendUvarint(f, uint64(len(r.Key)))
	f = binary.AppendUvarint(f, uint64(len(r.Value)))
	w.bw.Write(f)
	w.bw.Write(r.Key)
	if _, err := w.bw.Write(r.Value); err != nil {
		w.err = fmt.Errorf("backup: write: %w", err)
		return w.err
	}
	w.counts[r.Kind]++
	w.total++
	return nil
}

// Close writes the trailer (the manifest, with labels, the caller's own
// fields) and flushes the compressed stream. It does not close the
// underlying writer. The returned manifest is the one in the trailer.
func (w *Writer) Close(labels map[string]string) (Manifest, error) {
	if w.err != nil {
		w.enc.Close()
		return Manifest{}, w.err
	}
	if w.closed {
		return Manifest{}, errors.New("backup: close twice")
	}
	w.closed = true
	if err := w.bw.Flush(); err != nil {
		w.enc.Close()
		w.err = fmt.Errorf("backup: write: %w", err)
		return Manifest{}, w.err
	}
	w.hw.hashing = false
	m := Manifest{
		FormatVersion: FormatVersion,
		Tenant:        w.header.Tenant,
		Namespace:     w.header.Namespace,
		ShardID:       w.header.ShardID,
		RaftIndex:     w.header.RaftIndex,
		CreatedAt:     w.header.CreatedAt,
		Delta:         w.header.Delta,
		Counts:        make(map[string]uint64, len(w.header.Kinds)),
		Records:       w.total,
		Bytes:         w.hw.n,
		SHA256:        hex.EncodeToString(w.hw.h.Sum(nil)),
		Labels:        maps.Clone(labels),
	}
	for code, name := range w.header.Kinds {
		m.Counts[name] = w.counts[code]
	}
	mj, err := json.Marshal(m)
	if err != nil {
		w.enc.Close()
		return Manifest{}, fmt.Errorf("backup: encode manifest: %w", err)
	}
	if len(mj) > MaxTrailerLen {
		w.enc.Close()
		return Manifest{}, fmt.Errorf("backup: manifest is %d bytes, over %d", len(mj), MaxTrailerLen)
	}
	var fixed [5]byte
	fixed[0] = tagTrailer
	binary.BigEndian.PutUint32(fixed[1:], uint32(len(mj)))
	w.bw.Write(fixed[:])
	w.bw.Write(mj)
	w.bw.Write(binary.BigEndian.AppendUint32(nil, crc32.Checksum(mj, castagnoli)))
	if err := w.bw.Flush(); err != nil {
		w.enc.Close()
		w.err = fmt.Errorf("backup: write: %w", err)
		return Manifest{}, w.err
	}
	if err := w.enc.Close(); err != nil {
		w.err = fmt.Errorf("backup: write: %w", err)
		return Manifest{}, w.err
	}
	return m, nil
}
