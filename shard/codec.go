package shard

import (
	"fmt"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// Commands and job records are MessagePack: compact, binary, and tolerant
// of added fields, which keeps the append-only command log readable by
// newer nodes.
var mh = func() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.WriteExt = true
	return h
}()

func encode(v any) []byte {
	var b []byte
	if err := codec.NewEncoderBytes(&b, mh).Encode(v); err != nil {
		panic(fmt.Sprintf("shard: encode %T: %v", v, err))
	}
	return b
}

func decode(b []byte, v any) error {
	return codec.NewDecoderBytes(b, mh).Decode(v)
}
