package provider

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
	_ "time/tzdata" // time zones are checked the same on every machine, as the server does
	"unicode"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/robfig/cron/v3"

	"github.com/jobbie/jobbie/tenancy"
)

// stringCheck is a plan-time validator from a function; unknown and null
// values pass (Required says whether null is allowed).
type stringCheck struct {
	desc  string
	check func(string) error
}

var _ validator.String = stringCheck{}

func (v stringCheck) Description(context.Context) string         { return v.desc }
func (v stringCheck) MarkdownDescription(context.Context) string { return v.desc }

func (v stringCheck) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := v.check(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid "+v.desc, err.Error())
	}
}

func namespaceName() validator.String {
	return stringCheck{"namespace name", tenancy.ValidateNamespace}
}

func queueName() validator.String {
	return stringCheck{"queue name", tenancy.ValidateQueue}
}

func keyName() validator.String {
	return stringCheck{"API key name", tenancy.ValidateKeyName}
}

// roleName accepts a built-in role or a name a custom role may have.
func roleName() validator.String {
	return stringCheck{"role", func(s string) error {
		if tenancy.IsBuiltinRole(s) || tenancy.IsCustomRole(tenancy.Role(s)) {
			return nil
		}
		return fmt.Errorf("role %q is neither a built-in role (owner, admin, developer, producer, worker, viewer, billing) "+
			"nor a custom role's name (1-63 lowercase letters, digits or '-')", s)
	}}
}

// maxScheduleName is the API's bound on a schedule name, in bytes.
const maxScheduleName = 128

func scheduleName() validator.String {
	return stringCheck{"schedule name", func(s string) error {
		switch {
		case s == "":
			return fmt.Errorf("a schedule name must not be empty")
		case len(s) > maxScheduleName:
			return fmt.Errorf("a schedule name is at most %d bytes; %q is %d", maxScheduleName, s, len(s))
		case strings.IndexFunc(s, unicode.IsControl) >= 0:
			return fmt.Errorf("a schedule name must not contain control characters")
		case strings.HasPrefix(s, "sch_"):
			return fmt.Errorf("a schedule name must not start with sch_ (schedule ids do)")
		case strings.Contains(s, "/"):
			return fmt.Errorf("a schedule name must not contain '/' (it would make the import id namespace/queue/name ambiguous)")
		}
		return nil
	}}
}

// checkCronSpec accepts what the server accepts for a backup policy: a
// standard 5-field expression or a descriptor (@hourly, @every 90s),
// parsed by the same library. Surrounding spaces, which the server trims
// away, are refused so the state never differs from the configuration.
func checkCronSpec(s string) error {
	if s != strings.TrimSpace(s) || s == "" {
		return fmt.Errorf("cron %q must not be empty or start or end with spaces", s)
	}
	if strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ=") {
		return fmt.Errorf("set the time zone in the timezone attribute, not in cron")
	}
	if _, err := cron.ParseStandard(s); err != nil {
		return fmt.Errorf("invalid cron expression %q: %v (use 5 fields like \"0 3 * * *\", or @hourly, @daily, @every 90s…)", s, err)
	}
	return nil
}

// checkCron is checkCronSpec and the schedules' rule for @every.
func checkCron(s string) error {
	if err := checkCronSpec(s); err != nil {
		return err
	}
	if rest, ok := strings.CutPrefix(s, "@every "); ok {
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil || d < time.Second || d%time.Second != 0 {
			return fmt.Errorf("@every takes a whole number of seconds, at least 1s (like \"@every 90s\"); got %q", s)
		}
	}
	return nil
}

func cronExpr() validator.String { return stringCheck{"cron expression", checkCron} }

func backupCronExpr() validator.String { return stringCheck{"cron expression", checkCronSpec} }

func checkTimezone(s string) error {
	if s == "" || s == "Local" {
		return fmt.Errorf("timezone must be an IANA time zone name like \"Europe/Paris\" or \"UTC\"")
	}
	if _, err := time.LoadLocation(s); err != nil {
		return fmt.Errorf("unknown time zone %q: use an IANA name like \"Europe/Paris\" or \"UTC\"", s)
	}
	return nil
}

func timezone() validator.String { return stringCheck{"time zone", checkTimezone} }

// duration checks a Go duration string ("90s", "1h30m") against bounds;
// max 0 means no upper bound.
func duration(min, max time.Duration) validator.String {
	desc := fmt.Sprintf("duration of at least %s", min)
	if max > 0 {
		desc = fmt.Sprintf("duration between %s and %s", min, max)
	}
	return stringCheck{desc, func(s string) error {
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			return fmt.Errorf("%q is not a duration like \"30s\", \"5m\" or \"1h30m\" (units: ms, s, m, h; a day is 24h)", s)
		case d < min:
			return fmt.Errorf("%q is shorter than %s", s, min)
		case max > 0 && d > max:
			return fmt.Errorf("%q is longer than %s", s, max)
		}
		return nil
	}}
}

type endpointValidator struct{}

func (endpointValidator) Description(context.Context) string {
	return "an http:// or https:// URL"
}
func (v endpointValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (endpointValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	u, err := url.Parse(req.ConfigValue.ValueString())
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid endpoint",
			fmt.Sprintf("endpoint %q must be an http:// or https:// URL like https://jobbie.example.com", req.ConfigValue.ValueString()))
	}
}
