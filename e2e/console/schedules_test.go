package console

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// scheduleRow is the list's row of schedule name.
func scheduleRow(name string) string { return fmt.Sprintf(`tr[data-schedule=%q]`, name) }

// onlySchedule is the tenant's one schedule, read through the API.
func onlySchedule(t *testing.T, tn *tenant) client.Schedule {
	t.Helper()
	list, err := tn.owner.ListSchedules(ctx(t))
	require.NoError(t, err)
	require.Len(t, list, 1)
	return list[0]
}

// waitSchedule polls the API until the tenant's one schedule satisfies ok.
func waitSchedule(t *testing.T, tn *tenant, what string, ok func(client.Schedule) bool) client.Schedule {
	t.Helper()
	var last client.Schedule
	require.Eventually(t, func() bool {
		last = onlySchedule(t, tn)
		return ok(last)
	}, waitTimeout, pollEvery, "the API does not agree: %s (last %+v)", what, last)
	return last
}

// previewIn waits until the dialog's preview lists runs in zone tz and
// answers their times, as the server sent them.
func previewIn(p *page, tz string, n int) []time.Time {
	p.t.Helper()
	p.until(waitTimeout, fmt.Sprintf(`((ol) => !!ol && ol.closest('.cron-preview').querySelector('h3').innerText.includes(%s) &&
  ol.querySelectorAll('li').length === %d)(document.querySelector('#cron-preview'))`, js(tz), n),
		fmt.Sprintf("the preview lists %d runs in %s", n, tz))
	raw := eval[[]string](p, `[...document.querySelectorAll('#cron-preview li')].map((li) => li.dataset.at + '|' + li.innerText)`)
	var out []time.Time
	for _, r := range raw {
		at, text, _ := strings.Cut(r, "|")
		ts, err := time.Parse(time.RFC3339, at)
		require.NoError(p.t, err, "preview time %q", at)
		out = append(out, ts)
		require.Contains(p.t, text, ts.Format("Mon 2006-01-02 15:04"), "the preview writes %s in its zone", at)
	}
	return out
}

