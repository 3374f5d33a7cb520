package client_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/jobbie/jobbie/client"
)

// Find jobs page by page: each page's Cursor asks for the next, and
// SearchPages follows them until the last page.
func ExampleClient_SearchPages() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	req := client.SearchRequest{Limit: 100, SearchFilter: client.SearchFilter{
		Queue: "emails.send", State: []string{client.StateDead}, PayloadJQ: `.to | endswith("@example.com")`}}
	for page, err := range c.SearchPages(ctx, req) {
		if err != nil {
			log.Fatal(err)
		}
		for _, job := range page.Jobs {
			fmt.Println(job.ID, job.LastError)
		}
		fmt.Println("next page:", page.Cursor) // "" on the last
	}
}

// Act on every job a filter selects. A small selection is done at once;
// a large one runs in the background, and WatchBulk follows its progress
// until it is done.
func ExampleClient_WatchBulk() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	done, started, err := c.Bulk(ctx, client.BulkRequest{
		Action: client.BulkRetry,
		Filter: &client.SearchFilter{Queue: "emails.send", State: []string{client.StateDead}},
	})
	if err != nil {
		log.Fatal(err)
	}
	if done != nil {
		fmt.Println("retried", done.Affected, "at once")
		return
	}
	final, err := c.WatchBulk(ctx, started.ID, func(op client.BulkOperation) {
		fmt.Printf("%d of about %d\n", op.Processed, op.Total)
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(final.Status, final.Affected, final.Skipped, final.Errors)
}
