package provider

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
)

func TestCheckCron(t *testing.T) {
	for _, ok := range []string{"0 3 * * *", "*/5 * * * *", "0 9 * * 1-5", "@hourly", "@daily", "@every 90s", "@every 1h30m"} {
		if err := checkCron(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"":                      "must not be empty",
		" 0 3 * * *":            "spaces",
		"61 * * * *":            "invalid cron expression",
		"0 3 * *":               "invalid cron expression",
		"CRON_TZ=UTC 0 3 * * *": "timezone attribute",
		"@every 500ms":          "whole number of seconds",
		"@every 1.5s":           "whole number of seconds",
		"@fortnightly":          "invalid cron expression",
	} {
		if err := checkCron(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", bad, err, want)
		}
	}
}

// A backup policy's cron follows the control plane's rules, which leave
// @every's precision to the cron library.
func TestCheckCronSpec(t *testing.T) {
	for _, ok := range []string{"0 3 * * *", "@weekly", "@every 6h", "@every 1.5s"} {
		if err := checkCronSpec(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"":                 "must not be empty",
		"0 3 * * * ":       "spaces",
		"0 25 * * *":       "invalid cron expression",
		"TZ=UTC 0 3 * * *": "timezone attribute",
		"@every":           "invalid cron expression",
	} {
		if err := checkCronSpec(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", bad, err, want)
		}
	}
}

func TestCheckTimezone(t *testing.T) {
	for _, ok := range []string{"UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata"} {
		if err := checkTimezone(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Local", "Mars/Olympus", "utc", "+02:00"} {
		if err := checkTimezone(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestDurationBounds(t *testing.T) {
	v := duration(time.Second, time.Hour).(stringCheck)
	for s, ok := range map[string]bool{"1s": true, "60m": true, "3600s": true, "999ms": false, "61m": false, "1d": false, "": false} {
		if err := v.check(s); (err == nil) != ok {
			t.Errorf("%q: %v", s, err)
		}
	}
}

func TestKeyDefaultNamespace(t *testing.T) {
	// header {"alg":"EdDSA"}, claims {"dns":"emails","sub":"key_1"}; the
	// signature is not checked here.
	const key = "eyJhbGciOiJFZERTQSJ9.eyJkbnMiOiJlbWFpbHMiLCJzdWIiOiJrZXlfMSJ9.c2ln"
	if got := keyDefaultNamespace(key); got != "emails" {
		t.Errorf("got %q, want emails", got)
	}
	if got := keyDefaultNamespace("not a jwt"); got != "default" {
		t.Errorf("got %q, want default", got)
	}
}

func TestSameInstant(t *testing.T) {
	prior := timetypes.NewRFC3339ValueMust("2030-01-01T02:00:00+02:00")
	same := timetypes.NewRFC3339ValueMust("2030-01-01T00:00:00Z")
	other := timetypes.NewRFC3339ValueMust("2030-01-01T00:00:01Z")
	if got := sameInstant(prior, same); !got.Equal(prior) {
		t.Errorf("the same instant became %s", got)
	}
	if got := sameInstant(prior, other); !got.Equal(other) {
		t.Errorf("another instant became %s", got)
	}
}

func TestSplitImportID(t *testing.T) {
	if ns, rest, ok := splitImportID("emails/emails.send", nil, ""); !ok || ns != "emails" || rest != "emails.send" {
		t.Errorf("got %q %q %v", ns, rest, ok)
	}
}
