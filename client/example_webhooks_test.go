package client_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/jobbie/jobbie/client"
)

// Subscribe an HTTPS endpoint to a namespace's job events, and check
// each request it receives against the namespace's signing keys.
func ExampleClient_CreateWebhook() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", os.Getenv("JOBBIE_KEY"))

	hook, err := c.CreateWebhook(ctx, client.WebhookRequest{
		URL: "https://hooks.example.com/jobbie", Events: []string{"job.completed", "job.dead"}, Queues: []string{"orders.*"},
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.TestWebhook(ctx, hook.ID); err != nil { // one test delivery now
		log.Fatal(err)
	}
	deliveries, err := c.WebhookDeliveries(ctx, hook.ID)
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range deliveries {
		fmt.Println(d.EventID, d.Type, d.Status, d.OK)
	}

	// The receiving side: trust the namespace's public keys (both, during
	// a rotation).
	keys, err := c.WebhookSigningKeys(ctx)
	if err != nil {
		log.Fatal(err)
	}
	var public []string
	for _, k := range keys {
		public = append(public, k.Key)
	}
	verifier, err := client.NewWebhookVerifier(public...)
	if err != nil {
		log.Fatal(err)
	}
	http.HandleFunc("/jobbie", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body) // verify the bytes as received
		if err != nil || verifier.Verify(r.Header, body) != nil {
			http.Error(w, "unverified", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// Verify a signed request: the signature covers the id, the timestamp
// and the exact body, so a changed body fails.
func ExampleWebhookVerifier_Verify() {
	// The namespace's key pair; the server holds the private half and
	// publishes the public one as "whpk_<base64>".
	private := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	public := "whpk_" + base64.StdEncoding.EncodeToString(private.Public().(ed25519.PublicKey))

	sent := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"type":"job.completed","data":{"job_id":"job_1"}}`)
	id, ts := "evt_1", strconv.FormatInt(sent.Unix(), 10)
	header := http.Header{}
	header.Set("webhook-id", id)
	header.Set("webhook-timestamp", ts)
	header.Set("webhook-signature", "v1a,"+base64.StdEncoding.EncodeToString(ed25519.Sign(private, []byte(id+"."+ts+"."+string(body)))))

	v, err := client.NewWebhookVerifier(public)
	if err != nil {
		log.Fatal(err)
	}
	v.Now = func() time.Time { return sent.Add(time.Second) } // received a second later
	fmt.Println(v.Verify(header, body))
	err = v.Verify(header, []byte(`{"type":"job.completed","data":{"job_id":"job_2"}}`))
	fmt.Println(errors.Is(err, client.ErrWebhookUnverified), err)
	// Output:
	// <nil>
	// true client: webhook not verified: no signature matches a trusted key
}
