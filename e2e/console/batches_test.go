package console

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// The Batches screen lists the namespace's batches from the API, newest
// first, twenty a page: 23 batches are two pages, the oldest on the
// second, and a fired batch shows its callback job's state.
func TestConsoleBatchesListPages(t *testing.T) {
	t.Parallel()
	tn := newTenant(t)
	var ids []string
	for i := range 23 {
		br, err := tn.owner.EnqueueBatch(ctx(t), client.BatchRequest{
			Jobs:  []client.EnqueueRequest{{Queue: "bl.work", Payload: map[string]int{"n": i}}},
			Batch: &client.BatchOptions{CallbackQueue: "bl.done"}})
		require.NoError(t, err)
		ids = append(ids, br.BatchID)
	}
	// The oldest batch fires: its one job completes.
	first, err := tn.owner.GetBatch(ctx(t), ids[0])
	require.NoError(t, err)
	require.Equal(t, 1, first.Pending)
	j, err := tn.owner.ForWorker("w-bl").Fetch(ctx(t), client.FetchRequest{Queues: []string{"bl.work"}})
	require.NoError(t, err)
	require.NotNil(t, j)
	require.NoError(t, tn.owner.ForWorker("w-bl").Ack(ctx(t), j.ID, nil))
	fired, err := tn.owner.GetBatch(ctx(t), ids[0])
	require.NoError(t, err)
	require.NotNil(t, fired.CallbackJobID, "the oldest batch's job came first, and its batch fired")

	p := signedIn(t, tn.ownerKey, "/console/batches", "batches")
	p.waitFor("#batches-table")
	assert.Equal(t, 20, p.count("#batches-table tbody tr"), "a page of twenty")
	firstRow := p.text("#batches-table tbody tr:first-child")
	assert.Contains(t, firstRow, ids[22], "newest first")
	assert.Contains(t, firstRow, "waiting for 1 job")
	assert.NotContains(t, p.text("#batches-table"), ids[0], "the oldest is on the next page")
	p.shot("batches")

	p.click(`nav[aria-label="Pages of batches"] button[aria-label="Next page"]`)
	p.waitText(`nav[aria-label="Pages of batches"]`, "Page 2")
	p.until(waitTimeout, `document.querySelectorAll('#batches-table tbody tr').length === 3`, "the last three batches")
	page2 := p.text("#batches-table")
	for _, id := range ids[:3] {
		assert.Contains(t, page2, id)
	}
	assert.True(t, eval[bool](p, `document.querySelector('nav[aria-label="Pages of batches"] button[aria-label="Next page"]').disabled`), "no page after the last")
	p.waitText(fmt.Sprintf(`#batches-table tbody tr:has(a[href$="%s"])`, ids[0]), "bl.done pending") // its callback job waits in bl.done
	p.click(`nav[aria-label="Pages of batches"] button[aria-label="Previous page"]`)
	p.waitText(`nav[aria-label="Pages of batches"]`, "Page 1")
	p.waitText("#batches-table tbody tr:first-child", ids[22])
}
