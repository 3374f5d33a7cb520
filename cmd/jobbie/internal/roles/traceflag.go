package roles

import "github.com/spf13/pflag"

// traceShareFlag is --trace-share-system, of every role that emits spans
// (the gateway, the shard, dev). Spans are exported at all only when the
// OTEL_* variables name an OTLP endpoint (internal/tracing).
func traceShareFlag(f *pflag.FlagSet, v *bool) {
	f.BoolVar(v, "trace-share-system", false, "put Jobbie's own spans (a gateway's hop, a shard's handling of a request) in the tenant's trace, and send a shard's to the namespace's OTLP endpoint too; traces are exported when OTEL_EXPORTER_OTLP_ENDPOINT is set")
}

// traceShareArgs is the flag again, for a process a dev cluster starts.
func traceShareArgs(share bool) []string {
	if share {
		return []string{"--trace-share-system"}
	}
	return nil
}
