package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
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

	t.Run("CLI", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "amount.json")
		require.NoError(t, os.WriteFile(file, []byte("{\n  \"type\": \"object\",\n  \"required\": [\"amount\"],\n"+
			"  \"properties\": {\"amount\": {\"type\": \"integer\", \"minimum\": 0}}\n}\n"), 0o600))
		out := d.run(t, "queues", "create", "invoices", "--schema-file", file, "--concurrency", "2")
		require.Equal(t, "version 1: "+amountCanonical, clitest.Field(out, "SCHEMA"), out)
		refused(t, "invoices", map[string]any{"amount": -1})

		// get shows it; -o json has it whole, as the API does.
		require.Equal(t, "version 1: "+amountCanonical, clitest.Field(d.run(t, "queues", "get", "invoices"), "SCHEMA"))
		var got client.Queue
		out = d.run(t, "queues", "get", "invoices", "-o", "json")
		require.NoError(t, json.Unmarshal([]byte(out), &got), out)
		require.JSONEq(t, amountCanonical, string(got.Schema)) // indented, as -o json writes
		require.EqualValues(t, 1, got.SchemaVersion)

		// Other settings changed: the schema is kept, at its version.
		out = d.run(t, "queues", "set", "invoices", "--description", "typed", "--no-concurrency")
		require.Equal(t, "version 1: "+amountCanonical, clitest.Field(out, "SCHEMA"), out)
		require.Equal(t, "typed", clitest.Field(out, "DESCRIPTION"), out)

		// From stdin, another schema: the next version.
		out, _, err := runJobbie(t, `{"type":"object","maxProperties":3}`, "queues", "set", "invoices", "--schema-file", "-",
			"--url", d.gateway, "--key-file", d.ownerFile)
		require.NoError(t, err)
		require.Equal(t, `version 2: {"maxProperties":3,"type":"object"}`, clitest.Field(out, "SCHEMA"), out)

		// Refused before anything is sent, or by the API naming schema;
		// the queue as it was.
		bad := filepath.Join(dir, "bad.json")
		require.NoError(t, os.WriteFile(bad, []byte(`{"type":"nope"}`), 0o600))
		_, err = d.as(t, d.ownerFile, "queues", "set", "invoices", "--schema-file", bad, "--description", "changed")
		e, ok := client.AsError(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, 400, e.Status, "%v", err)
		require.Equal(t, "schema", e.Field, "%v", err)
		notJSON, null := filepath.Join(dir, "not.json"), filepath.Join(dir, "null.json")
		require.NoError(t, os.WriteFile(notJSON, []byte(`{"type":`), 0o600))
		require.NoError(t, os.WriteFile(null, []byte("null\n"), 0o600))
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--schema-file", file, "--remove-schema"}, "--schema-file cannot go with --remove-schema"},
			{[]string{"--schema-file", notJSON}, "--schema-file " + notJSON + " is not JSON: unexpected end of JSON input"},
			{[]string{"--schema-file", null}, "--schema-file " + null + " holds null: --remove-schema removes the schema"},
			{[]string{"--schema-file", filepath.Join(dir, "missing.json")}, "--schema-file: open " + filepath.Join(dir, "missing.json") +
				": no such file or directory"},
		} {
			_, err := d.as(t, d.ownerFile, append([]string{"queues", "set", "invoices"}, tc.args...)...)
			require.EqualError(t, err, tc.want)
		}
		q, err := owner.GetQueue(ctx, "invoices")
		require.NoError(t, err)
		require.Equal(t, "typed", q.Description)
		require.EqualValues(t, 2, q.SchemaVersion)

		out = d.run(t, "queues", "set", "invoices", "--remove-schema")
		require.Empty(t, clitest.Field(out, "SCHEMA"), out)
		q, err = owner.GetQueue(ctx, "invoices")
		require.NoError(t, err)
		require.EqualValues(t, 0, q.SchemaVersion)
		require.Equal(t, "typed", q.Description, "the rest is kept")
	})
}
