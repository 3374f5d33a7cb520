package client

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
)

// frameOf is a frame of one job with the given fields.
func frameOf(job []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, fieldResJobs, protowire.BytesType), job)
}

func bytesField(b []byte, num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}

// readBoth reads a frame with the generated code and the stream's codec:
// both refuse it, or both read the same jobs.
func readBoth(t *testing.T, frame []byte) (*Job, error) {
	t.Helper()
	var want jobbiev1.WorkResponse
	wantErr := proto.Unmarshal(frame, &want)
	var got streamFrame
	err := streamCodec{}.Unmarshal(frame, &got)
	if wantErr != nil {
		require.Error(t, err, "the generated code refuses it: %v", wantErr)
		return nil, err
	}
	require.NoError(t, err)
	require.Len(t, got.jobs, 1)
	require.Equal(t, jobOfGenerated(want.Jobs[0]), got.jobs[0])
	return got.jobs[0], nil
}

// A tag's value sent twice in its entry is the last one, not the two
// joined (only a message sent twice is merged).
func TestDecodeJobTagValueSentTwice(t *testing.T) {
	e := bytesField(nil, 1, []byte("team"))
	e = bytesField(e, 2, []byte("a"))
	e = bytesField(e, 2, []byte("b"))
	job, err := readBoth(t, frameOf(bytesField(nil, fieldJobTags, e)))
	require.NoError(t, err)
	require.Equal(t, map[string]string{"team": "b"}, job.Tags)
}

// What the generated code refuses is refused, not read as a job: a
// string that is not UTF-8 (an id, a tag, a payload's part sent and then
// replaced, a key given twice), a payload sent in parts that are each
// cut but whole when joined (proto reads each part on its own), a field
// number above the largest, and a payload nested deeper than proto reads it.
func TestDecodeJobRefusesWhatProtoRefuses(t *testing.T) {
	str := func(s string) []byte { return bytesField(nil, fieldValueString, []byte(s)) }
	number := protowire.AppendFixed64(protowire.AppendTag(nil, fieldValueNumber, protowire.Fixed64Type), 0)
	entry := func(k string, v []byte) []byte { return bytesField(bytesField(nil, 1, []byte(k)), 2, v) }
	for name, job := range map[string][]byte{
		"id":                                 bytesField(nil, fieldJobID, []byte("a\xffb")),
		"tag key":                            bytesField(nil, fieldJobTags, entry("\xff", nil)),
		"tag value":                          bytesField(nil, fieldJobTags, bytesField(bytesField(nil, 1, []byte("k")), 2, []byte("\xff"))),
		"payload string":                     bytesField(nil, fieldJobPayload, str("\xff")),
		"string then number":                 bytesField(nil, fieldJobPayload, append(str("\xff"), number...)),
		"key given twice":                    bytesField(nil, fieldJobPayload, bytesField(nil, fieldValueStruct, append(bytesField(nil, 1, entry("k", str("\xff"))), bytesField(nil, 1, entry("k", number))...))),
		"cut struct then other":              bytesField(nil, fieldJobPayload, append(bytesField(nil, fieldValueStruct, []byte{0x0a, 0x05}), number...)),
		"a group over two parts":             bytesField(bytesField(nil, fieldJobPayload, append(str("x"), 0x43)), fieldJobPayload, []byte{0x44}),
		"a field number too large":           protowire.AppendVarint(protowire.AppendTag(nil, protowire.MaxValidNumber+1, protowire.VarintType), 0),
		"a payload's field number too large": bytesField(nil, fieldJobPayload, protowire.AppendVarint(protowire.AppendTag(nil, protowire.MaxValidNumber+1, protowire.VarintType), 0)),
		"checkpoint key":                     bytesField(nil, fieldJobCheckpoint, bytesField(nil, fieldValueStruct, bytesField(nil, 1, entry("\xff", number)))),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := readBoth(t, frameOf(job))
			require.Error(t, err)
		})
	}

	// Nesting: as deep as the generated code reads a job's payload, and
	// one level deeper, in lists and in structs.
	const depth = protowire.DefaultRecursionLimit - 2 // the frame, the job
	for _, list := range []bool{true, false} {
		levels := depth / 3 // Value, Struct, entry
		if list {
			levels = depth / 2 // Value, ListValue
		}
		for _, extra := range []int{-1, 0, 1} {
			v := structpb.NewBoolValue(true)
			for range levels + extra {
				if list {
					v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{v}})
				} else {
					v = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"k": v}})
				}
			}
			b, err := proto.MarshalOptions{}.Marshal(v)
			require.NoError(t, err)
			_, err = readBoth(t, frameOf(bytesField(nil, fieldJobPayload, b)))
			if extra < 0 {
				require.NoError(t, err, "list %v, %d levels", list, levels+extra)
			} else if extra > 0 {
				require.Error(t, err, "list %v, %d levels", list, levels+extra)
			}
		}
	}
}
