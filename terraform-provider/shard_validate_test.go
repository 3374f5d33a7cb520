package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Shard names and ids are checked at plan time as the API checks them.
func TestShardNameAndID(t *testing.T) {
	name, id := shardName().(stringCheck).check, shardID().(stringCheck).check
	for _, ok := range []string{"dc1", "Paris DC — rack 4", strings.Repeat("x", 100)} {
		if err := name(ok); err != nil {
			t.Errorf("name %q: %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"":                       "1-100 bytes",
		strings.Repeat("x", 101): "1-100 bytes",
		" dc1":                   "spaces",
		"dc1\n":                  "spaces",
		"dc\x001":                "control characters",
		"dc\x7f":                 "control characters",
	} {
		if err := name(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("name %q: %v, want an error saying %q", bad, err, want)
		}
	}
	for _, ok := range []string{"sh_01m87s5dhw6ehmte2bgbeg4ge6", "s1", "a.b-c_d", strings.Repeat("a", 63)} {
		if err := id(ok); err != nil {
			t.Errorf("id %q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "_sh", "sh/1", "sh 1", strings.Repeat("a", 64)} {
		if err := id(bad); err == nil || !strings.Contains(err.Error(), "is not a shard id") {
			t.Errorf("id %q: %v, want it refused", bad, err)
		}
	}
}

// A shard is a Raft group of 1, 3 or 5 nodes; an even count is refused
// with the reason.
func TestShardNodes(t *testing.T) {
	check := func(n int64) string {
		var resp validator.Int64Response
		shardNodes{}.ValidateInt64(context.Background(), validator.Int64Request{Path: path.Root("nodes"), ConfigValue: types.Int64Value(n)}, &resp)
		if !resp.Diagnostics.HasError() {
			return ""
		}
		return resp.Diagnostics.Errors()[0].Detail()
	}
	for _, n := range []int64{1, 3, 5} {
		if d := check(n); d != "" {
			t.Errorf("nodes %d: %s", n, d)
		}
	}
	for n, want := range map[int64]string{2: "majority", 4: "no more lost nodes than 3", 0: "not 0", 6: "not 6", -1: "not -1"} {
		if d := check(n); !strings.Contains(d, want) {
			t.Errorf("nodes %d: %q, want it refused saying %q", n, d, want)
		}
	}
	var resp validator.Int64Response
	shardNodes{}.ValidateInt64(context.Background(), validator.Int64Request{ConfigValue: types.Int64Unknown()}, &resp)
	if resp.Diagnostics.HasError() {
		t.Errorf("an unknown count is checked at apply, not refused: %v", resp.Diagnostics)
	}
}
