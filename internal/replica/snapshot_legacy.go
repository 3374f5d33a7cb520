package replica

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble"
)

// restoreLegacy reads the first snapshot format, which this version no
// longer writes but still reads (a data directory from before checkpoints
// may hold one): (uvarint len, key, uvarint len, value)* over every key.
func (f *fsm) restoreLegacy(r *bufio.Reader) error {
	if err := f.db.DeleteRange([]byte{}, allKeysEnd, pebble.NoSync); err != nil {
		return fmt.Errorf("replica: clear before restore: %w", err)
	}
	b := f.db.NewBatch()
	for {
		k, err := readChunk(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("replica: restore key: %w", err)
		}
		v, err := readChunk(r)
		if err != nil {
			return fmt.Errorf("replica: restore value: %w", err)
		}
		if err := b.Set(k, v, nil); err != nil {
			return err
		}
		if b.Len() > 4<<20 {
			if err := b.Commit(pebble.NoSync); err != nil {
				return err
			}
			b = f.db.NewBatch()
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return err
	}
	return f.db.Flush() // durable before Raft counts the snapshot installed
}

func readChunk(r *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if n > 1<<30 {
		return nil, fmt.Errorf("chunk of %d bytes", n)
	}
	b := make([]byte, n)
	_, err = io.ReadFull(r, b)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return b, err
}
