package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// `jobbie workers drain <id>` against jobbie dev: the worker's next fetch
// gets ErrWorkerDraining and `jobbie workers` shows it draining; bad
// input is refused before any request, an unseen worker is a 404.
func TestCLIWorkersDrain(t *testing.T) {
	t.Parallel()
	c, ct := shared.tenant(t)
	env := cliEnv(ct.OwnerKey)
	j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"q"}, WorkerID: "cli-w1", Timeout: time.Second})
	require.NoError(t, err)
	require.Nil(t, j)

	r := jobbie(t, env, nil, "workers", "drain", "cli-w1")
	requireOK(t, r, "drain")
	require.Contains(t, r.stdout, "worker cli-w1 draining")
	r = jobbie(t, env, nil, "workers", "drain", "cli-w1", "-o", "json")
	requireOK(t, r, "drain -o json")
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.Equal(t, map[string]any{"worker_id": "cli-w1", "draining": true}, out)

	_, err = c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"q"}, WorkerID: "cli-w1", Timeout: 10 * time.Second})
	require.ErrorIs(t, err, client.ErrWorkerDraining)
	r = jobbie(t, env, nil, "workers")
	requireOK(t, r, "workers")
	require.Contains(t, r.stdout, "active (draining)")

	requireFails(t, jobbie(t, env, nil, "workers", "drain", "nobody-seen"), "unseen worker", "404", "nobody-seen")
	requireFails(t, jobbie(t, env, nil, "workers", "drain"), "no id", "1 argument")
	// Refused before any request: no key is needed to be told.
	requireFails(t, jobbie(t, cliEnv("", "JOBBIE_URL=http://127.0.0.1:1"), nil, "workers", "drain", strings.Repeat("w", 300)),
		"overlong id", "worker id")
}
