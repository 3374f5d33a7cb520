package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// An endpoint's delivery log keeps its last 50 records, newest first,
// each error cut to its first bytes; the records that fall off are
// deleted in the apply that pushed them out, and a delete of the
// endpoint takes the log with it.
func TestWebhookDeliveryLogIsBounded(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	hook := WebhookRecord{ID: "wh1", URL: "https://h.example/", Events: []string{"*"}, Enabled: true}
	w := f.apply(WebhookCreate.Type, &WebhookCmd{NS: testNS, Hook: hook}).(*WebhookRecord)
	recs := func(from, n int) []WebhookAttempt {
		out := make([]WebhookAttempt, n)
		for i := range out {
			out[i] = WebhookAttempt{EventID: fmt.Sprint("s1:", from+i), Attempt: 1, Status: 500, Error: strings.Repeat("x", 5000)}
		}
		return out
	}
	stored := func() int {
		p := keys.WebhookDeliveries(testNS, "wh1")
		it, err := f.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
		require.NoError(t, err)
		defer it.Close()
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		return n
	}

	c := &WebhookProgressCmd{NS: testNS, ID: "wh1", Updated: w.UpdatedAt, Cursor: 1, Attempts: 30, Log: recs(1, 30)}
	require.Equal(t, WebhookProgressLogged, WebhookProgressFor(c))
	f.apply(WebhookProgressLogged.Type, c)
	require.Equal(t, true, f.apply(WebhookLog.Type, &WebhookLogCmd{NS: testNS, ID: "wh1", Log: recs(31, 30)}))
	log := ReadDeliveryLog(f.db, testNS, "wh1")
	require.Len(t, log, wire.WebhookDeliveryLogSize)
	require.Equal(t, "s1:60", log[0].EventID, "newest first")
	require.Equal(t, "s1:11", log[49].EventID, "the oldest ten fell off")
	require.Len(t, log[0].Error, wire.WebhookDeliveryError, "an error keeps its first bytes")
	cut := CutDeliveryError(strings.Repeat("x", wire.WebhookDeliveryError-1) + "é")
	require.Equal(t, strings.Repeat("x", wire.WebhookDeliveryError-1), cut, "cut at a character")
	require.Equal(t, wire.WebhookDeliveryLogSize, stored(), "nothing beyond the log's size is stored")

	// More at once than the log holds: only the last 50 count.
	f.apply(WebhookLog.Type, &WebhookLogCmd{NS: testNS, ID: "wh1", Log: recs(61, 70)})
	log = ReadDeliveryLog(f.db, testNS, "wh1")
	require.Equal(t, "s1:130", log[0].EventID)
	require.Equal(t, "s1:81", log[49].EventID)
	require.Equal(t, wire.WebhookDeliveryLogSize, stored())
	got, _ := ReadWebhook(f.db, testNS, "wh1")
	require.EqualValues(t, 110, got.Logged)

	require.Equal(t, false, f.apply(WebhookLog.Type, &WebhookLogCmd{NS: testNS, ID: "nope", Log: recs(1, 1)}), "an endpoint gone keeps no log")
	f.apply(WebhookDelete.Type, &WebhookIDCmd{NS: testNS, ID: "wh1"})
	require.Zero(t, stored(), "a deleted endpoint's log goes with it")
	require.Empty(t, ReadDeliveryLog(f.db, testNS, "wh1"))
}
