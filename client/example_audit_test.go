package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// Export a day of the audit log as JSON lines, following cursors.
func ExampleClient_AuditAll() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	q := client.AuditQuery{AuditFilter: wire.AuditFilter{From: time.Now().Add(-24 * time.Hour)}, Limit: wire.MaxAuditLimit}
	enc := json.NewEncoder(os.Stdout)
	for r, err := range c.AuditAll(ctx, q) {
		if err != nil {
			log.Fatal(err)
		}
		if err := enc.Encode(r); err != nil {
			log.Fatal(err)
		}
	}
}

// Read one page of the refusals of one key, then the next.
func ExampleClient_Audit() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	q := client.AuditQuery{AuditFilter: wire.AuditFilter{KeyID: "key_01", Result: "error"}, Limit: 50}
	page, err := c.Audit(ctx, q)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range page.Records {
		fmt.Println(r.Time.Format(time.RFC3339), r.Route, r.ObjectType, r.ObjectID, r.Result)
	}
	if page.Cursor != "" {
		q.Cursor = page.Cursor
		if _, err := c.Audit(ctx, q); err != nil { // the next page
			log.Fatal(err)
		}
	}
}