// The whole life of a schedule in the console: a bad cron is named and
// refused, a good one previews its runs in its zone, and it is created,
// disabled, enabled, edited and deleted, the API agreeing at each step.
func TestConsoleSchedulesCreateEditToggleDelete(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	p := signedIn(t, tn.ownerKey, "/console/schedules", "schedules")
	p.waitText(`[data-screen="schedules"]`, "No schedules")

	p.click("#schedule-new")
	p.waitFor("#schedule-dialog #schedule-form")
	assert.Equal(t, "UTC", eval[string](p, query("#schedule-timezone")+".value"), "the time zone defaults to UTC")
	p.setValue("#schedule-name", "digest")
	p.setValue("#schedule-queue", "emails")
	p.setValue("#schedule-cron", "61 * * * *")
	p.waitFor("#cron-error")
	cronErr := p.text("#cron-error")
	assert.Contains(t, cronErr, "cron expression")
	assert.Contains(t, cronErr, "61")
	assert.Equal(t, "cron", eval[string](p, query("#cron-error")+".dataset.field"))
	assert.Equal(t, "true", eval[string](p, query("#schedule-cron")+".getAttribute('aria-invalid')"))

	p.click("#schedule-save")
	p.waitFor("#schedule-error")
	assert.Equal(t, cronErr, p.text("#schedule-error"), "Save is refused with the preview's message")
	assert.True(t, p.visible("#schedule-dialog #schedule-form"), "the refused dialog stays open")
	list, err := tn.owner.ListSchedules(ctx(t))
	require.NoError(t, err)
	assert.Empty(t, list, "a refused save created a schedule")

	// A weekday 09:00 in Paris: five runs, each Monday to Friday at 09:00
	// Paris time, with Paris's offset.
	p.setValue("#schedule-cron", "0 9 * * 1-5")
	p.setValue("#schedule-timezone", "Europe/Paris")
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	runs := previewIn(p, "Europe/Paris", 5)
	for i, r := range runs {
		local := r.In(paris)
		assert.True(t, local.Weekday() >= time.Monday && local.Weekday() <= time.Friday, "run %s is on a %s", r, local.Weekday())
		assert.Equal(t, "09:00", local.Format("15:04"), "run %s", r)
		_, off := local.Zone()
		_, got := r.Zone()
		assert.Equal(t, off, got, "run %s carries Paris's offset", r)
		if i > 0 {
			assert.True(t, r.After(runs[i-1]), "runs in order")
		}
	}
	assert.False(t, p.visible("#cron-error"), "the fixed cron still shows an error")
	assert.False(t, p.visible("#schedule-error"), "fixing the cron keeps the refusal up")

	// A payload whose integer a JS number cannot hold keeps its digits.
	p.setValue("#schedule-payload", `{"kind": "digest", "id": 12345678901234567890}`)
	p.setValue("#schedule-priority", "high")
	p.setValue("#schedule-unique-key", "digest-run")
	p.setValue("#schedule-max-retries", "5")
	p.shot("schedule-dialog")
	p.click("#schedule-save")
	p.waitGone("#schedule-form")
	p.waitFor(scheduleRow("digest"))

	s := onlySchedule(t, tn)
	assert.Equal(t, "digest", s.Name)
	assert.Equal(t, "emails", s.Queue)
	assert.Equal(t, "0 9 * * 1-5", s.Cron)
	assert.Equal(t, "Europe/Paris", s.Timezone)
	assert.Equal(t, "high", s.Priority)
	assert.Equal(t, 5, s.MaxRetries)
	require.NotNil(t, s.UniqueKey)
	assert.Equal(t, "digest-run", *s.UniqueKey)
	assert.True(t, s.Enabled)
	assert.Contains(t, string(s.Payload), "12345678901234567890")
	require.NotNil(t, s.NextRun)
	assert.Equal(t, runs[0].UTC(), s.NextRun.UTC(), "the listed next run is the preview's first")

	row := scheduleRow("digest")
	p.waitText(row+" td.schedule-next", s.NextRun.In(paris).Format("Mon 2006-01-02 15:04"))
	assert.Contains(t, p.text(row), "Europe/Paris")
	assert.Equal(t, 1, p.count(row+` a[href="/console/queues/emails"]`), "the queue links to its screen")
	p.shot("schedules")

	// Disable, then enable: the API agrees each time.
	p.click(row + " .schedule-toggle")
	waitSchedule(t, tn, "disabled", func(s client.Schedule) bool { return !s.Enabled && s.NextRun == nil })
	p.waitText(row, "disabled")
	p.waitText(row+" .schedule-toggle", "Enable")
	p.click(row + " .schedule-toggle")
	waitSchedule(t, tn, "enabled", func(s client.Schedule) bool { return s.Enabled && s.NextRun != nil })
	p.waitText(row+" .schedule-toggle", "Disable")

	// Run now: the schedule's job is enqueued at once, its own runs stay.
	p.click(row + " .schedule-run")
	p.waitText("#schedules-notice", "ran by hand: job job_")
	notice := p.text("#schedules-notice")
	jobID := notice[strings.Index(notice, "job_"):strings.Index(notice, " enqueued")]
	j, err := tn.owner.GetJob(ctx(t), jobID)
	require.NoError(t, err)
	assert.Equal(t, "emails", j.Queue)
	assert.Equal(t, s.ID, j.Tags["jobbie.schedule_id"])
	assert.Equal(t, s.NextRun.UTC(), onlySchedule(t, tn).NextRun.UTC(), "a run by hand leaves the schedule's runs")

	// Edit the cron: the rest of the schedule stays as it was.
	p.click(row + " .schedule-edit")
	p.until(waitTimeout, query("#schedule-cron")+"?.value === '0 9 * * 1-5'", "the edit dialog shows the stored cron")
	assert.Contains(t, eval[string](p, query("#schedule-payload")+".value"), "12345678901234567890", "the edit shows the payload's digits")
	assert.Equal(t, "Europe/Paris", eval[string](p, query("#schedule-timezone")+".value"))
	p.setValue("#schedule-cron", "30 8 * * *")
	for _, r := range previewIn(p, "Europe/Paris", 5) {
		assert.Equal(t, "08:30", r.In(paris).Format("15:04"))
	}
	p.click("#schedule-save")
	p.waitGone("#schedule-form")
	p.waitText(row, "30 8 * * *")
	s2 := onlySchedule(t, tn)
	assert.Equal(t, s.ID, s2.ID)
	assert.Equal(t, "30 8 * * *", s2.Cron)
	assert.Equal(t, "Europe/Paris", s2.Timezone)
	assert.Equal(t, "high", s2.Priority)
	assert.Equal(t, 5, s2.MaxRetries)
	assert.Equal(t, s.UniqueKey, s2.UniqueKey)
	assert.True(t, s2.Enabled)
	assert.JSONEq(t, string(s.Payload), string(s2.Payload))
	assert.Contains(t, string(s2.Payload), "12345678901234567890")

	// Delete, confirmed.
	p.click(row + " .schedule-delete")
	p.waitFor("#confirm-dialog #confirm-ok")
	assert.Contains(t, p.text("#confirm-dialog"), "digest")
	p.click("#confirm-ok")
	p.waitGone(row)
	list, err = tn.owner.ListSchedules(ctx(t))
	require.NoError(t, err)
	assert.Empty(t, list)
}

