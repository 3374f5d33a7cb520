package shard

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jobbie/jobbie/shard/service"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// BenchmarkEnqueueSchema enqueues batches of 100 small payloads straight
// through a node's service (Raft and fsync included, no HTTP), to a
// queue without a schema and to one with a schema every payload
// satisfies: what checking costs an enqueue. docs/BENCHMARKS.md,
// "Payload schemas".
func BenchmarkEnqueueSchema(b *testing.B) {
	schema := json.RawMessage(`{"type":"object","required":["order_id","amount","currency"],"additionalProperties":false,
		"properties":{"order_id":{"type":"string","pattern":"^ord_[0-9a-z]+$"},"amount":{"type":"integer","minimum":0},
		"currency":{"enum":["EUR","USD","GBP"]}}}`)
	for _, typed := range []bool{false, true} {
		b.Run(fmt.Sprintf("schema=%v", typed), func(b *testing.B) {
			n := openBenchNode(b, b.TempDir(), false)
			defer n.Stop()
			e := n.Service()
			spec := &wire.QueueSpec{}
			if typed {
				spec.Schema = schema
			}
			if _, err := e.PutQueue(context.Background(), testNS, "bench", spec); err != nil {
				b.Fatal(err)
			}
			r := &wire.BatchRequest{Jobs: make([]wire.EnqueueRequest, 100)}
			for i := range r.Jobs {
				r.Jobs[i] = wire.EnqueueRequest{Queue: "bench", Payload: []byte(`{"order_id":"ord_42x","amount":1999,"currency":"EUR"}`)}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += len(r.Jobs) {
				if _, err := e.EnqueueBatch(context.Background(), testNS, tenancy.AllQueues(), service.Limits{}, r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}
