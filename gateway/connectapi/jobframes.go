package connectapi

import (
	"bytes"
	"encoding/json"
	"fmt"

	gojson "github.com/goccy/go-json"
	"google.golang.org/protobuf/types/known/structpb"

	jobbiev1 "github.com/jobbie/jobbie/proto/gen/jobbie/v1"
	"github.com/jobbie/jobbie/wire"
)

// A fetch's answer made job frames without protojson: protojson's
// reflection over the answer was the worker stream's largest cost in
// the gateway (about 12 % of its CPU). The answer is decoded into the
// wire types (goccy/go-json, as the shard encodes it) and each job's
// message filled by hand, in leasedJob, the one conversion;
// jobframes_test.go holds it to protojson's result field by field, so a
// field added to both shapes cannot be dropped here unnoticed.
//
// A worker that asked for JSON payloads (Hello.json_payloads) gets each
// job's payload and checkpoint as the shard's JSON bytes, as they are;
// any other gets them as Values (jsonValue, jsonvalue.go). A stored
// value a Value cannot hold (a number past float64's range, such as
// 1e999, which JSON allows) leaves its job out of the frame, with the
// reason (unsendable): the caller fails that job alone.

// fetched is a fetch/batch answer as the stream hands it on.
type fetched struct {
	jobs       []*jobbiev1.LeasedJob
	cancels    []*jobbiev1.Cancel
	unsendable []unsendable
}

// unsendable is a leased job that no frame of the stream can carry.
type unsendable struct {
	jobID, leaseToken string
	err               error
}

// leasedJobs are the jobs of a fetch/batch answer, with their payloads
// and checkpoints as JSON when asJSON, and its cancels.
func leasedJobs(body []byte, asJSON bool) (fetched, error) {
	var res wire.FetchBatchResponse
	if err := gojson.Unmarshal(body, &res); err != nil {
		return fetched{}, fmt.Errorf("a fetch's answer: %w", err)
	}
	out := fetched{jobs: make([]*jobbiev1.LeasedJob, 0, len(res.Jobs))}
	for i := range res.Jobs {
		j := &res.Jobs[i]
		lj, err := leasedJob(j, asJSON)
		if err != nil {
			out.unsendable = append(out.unsendable, unsendable{jobID: j.JobID, leaseToken: j.LeaseToken, err: err})
			continue
		}
		out.jobs = append(out.jobs, lj)
	}
	for _, c := range res.Cancels {
		out.cancels = append(out.cancels, &jobbiev1.Cancel{JobId: c.JobID, LeaseToken: c.LeaseToken})
	}
	return out, nil
}

// leasedJob is j as the stream sends it.
func leasedJob(j *wire.FetchedJob, asJSON bool) (*jobbiev1.LeasedJob, error) {
	lj := &jobbiev1.LeasedJob{
		JobId:         j.JobID,
		Queue:         j.Queue,
		Attempt:       int32(j.Attempt),
		MaxRetries:    int32(j.MaxRetries),
		LeaseDuration: j.LeaseDuration,
		Tags:          j.Tags,
		LeaseToken:    j.LeaseToken,
		Traceparent:   j.TraceParent,
		Tracestate:    j.TraceState,
	}
	if asJSON {
		// The decoder copied both out of the answer: nothing to copy.
		lj.PayloadJson = j.Payload
		if !bytes.Equal(j.Checkpoint, jsonNull) {
			lj.CheckpointJson = j.Checkpoint
		}
		return lj, nil
	}
	var err error
	if lj.Payload, err = valueOf(j.Payload); err != nil {
		return nil, fmt.Errorf("its payload: %w", err)
	}
	if lj.Checkpoint, err = valueOf(j.Checkpoint); err != nil {
		return nil, fmt.Errorf("its checkpoint: %w", err)
	}
	return lj, nil
}

var jsonNull = []byte("null")

// valueOf is a JSON value as a Value (JSON null a NullValue, as protojson
// reads it), nil for none.
func valueOf(raw json.RawMessage) (*structpb.Value, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	v, rest, err := jsonValue(raw, 0)
	if err != nil {
		return nil, err
	}
	if len(skipSpace(rest)) > 0 {
		return nil, fmt.Errorf("invalid JSON after a value: %q", head(skipSpace(rest)))
	}
	return v, nil
}