// A time zone the server does not know is named in the preview, and the
// filter box narrows the list.
func TestConsoleSchedulesBadZoneAndFilter(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	for _, r := range []client.ScheduleRequest{
		{Name: "nightly-report", Queue: "reports", Cron: "0 2 * * *", Timezone: "America/New_York"},
		{Name: "hourly-sync", Queue: "sync", Cron: "@hourly"},
	} {
		_, err := tn.owner.CreateSchedule(ctx(t), r)
		require.NoError(t, err)
	}
	p := signedIn(t, tn.ownerKey, "/console/schedules", "schedules")
	p.waitFor(scheduleRow("nightly-report"))
	p.waitFor(scheduleRow("hourly-sync"))
	p.setValue("#schedule-filter", "york")
	p.waitGone(scheduleRow("hourly-sync"))
	assert.True(t, p.visible(scheduleRow("nightly-report")))
	assert.Contains(t, eval[string](p, "location.search"), "q=york", "the filter lives in the URL")
	p.setValue("#schedule-filter", "")
	p.waitFor(scheduleRow("hourly-sync"))

	// A schedule made without max_retries takes its queue's default, and
	// an edit keeps it so: the field shows blank, and Save leaves it out.
	p.click(scheduleRow("hourly-sync") + " .schedule-edit")
	p.until(waitTimeout, query("#schedule-cron")+"?.value === '@hourly'", "the edit dialog shows the stored cron")
	assert.Equal(t, "", eval[string](p, query("#schedule-max-retries")+".value"), "a defaulted max_retries shows blank")
	p.setValue("#schedule-cron", "0 * * * *")
	p.click("#schedule-save")
	p.waitGone("#schedule-form")
	p.waitText(scheduleRow("hourly-sync"), "0 * * * *")
	edited, err := tn.owner.GetSchedule(ctx(t), "hourly-sync")
	require.NoError(t, err)
	assert.Equal(t, "0 * * * *", edited.Cron)
	assert.True(t, edited.MaxRetriesDefault, "the edit kept the queue's default")

	p.click("#schedule-new")
	p.setValue("#schedule-cron", "0 9 * * *")
	p.setValue("#schedule-timezone", "Europe/Atlantis")
	p.waitFor("#cron-error")
	assert.Equal(t, "timezone", eval[string](p, query("#cron-error")+".dataset.field"))
	assert.Contains(t, p.text("#cron-error"), "Europe/Atlantis")
	p.setValue("#schedule-timezone", "Asia/Tokyo")
	for _, r := range previewIn(p, "Asia/Tokyo", 5) {
		_, off := r.Zone()
		assert.Equal(t, 9*3600, off, "run %s carries Tokyo's offset", r)
	}
}

// A schedule that fires moves its row without a reload: the list reloads
// on the events of the jobs it enqueues.
func TestConsoleSchedulesMoveLive(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	_, err := tn.owner.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "ticker", Queue: "ticks", Cron: "@every 1s", Enabled: new(false)})
	require.NoError(t, err)
	p := signedIn(t, tn.ownerKey, "/console/schedules", "schedules")
	row := scheduleRow("ticker")
	p.waitText(row, "disabled")
	assert.Equal(t, 0, p.count(row+" td.schedule-job a"), "a schedule that never fired shows a last job")

	p.click(row + " .schedule-toggle")
	p.until(waitTimeout, query(row+" td.schedule-job a"), "the first fire shows its job")
	first := eval[string](p, query(row+" td.schedule-job a")+".textContent")
	p.until(waitTimeout, fmt.Sprintf("%s?.textContent !== %s", query(row+" td.schedule-job a"), js(first)), "a later fire shows its job")
	href := eval[string](p, query(row+" td.schedule-job a")+".getAttribute('href')")
	assert.True(t, strings.HasPrefix(href, "/console/jobs/job_"), "the last job links to its screen: %s", href)
	assert.NotEqual(t, "—", strings.TrimSpace(p.text(row+" td.schedule-last")))
	_, err = tn.owner.DisableSchedule(ctx(t), "ticker")
	require.NoError(t, err)
}

// A viewer sees the schedules but none of the buttons that change them;
// on a phone the list scrolls inside its frame.
func TestConsoleSchedulesViewerSeesNoActions(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	_, err := tn.owner.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "weekly", Queue: "reports", Cron: "0 6 * * 1",
		Timezone: "Europe/Berlin", Payload: json.RawMessage(`{"x":1}`)})
	require.NoError(t, err)
	k := tn.key(t, tenancy.RoleViewer)
	p := signedIn(t, k.Token, "/console/schedules", "schedules")
	p.waitFor(scheduleRow("weekly"))
	assert.Contains(t, p.text(scheduleRow("weekly")), "Europe/Berlin")
	for _, sel := range []string{"#schedule-new", ".schedule-edit", ".schedule-toggle", ".schedule-delete", "#schedule-dialog"} {
		assert.Equal(t, 0, p.count(sel), "a viewer sees %s", sel)
	}
	p.setViewport(390, 844)
	p.waitFor(scheduleRow("weekly"))
	assert.LessOrEqual(t, eval[int](p, "document.documentElement.scrollWidth"), 390, "the list is wider than the phone")
	p.shot("schedules-phone")
}
