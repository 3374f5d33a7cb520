package replica

import (
	"encoding/binary"
	"fmt"
)

// On-disk format of a Raft entry, never change: version byte 1, the leader's
// clock (unix ns, 8 bytes big-endian), the number of commands (uvarint),
// then each command as uvarint length + bytes.
const entryCommands = 1

// On-disk format of an effects entry (effects.go), never change: version
// byte 2, the clock the leader evaluated it at (unix ns, 8 bytes
// big-endian), then as uvarints the applied index it was evaluated on, the
// Tx.Index its handlers saw, the term it was evaluated in and the number
// of commands it carries the effects of, then the evaluating node's token
// (8 bytes big-endian) and the rest: the Pebble batch's representation
// compressed with snappy.
const entryEffects = 2

// EntryFormat is the newest entry format this build applies: what a
// member advertises so that a leader knows it may propose effects entries
// (Config.EffectsReader).
const EntryFormat = entryEffects

// effectsEntry is a decoded effects entry.
type effectsEntry struct {
	now   int64
	base  uint64 // the applied index the leader evaluated it on
	index uint64 // the Tx.Index its handlers saw
	term  uint64 // the term it was evaluated in
	ncmds int
	token uint64 // which evaluation it is, on the node that made it
	repr  []byte // compressed
}

func encodeEffects(e *effectsEntry) []byte {
	b := make([]byte, 0, 1+8+4*binary.MaxVarintLen64+8+len(e.repr))
	b = append(b, entryEffects)
	b = binary.BigEndian.AppendUint64(b, uint64(e.now))
	b = binary.AppendUvarint(b, e.base)
	b = binary.AppendUvarint(b, e.index)
	b = binary.AppendUvarint(b, e.term)
	b = binary.AppendUvarint(b, uint64(e.ncmds))
	b = binary.BigEndian.AppendUint64(b, e.token)
	return append(b, e.repr...)
}

func decodeEffects(b []byte) (*effectsEntry, error) {
	if len(b) < 9 || b[0] != entryEffects {
		return nil, fmt.Errorf("replica: bad effects entry header")
	}
	e := &effectsEntry{now: int64(binary.BigEndian.Uint64(b[1:9]))}
	b = b[9:]
	var fields [4]uint64
	for i := range fields {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, fmt.Errorf("replica: bad effects entry field %d", i)
		}
		fields[i], b = v, b[n:]
	}
	if len(b) < 8 || fields[3] > 1<<32 {
		return nil, fmt.Errorf("replica: truncated effects entry")
	}
	e.base, e.index, e.term, e.ncmds = fields[0], fields[1], fields[2], int(fields[3])
	e.token, e.repr = binary.BigEndian.Uint64(b), b[8:]
	return e, nil
}

func encodeEntry(now int64, cmds [][]byte) []byte {
	n := 1 + 8 + binary.MaxVarintLen64
	for _, c := range cmds {
		n += binary.MaxVarintLen64 + len(c)
	}
	b := make([]byte, 0, n)
	b = append(b, entryCommands)
	b = binary.BigEndian.AppendUint64(b, uint64(now))
	b = binary.AppendUvarint(b, uint64(len(cmds)))
	for _, c := range cmds {
		b = binary.AppendUvarint(b, uint64(len(c)))
		b = append(b, c...)
	}
	return b
}

func decodeEntry(b []byte) (now int64, cmds [][]byte, err error) {
	if len(b) < 9 || b[0] != entryCommands {
		return 0, nil, fmt.Errorf("replica: bad entry header")
	}
	now = int64(binary.BigEndian.Uint64(b[1:9]))
	b = b[9:]
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64(len(b)) {
		return 0, nil, fmt.Errorf("replica: bad entry count")
	}
	b = b[n:]
	cmds = make([][]byte, 0, count)
	for i := uint64(0); i < count; i++ {
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return 0, nil, fmt.Errorf("replica: truncated command %d", i)
		}
		cmds = append(cmds, b[n:n+int(l)])
		b = b[n+int(l):]
	}
	if len(b) != 0 {
		return 0, nil, fmt.Errorf("replica: %d trailing bytes in entry", len(b))
	}
	return now, cmds, nil
}
