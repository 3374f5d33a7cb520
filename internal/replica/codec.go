package replica

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// Commands are MessagePack: compact, binary, and tolerant of added fields,
// which keeps the append-only log readable by newer nodes. Struct fields
// take their names from `codec` tags, else `json` tags. State machines use
// the same encoding for their stored records. Encoders and decoders are
// pooled because building one costs more than encoding a small command.
var mh = func() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.WriteExt = true
	return h
}()

var (
	encPool = sync.Pool{New: func() any { return codec.NewEncoderBytes(nil, mh) }}
	decPool = sync.Pool{New: func() any { return codec.NewDecoderBytes(nil, mh) }}
)

// Encode encodes v. Values the state machine built itself always encode,
// so a failure is a programming error and panics.
func Encode(v any) []byte {
	// Most commands and records are a few hundred bytes; left nil, the
	// encoder would start every one with 1 KiB.
	b := make([]byte, 0, 256)
	enc := encPool.Get().(*codec.Encoder)
	enc.ResetBytes(&b)
	err := enc.Encode(v)
	encPool.Put(enc)
	if err != nil {
		panic(fmt.Sprintf("replica: encode %T: %v", v, err))
	}
	return b
}

// Decode decodes b into v.
func Decode(b []byte, v any) error {
	dec := decPool.Get().(*codec.Decoder)
	dec.ResetBytes(b)
	err := dec.Decode(v)
	dec.ResetBytes(nil)
	decPool.Put(dec)
	return err
}

// decodeCommand decodes a command's payload. A payload that is a JSON
// object is decoded as JSON: the control plane's log held JSON commands
// before it used this encoding, and no command encodes to a MessagePack
// value starting with '{' (commands are maps, 0x80-0x8f or 0xde-0xdf).
func decodeCommand(b []byte, v any) error {
	if len(b) > 0 && b[0] == '{' {
		return json.Unmarshal(b, v)
	}
	return Decode(b, v)
}
