package wire

import "encoding/json"

// FetchedLeases reads the leases a fetch answer (one job, or fetch/batch's
// list) handed to the worker its request names: what a gateway or a shard
// gives back with POST /api/v1/release when that worker went away before
// the answer reached it.
func FetchedLeases(batch bool, request, answer []byte) (*ReleaseRequest, bool) {
	var r FetchRequest
	if json.Unmarshal(request, &r) != nil {
		return nil, false
	}
	var jobs []FetchedJob
	if batch {
		var b FetchBatchResponse
		if json.Unmarshal(answer, &b) != nil {
			return nil, false
		}
		jobs = b.Jobs
	} else {
		var j FetchedJob
		if json.Unmarshal(answer, &j) != nil || j.JobID == "" {
			return nil, false
		}
		jobs = []FetchedJob{j}
	}
	if len(jobs) == 0 {
		return nil, false
	}
	rel := &ReleaseRequest{WorkerID: r.WorkerID, Jobs: make([]ReleaseEntry, len(jobs))}
	for i, j := range jobs {
		rel.Jobs[i] = ReleaseEntry{JobID: j.JobID, Attempt: j.Attempt, LeaseToken: j.LeaseToken}
	}
	return rel, true
}
