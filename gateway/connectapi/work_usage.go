package connectapi

import (
	"bytes"
	"encoding/json"
	"errors"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/jobbie/jobbie/wire"
)

// usageOf reads a frame's usage Value as the HTTP call's "usage" object
// and checks it, so that one frame's bad usage refuses that frame alone,
// not the whole ack or heartbeat batch the frames are sent in; nil for
// none.
func usageOf(field string, v *structpb.Value) (*wire.AIUsage, error) {
	raw := jsonOf(v)
	if raw == nil || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var u wire.AIUsage
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&u); err != nil {
		return nil, errors.New("usage must be an object of input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, model and provider: " + err.Error())
	}
	if _, err := wire.CheckAIUsage(field, &u); err != nil {
		return nil, err
	}
	return &u, nil
}

// sumUsage adds two checked reports of one job (two heartbeat frames in
// one request), exactly; the later's model and provider win.
func sumUsage(a, b *wire.AIUsage) *wire.AIUsage {
	if a == nil || b == nil {
		if a == nil {
			return b
		}
		return a
	}
	x, _ := wire.CheckAIUsage("usage", a)
	y, _ := wire.CheckAIUsage("usage", b)
	x.Input, x.Output, x.CacheRead, x.CacheWrite = x.Input+y.Input, x.Output+y.Output, x.CacheRead+y.CacheRead, x.CacheWrite+y.CacheWrite
	x.CostNanos += y.CostNanos
	if y.Model != "" {
		x.Model = y.Model
	}
	if y.Provider != "" {
		x.Provider = y.Provider
	}
	return x.View()
}
