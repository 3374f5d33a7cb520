package replica

import (
	"encoding/binary"
	"fmt"
)

// On-disk format of a Raft entry, never change: version byte 1, the leader's
// clock (unix ns, 8 bytes big-endian), the number of commands (uvarint),
// then each command as uvarint length + bytes.
const entryVersion = 1

func encodeEntry(now int64, cmds [][]byte) []byte {
	n := 1 + 8 + binary.MaxVarintLen64
	for _, c := range cmds {
		n += binary.MaxVarintLen64 + len(c)
	}
	b := make([]byte, 0, n)
	b = append(b, entryVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(now))
	b = binary.AppendUvarint(b, uint64(len(cmds)))
	for _, c := range cmds {
		b = binary.AppendUvarint(b, uint64(len(c)))
		b = append(b, c...)
	}
	return b
}

func decodeEntry(b []byte) (now int64, cmds [][]byte, err error) {
	if len(b) < 9 || b[0] != entryVersion {
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
