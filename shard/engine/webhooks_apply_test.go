package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

// A new endpoint's cursor is past every event so far; progress never
// moves it back; the failing run and a disable apply only to the
// settings the leader delivered by; enabling clears them.
func TestWebhookCursorAndDisable(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	f.apply(EventLogStart.Type, &EventLogStartCmd{})
	f.enqueue(&job.Job{Queue: "q"})
	hook := WebhookRecord{ID: "wh1", URL: "https://h.example/", Events: []string{"*"}, Enabled: true}
	w := f.apply(WebhookCreate.Type, &WebhookCmd{NS: testNS, Hook: hook}).(*WebhookRecord)
	require.GreaterOrEqual(t, w.Cursor, f.e.LatestEvent(f.db, testNS), "the events before it are not its")
	f.enqueue(&job.Job{Queue: "q"})
	evs, _, _ := f.e.ReadEvents(f.db, testNS, w.Cursor, 10, nil)
	require.Len(t, evs, 1, "the events after it are")
	require.Equal(t, apierr.Conflict, apierr.CodeOf(f.apply(WebhookCreate.Type, &WebhookCmd{NS: testNS, Hook: hook}).(error)))

	require.Equal(t, true, f.apply(WebhookProgress.Type, &WebhookProgressCmd{NS: testNS, ID: "wh1", Updated: w.UpdatedAt, Cursor: evs[0].Seq}))
	require.Equal(t, true, f.apply(WebhookProgress.Type, &WebhookProgressCmd{NS: testNS, ID: "wh1", Updated: w.UpdatedAt, Cursor: 1}))
	got, _ := ReadWebhook(f.db, testNS, "wh1")
	require.Equal(t, evs[0].Seq, got.Cursor, "never back")

	f.advance(time.Second)
	f.apply(WebhookUpdate.Type, &WebhookCmd{NS: testNS, Hook: hook}) // changes UpdatedAt
	f.apply(WebhookProgress.Type, &WebhookProgressCmd{NS: testNS, ID: "wh1", Updated: w.UpdatedAt, Cursor: evs[0].Seq,
		FailingSince: 5, Disable: true, Reason: "r"})
	got, _ = ReadWebhook(f.db, testNS, "wh1")
	require.True(t, got.Delivering(), "a disable for settings since changed is dropped")
	require.Zero(t, got.FailingSince)
	f.apply(WebhookProgress.Type, &WebhookProgressCmd{NS: testNS, ID: "wh1", Updated: got.UpdatedAt, Cursor: evs[0].Seq,
		FailingSince: 5, Disable: true, Reason: "r"})
	got, _ = ReadWebhook(f.db, testNS, "wh1")
	require.False(t, got.Delivering())
	require.Equal(t, "r", got.DisabledReason)
	require.EqualValues(t, 5, got.FailingSince)
	got = f.apply(WebhookUpdate.Type, &WebhookCmd{NS: testNS, Hook: hook}).(*WebhookRecord)
	require.True(t, got.Delivering())
	require.Zero(t, got.FailingSince)
	require.Equal(t, evs[0].Seq, got.Cursor, "an update keeps the cursor")

	require.Equal(t, false, f.apply(WebhookProgress.Type, &WebhookProgressCmd{NS: testNS, ID: "nope"}))
	require.Equal(t, apierr.NotFound, apierr.CodeOf(f.apply(WebhookDelete.Type, &WebhookIDCmd{NS: testNS, ID: "nope"}).(error)))
	f.apply(WebhookDelete.Type, &WebhookIDCmd{NS: testNS, ID: "wh1"})
	_, ok := ReadWebhook(f.db, testNS, "wh1")
	require.False(t, ok)
}

// A namespace holds at most wire.MaxWebhooks endpoints.
func TestWebhookLimit(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	for i := range wire.MaxWebhooks {
		f.apply(WebhookCreate.Type, &WebhookCmd{NS: testNS, Hook: WebhookRecord{ID: fmt.Sprint("wh", i), URL: "https://h.example/", Events: []string{"*"}}})
	}
	err := f.apply(WebhookCreate.Type, &WebhookCmd{NS: testNS, Hook: WebhookRecord{ID: "one-more", URL: "https://h.example/", Events: []string{"*"}}})
	require.Equal(t, apierr.Conflict, apierr.CodeOf(err.(error)))
	require.Len(t, ReadWebhooks(f.db, testNS), wire.MaxWebhooks)
}
