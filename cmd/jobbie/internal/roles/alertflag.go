package roles

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/settings"
	"github.com/jobbie/jobbie/shard/leader"
)

// alertIntervalFlag is --alert-interval, of the roles that run a shard
// (the shard, dev): how often its leader evaluates the alert rules. A
// rule fires or resolves within one interval of its condition, so a
// shorter one answers sooner and costs a read of every namespace's
// counts more often.
func alertIntervalFlag(f *pflag.FlagSet, v *time.Duration) {
	f.DurationVar(v, "alert-interval", leader.DefaultAlertInterval, "how often the shard leader evaluates the namespaces' alert rules")
	settings.Range(f, "alert-interval", "100ms", "1h")
}

// alertIntervalArgs is the flag again, for a shard a dev cluster starts.
func alertIntervalArgs(d time.Duration) []string {
	return []string{"--alert-interval", d.String()}
}
