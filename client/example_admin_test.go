package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// Follow the namespace's job events as Server-Sent Events, resuming
// after the last one seen whenever the stream breaks: Missed says the
// server no longer had every event since.
func ExampleClient_Events() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	last := "" // from the next event on; a saved ID resumes after it
	for {
		events, err := c.Events(ctx, last)
		if err != nil {
			log.Fatal(err)
		}
		for e := range events {
			if e.Missed {
				fmt.Println("some events were missed before", e.ID)
			}
			fmt.Println(e.Type, e.JobID, e.Queue)
			last = e.ID
		}
		if ctx.Err() != nil {
			return
		}
		time.Sleep(time.Second) // the stream broke: open it again after the last event
	}
}

// Create a namespace and act in it: a client's WithNamespace sends its
// requests there (the key must allow it).
func ExampleClient_CreateNamespaceWith() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	ns, err := c.CreateNamespaceWith(ctx, client.CreateNamespaceRequest{
		Name: "billing", Description: "invoices and payments", Retention: 30 * 24 * time.Hour, DeletionProtection: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	billing := c.WithNamespace(ns.Name)
	if _, err := billing.Enqueue(ctx, client.EnqueueRequest{Queue: "invoices.render", Payload: "inv_1"}); err != nil {
		log.Fatal(err)
	}
}

// Mint a key for a CI job that may only enqueue, in one namespace, for a
// month. Its secret is shown once, in this answer.
func ExampleClient_CreateKey() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	expires := time.Now().AddDate(0, 1, 0)
	k, err := c.CreateKey(ctx, client.CreateKeyRequest{
		Name: "ci", Role: wire.RoleProducer, Namespaces: []string{"billing"}, ExpiresAt: &expires,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(k.ID, k.Role)
	_ = k.Token // the API key to hand to the CI job

	keys, err := c.ListKeys(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(keys), "keys")
}

// A custom role: work and read jobs of the emails.* queues only, in every
// namespace; then a key that carries it.
func ExampleClient_CreateRole() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	role, err := c.CreateRole(ctx, client.Role{
		Name:        "email-worker",
		Description: "works the email queues",
		Permissions: []client.Permission{{
			Actions:    []string{string(wire.ActJobWork), string(wire.ActJobRead)},
			Namespaces: []string{"*"},
			Queues:     []string{"emails.*"},
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.CreateKey(ctx, client.CreateKeyRequest{Name: "mailer", Role: wire.RoleName(role.Name)}); err != nil {
		log.Fatal(err)
	}
}

// The tenant's usage by day for the last week, per namespace.
func ExampleClient_GetUsage() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	u, err := c.GetUsage(ctx, client.UsageQuery{From: time.Now().AddDate(0, 0, -7), Granularity: client.GranularityDay})
	if err != nil {
		log.Fatal(err)
	}
	for _, ns := range u.Namespaces {
		fmt.Println(ns.Namespace, ns.Totals.Executions, ns.Totals.ActiveJobSeconds)
	}
	fmt.Println("api requests:", u.Totals.APIRequests)
}
