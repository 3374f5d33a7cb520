package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Bad input is refused before any request: the URL below refuses
// connections, so an error other than "connection refused" came first.
func TestAPICommandsRefuseBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"enqueue"}, "enqueue takes 1 or 2 arguments, not 0: jobbie enqueue <queue> [<payload-json> | -] [flags]"},
		{"", []string{"enqueue", "q", "{not json"}, "the payload is not JSON: invalid character 'n' looking for beginning of object key string"},
		{"", []string{"enqueue", "q", "-"}, "the payload on stdin is empty: give a JSON value, e.g. '{}'"},
		{"[1,", []string{"enqueue", "q", "-"}, "the payload on stdin is not JSON: unexpected end of JSON input"},
		{"", []string{"enqueue", "bad queue", "{}"}, `queue "bad queue" must be 1-128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit`},
		{"", []string{"enqueue", "q", "{}", "--priority", "urgent"}, `--priority must be critical, high or normal, not "urgent"`},
		{"", []string{"enqueue", "q", "{}", "--delay", "1m", "--run-at", "2030-01-01"}, "give --delay or --run-at, not both"},
		{"", []string{"enqueue", "q", "{}", "--max-retries", "-1"}, "--max-retries must not be negative"},
		{"", []string{"enqueue", "q", "{}", "--unique-period", "1h"}, "--unique-period needs --unique-key"},
		{"", []string{"enqueue", "q", "{}", "--tag", "novalue"}, `invalid argument "novalue" for "--tag" flag: want key=value`},
		{"", []string{"inspect"}, "inspect takes 1 argument, not 0: jobbie inspect <job-id> [flags]"},
		{"", []string{"cancel", " "}, "the job id is empty"},
		{"", []string{"move", "job_1"}, "move takes 2 arguments, not 1: jobbie move <job-id> <queue> [flags]"},
		{"", []string{"move", "job_1", "no/slash"}, `queue "no/slash" must be`},
		{"", []string{"dead", "--limit", "-1"}, "--limit must not be negative"},
		{"", []string{"pause", "a b"}, `queue "a b" must be`},
		{"", []string{"destroy", "q"}, "destroy q: this deletes for good: add --confirm"},
		{"", []string{"queues", "get"}, "queues get takes 1 argument, not 0"},
		{"", []string{"keys", "create", "--role", "viewer"}, "give the key a --name and a --role"},
		{"", []string{"keys", "create", "--name", "x", "--role", "Root"}, `--role "Root" is neither a built-in role (owner, admin, developer, producer, worker, viewer, billing) nor a custom role's name`},
		{"", []string{"keys", "create", "--name", "x", "--role", "viewer", "--namespaces", "Prod"}, `--namespaces: namespace "Prod" must be`},
		{"", []string{"keys", "create", "--name", "x", "--role", "viewer", "--expires-in", "1h", "--expires-at", "2030-01-01"}, "give --expires-in or --expires-at, not both"},
		{"", []string{"keys", "rotate", "key_1", "--grace", "200h"}, "--grace must be 0 to 168h, not 200h0m0s"},
		{"", []string{"namespaces", "create", "Bad_Name"}, `namespace "Bad_Name" must be`},
		{"", []string{"namespaces", "create", "ok", "--retention", "30s"}, "--retention must be 1m to 87600h, not 30s"},
		{"", []string{"schedules", "get", "a b"}, `schedule id "a b" holds blanks`},
		{"", []string{"status", "-o", "xml"}, "--output must be table, json or yaml, not \"xml\""},
	} {
		out, _, err := runJobbie(t, tc.stdin, append(tc.args, "--url", "http://127.0.0.1:1", "--key", "k")...)
		require.Error(t, err, "%v", tc.args)
		require.ErrorContains(t, err, tc.want, "%v", tc.args)
		require.NotContains(t, err.Error(), "connection refused", "%v", tc.args)
		require.Empty(t, out, "%v", tc.args)
	}
}

// The 403 hint names the built-in roles from the one policy table.
func TestRolesWith(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"owner", "admin", "developer", "producer"}, rolesWith("job.enqueue"))
	require.Equal(t, []string{"owner", "admin", "billing"}, rolesWith("usage.read"))
	require.Equal(t, "owner, admin or billing", orList(rolesWith("usage.read")))
	require.Equal(t, "owner", orList([]string{"owner"}))
}
