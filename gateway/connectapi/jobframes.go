package connectapi

import (
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
// message filled by hand, in leasedJob, the one conversion (its payload
// and checkpoint by jsonValue, jsonvalue.go);
// jobframes_test.go holds it to protojson's result field by field, so a
// field added to both shapes cannot be dropped here unnoticed.

// leasedJobs are the jobs of a fetch/batch answer, and its cancels.
func leasedJobs(body []byte) ([]*jobbiev1.LeasedJob, []*jobbiev1.Cancel, error) {
	var res wire.FetchBatchResponse
	if err := gojson.Unmarshal(body, &res); err != nil {
		return nil, nil, fmt.Errorf("a fetch's answer: %w", err)
	}
	out := make([]*jobbiev1.LeasedJob, len(res.Jobs))
	for i := range res.Jobs {
		j, err := leasedJob(&res.Jobs[i])
		if err != nil {
			return nil, nil, err
		}
		out[i] = j
	}
	var cancels []*jobbiev1.Cancel
	for _, c := range res.Cancels {
		cancels = append(cancels, &jobbiev1.Cancel{JobId: c.JobID, LeaseToken: c.LeaseToken})
	}
	return out, cancels, nil
}

// leasedJob is j as the stream sends it.
func leasedJob(j *wire.FetchedJob) (*jobbiev1.LeasedJob, error) {
	payload, err := valueOf(j.Payload)
	if err != nil {
		return nil, fmt.Errorf("job %s: payload: %w", j.JobID, err)
	}
	checkpoint, err := valueOf(j.Checkpoint)
	if err != nil {
		return nil, fmt.Errorf("job %s: checkpoint: %w", j.JobID, err)
	}
	return &jobbiev1.LeasedJob{
		JobId:         j.JobID,
		Queue:         j.Queue,
		Payload:       payload,
		Attempt:       int32(j.Attempt),
		MaxRetries:    int32(j.MaxRetries),
		LeaseDuration: j.LeaseDuration,
		Checkpoint:    checkpoint,
		Tags:          j.Tags,
		LeaseToken:    j.LeaseToken,
		Traceparent:   j.TraceParent,
		Tracestate:    j.TraceState,
	}, nil
}

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
