package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// durationType is a Go duration string ("90s", "1h30m") compared by value:
// "60s" and "1m" are semantically equal, so the API's spelling never
// replaces the configuration's. It has no check of its own: the
// attribute's duration validator is the one place a bad value is
// reported, once, on the attribute (timetypes.GoDuration's check said it
// again, at the resource, with a literal "\n\n" in its message).
type durationType struct{ basetypes.StringType }

var (
	_ basetypes.StringTypable                    = durationType{}
	_ basetypes.StringValuableWithSemanticEquals = durationString{}
)

func (durationType) String() string { return "durationType" }

func (durationType) ValueType(context.Context) attr.Value { return durationString{} }

func (t durationType) Equal(o attr.Type) bool {
	_, ok := o.(durationType)
	return ok
}

func (durationType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return durationString{StringValue: in}, nil
}

func (t durationType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type of %T", v)
	}
	return durationString{StringValue: s}, nil
}

// durationString is a value of durationType.
type durationString struct{ basetypes.StringValue }

func (v durationString) Type(context.Context) attr.Type { return durationType{} }

func (v durationString) Equal(o attr.Value) bool {
	other, ok := o.(durationString)
	return ok && v.StringValue.Equal(other.StringValue)
}

// StringSemanticEquals: two spellings of one duration are equal; a value
// that does not parse equals only itself.
func (v durationString) StringSemanticEquals(_ context.Context, nv basetypes.StringValuable) (bool, diag.Diagnostics) {
	other, ok := nv.(durationString)
	if !ok {
		return false, nil
	}
	a, err1 := time.ParseDuration(v.ValueString())
	b, err2 := time.ParseDuration(other.ValueString())
	if err1 != nil || err2 != nil {
		return v.ValueString() == other.ValueString(), nil
	}
	return a == b, nil
}

func durationNull() durationString { return durationString{StringValue: basetypes.NewStringNull()} }
