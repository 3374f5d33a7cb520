package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jobbie/jobbie/client"
)

// Watch a queue's backlog: the rule fires when more than 1,000 jobs have
// been pending for five minutes, as the webhook event alert.firing.
func ExampleClient_CreateAlertRule() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	rule, err := c.CreateAlertRule(ctx, client.AlertRuleRequest{
		Name: "backlog", Kind: client.AlertQueueDepth, Queue: "emails", Threshold: 1000, For: "5m",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rule.Name, rule.State)

	rules, err := c.ListAlertRules(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rules {
		for _, f := range r.Firing {
			fmt.Printf("%s fires on %s since %s (value %g)\n", r.Name, f.Queue, f.Since.Format(time.RFC3339), f.Value)
		}
	}
}
