package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// A queue's payload schema through the Go SDK and the CLI against jobbie
// dev: set, read back in canonical form, kept by a spec or a command that
// leaves it out, replaced (the next version), removed; a bad schema is
// the API's 400 naming "schema", and nothing changes.
func TestQueueSchemaAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)
	ctx, owner := context.Background(), d.owner
	const amount = `{"type":"object","required":["amount"],"properties":{"amount":{"type":"integer","minimum":0}}}`
	const amountCanonical = `{"properties":{"amount":{"minimum":0,"type":"integer"}},"required":["amount"],"type":"object"}`
	refused := func(t *testing.T, queue string, payload any) {
		t.Helper()
		_, err := owner.Enqueue(ctx, client.EnqueueRequest{Queue: queue, Payload: payload})
		e, ok := client.AsError(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, 400, e.Status, "%v", err)
		require.Equal(t, "payload/amount", e.Field, "%v", err)
	}

	t.Run("SDK", func(t *testing.T) {
		q, err := owner.PutQueue(ctx, "payments", client.QueueSpec{Description: "typed", Schema: json.RawMessage(amount)})
		require.NoError(t, err)
		require.Equal(t, amountCanonical, string(q.Schema), "stored with its keys sorted")
		require.EqualValues(t, 1, q.SchemaVersion)
		refused(t, "payments", map[string]any{"amount": -1})
		_, err = owner.Enqueue(ctx, client.EnqueueRequest{Queue: "payments", Payload: map[string]any{"amount": 1}})
		require.NoError(t, err)

		// Read back, and put back: no change, not even of the version.
		q, err = owner.GetQueue(ctx, "payments")
		require.NoError(t, err)
		spec, err := client.QueueSpecOf(q)
		require.NoError(t, err)
		require.Equal(t, amountCanonical, string(spec.Schema))
		q, err = owner.PutQueue(ctx, "payments", spec)
		require.NoError(t, err)
		require.Equal(t, amountCanonical, string(q.Schema))
		require.EqualValues(t, 1, q.SchemaVersion)

		// A spec that leaves the schema out keeps it.
		q, err = owner.PutQueue(ctx, "payments", client.QueueSpec{Description: "still typed"})
		require.NoError(t, err)
		require.Equal(t, "still typed", q.Description)
		require.Equal(t, amountCanonical, string(q.Schema))
		require.EqualValues(t, 1, q.SchemaVersion)
		refused(t, "payments", map[string]any{"amount": -1})

		// A bad schema: 400 naming schema, and the queue as it was.
		for _, bad := range []string{`{"type":"nope"}`, `{"$ref":"https://example.com/s.json"}`, `[1]`} {
			_, err = owner.PutQueue(ctx, "payments", client.QueueSpec{Description: "changed", Schema: json.RawMessage(bad)})
			e, ok := client.AsError(err)
			require.True(t, ok, "%s: %v", bad, err)
			require.Equal(t, 400, e.Status, "%s: %v", bad, err)
			require.Equal(t, "schema", e.Field, "%s: %v", bad, err)
		}
		q, err = owner.GetQueue(ctx, "payments")
		require.NoError(t, err)
		require.Equal(t, "still typed", q.Description, "a refused PUT changes nothing")
		require.Equal(t, amountCanonical, string(q.Schema))

		// Another schema takes the next version; NoSchema removes it.
		q, err = owner.PutQueue(ctx, "payments", client.QueueSpec{Schema: json.RawMessage(`{"type":"object"}`)})
		require.NoError(t, err)
		require.EqualValues(t, 2, q.SchemaVersion)
		q, err = owner.PutQueue(ctx, "payments", client.QueueSpec{Schema: client.NoSchema})
		require.NoError(t, err)
		require.EqualValues(t, 0, q.SchemaVersion)
		require.JSONEq(t, `null`, string(q.Schema))
		spec, err = client.QueueSpecOf(q)
		require.NoError(t, err)
		require.Nil(t, spec.Schema)
		_, err = owner.Enqueue(ctx, client.EnqueueRequest{Queue: "payments", Payload: map[string]any{"amount": -1}})
		require.NoError(t, err, "any payload again")
	})
}
