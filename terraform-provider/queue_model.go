package provider

import (
	"encoding/json"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// A queue's settings as Terraform sees them, shared by the resource and
// the data sources. Durations are Go duration strings compared by value
// ("60s" and "1m" are the same).

type throttleModel struct {
	Rate   types.Int64    `tfsdk:"rate"`
	Period durationString `tfsdk:"period"`
}

// keyConcurrencyModel caps the active jobs of each concurrency_key.
type keyConcurrencyModel struct {
	Max types.Int64 `tfsdk:"max"`
}

type queueDefaultsModel struct {
	MaxRetries     types.Int64    `tfsdk:"max_retries"`
	RetryBackoff   types.String   `tfsdk:"retry_backoff"`
	RetryBaseDelay durationString `tfsdk:"retry_base_delay"`
	RetryMaxDelay  durationString `tfsdk:"retry_max_delay"`
	LeaseDuration  durationString `tfsdk:"lease_duration"`
	ExpireAfter    durationString `tfsdk:"expire_after"`
	Retention      durationString `tfsdk:"retention"`
}

type queueCountsModel struct {
	Pending   types.Int64 `tfsdk:"pending"`
	Scheduled types.Int64 `tfsdk:"scheduled"`
	Active    types.Int64 `tfsdk:"active"`
	Retrying  types.Int64 `tfsdk:"retrying"`
	Completed types.Int64 `tfsdk:"completed"`
	Dead      types.Int64 `tfsdk:"dead"`
	Cancelled types.Int64 `tfsdk:"cancelled"`
	Held      types.Int64 `tfsdk:"held"`
}

// Bounds the API puts on a queue's settings, checked at plan time.
const (
	maxConcurrency    = 1_000_000
	maxKeyConcurrency = wire.MaxKeyConcurrency
	maxThrottleRate   = 1_000_000
	minThrottlePeriod = time.Second
	maxThrottlePeriod = 7 * 24 * time.Hour
	maxDelay          = 30 * 24 * time.Hour
	minLease          = time.Second
	maxLease          = 12 * time.Hour
	maxExpireAfter    = 10 * 365 * 24 * time.Hour
	minRetention      = time.Minute
	maxRetention      = 10 * 365 * 24 * time.Hour
	maxDescription    = 1024
	maxGracePeriod    = 7 * 24 * time.Hour
)

var backoffs = []string{"exponential", "linear", "fixed", "none"}

func keyConcurrencyFromAPI(k *wire.KeyConcurrency) *keyConcurrencyModel {
	if k == nil {
		return nil
	}
	return &keyConcurrencyModel{Max: types.Int64Value(k.Max)}
}

func throttleFromAPI(t *client.QueueThrottle) *throttleModel {
	if t == nil {
		return nil
	}
	return &throttleModel{Rate: types.Int64Value(t.Rate), Period: durationValue(t.Period)}
}

// defaultsFromAPI reads a queue's defaults. The API shows every field,
// null where the queue sets none; with keepEmpty false, a queue that sets
// none reads as null (the configuration left the block out).
func defaultsFromAPI(d *client.QueueDefaults, keepEmpty bool) *queueDefaultsModel {
	if d == nil {
		d = &client.QueueDefaults{}
	}
	m := &queueDefaultsModel{
		MaxRetries:     types.Int64Null(),
		RetryBackoff:   types.StringPointerValue(d.RetryBackoff),
		RetryBaseDelay: durationRaw(d.RetryBaseDelay),
		RetryMaxDelay:  durationRaw(d.RetryMaxDelay),
		LeaseDuration:  durationRaw(d.LeaseDuration),
		ExpireAfter:    durationRaw(d.ExpireAfter),
		Retention:      durationRaw(d.Retention),
	}
	if d.MaxRetries != nil {
		m.MaxRetries = types.Int64Value(int64(*d.MaxRetries))
	}
	if !keepEmpty && m.empty() {
		return nil
	}
	return m
}

func (m *queueDefaultsModel) empty() bool {
	return m.MaxRetries.IsNull() && m.RetryBackoff.IsNull() && m.RetryBaseDelay.IsNull() && m.RetryMaxDelay.IsNull() &&
		m.LeaseDuration.IsNull() && m.ExpireAfter.IsNull() && m.Retention.IsNull()
}

// toAPI writes the defaults for a request; nil sets none.
func (m *queueDefaultsModel) toAPI() client.QueueDefaultsSpec {
	if m == nil {
		return client.QueueDefaultsSpec{}
	}
	return client.QueueDefaultsSpec{
		MaxRetries:     intPtr(m.MaxRetries),
		RetryBackoff:   m.RetryBackoff.ValueString(),
		RetryBaseDelay: goDuration(m.RetryBaseDelay),
		RetryMaxDelay:  goDuration(m.RetryMaxDelay),
		LeaseDuration:  goDuration(m.LeaseDuration),
		ExpireAfter:    goDuration(m.ExpireAfter),
		Retention:      goDuration(m.Retention),
	}
}

func countsFromAPI(c client.QueueCounts) *queueCountsModel {
	return &queueCountsModel{
		Pending: types.Int64Value(c.Pending), Scheduled: types.Int64Value(c.Scheduled), Active: types.Int64Value(c.Active),
		Retrying: types.Int64Value(c.Retrying), Completed: types.Int64Value(c.Completed), Dead: types.Int64Value(c.Dead),
		Cancelled: types.Int64Value(c.Cancelled), Held: types.Int64Value(c.Held),
	}
}

func durationValue(s string) durationString {
	if s == "" {
		return durationNull()
	}
	return durationString{StringValue: types.StringValue(s)}
}

// durationRaw reads a JSON duration field: "1m30s", a number of seconds,
// or null.
func durationRaw(raw json.RawMessage) durationString {
	var s *string
	if json.Unmarshal(raw, &s) == nil {
		if s == nil {
			return durationNull()
		}
		if _, err := time.ParseDuration(*s); err == nil {
			return durationValue(*s)
		}
	}
	var secs float64
	if json.Unmarshal(raw, &secs) == nil {
		return durationString{StringValue: types.StringValue(time.Duration(secs * float64(time.Second)).String())}
	}
	return durationNull()
}

// goDuration is v as a time.Duration; null (and anything the plan-time
// validation let through unparsed) is 0, which the API reads as unset.
func goDuration(v durationString) time.Duration {
	if v.IsNull() || v.IsUnknown() {
		return 0
	}
	d, _ := time.ParseDuration(v.ValueString())
	return d
}
