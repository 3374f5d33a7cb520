package shard

import (
	"fmt"
	"sync"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// Commands and queue records are MessagePack: compact, binary, and
// tolerant of added fields, which keeps the append-only command log
// readable by newer nodes. Encoders and decoders are pooled because
// building one costs more than encoding a small command.
var mh = func() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.WriteExt = true
	return h
}()

var (
	encPool = sync.Pool{New: func() any { return codec.NewEncoderBytes(nil, mh) }}
	decPool = sync.Pool{New: func() any { return codec.NewDecoderBytes(nil, mh) }}
)

func encode(v any) []byte {
	var b []byte
	enc := encPool.Get().(*codec.Encoder)
	enc.ResetBytes(&b)
	err := enc.Encode(v)
	encPool.Put(enc)
	if err != nil {
		panic(fmt.Sprintf("shard: encode %T: %v", v, err))
	}
	return b
}

func decode(b []byte, v any) error {
	dec := decPool.Get().(*codec.Decoder)
	dec.ResetBytes(b)
	err := dec.Decode(v)
	dec.ResetBytes(nil)
	decPool.Put(dec)
	return err
}
