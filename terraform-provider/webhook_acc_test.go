package provider_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// TestAccWebhook: an endpoint made with a secret, which signs what the
// handler receives (verified with the secret from the state alone);
// changes in place; a 400 from the API on the attribute it names;
// bad values refused at plan time; import by <namespace>/<id> (with the
// secret null); the data source lists it; destroy deletes it.
func TestAccWebhook(t *testing.T) {
	ns := accNamespace(t, "webhook")
	const addr = "jobbie_webhook.w"
	var (
		mu       sync.Mutex
		received []*http.Request
		bodies   [][]byte
	)
	recv := startReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		received, bodies = append(received, r), append(bodies, b)
		mu.Unlock()
	})
	url := recv.URL + "/events"
	hook := func(body string) string {
		return providerBlock(ns) + fmt.Sprintf(`
resource "jobbie_webhook" "w" {
  url         = %q
  with_secret = true
  %s
}
data "jobbie_webhooks" "all" {
  depends_on = [jobbie_webhook.w]
}
`, url, body)
	}
	first := hook(`events = ["job.enqueued", "job.completed"]
  queues = ["mail.*"]
  description = "mail outcomes"`)
	changed := hook(`events = ["*"]
  enabled = false`)
	held := func(check func(w *client.Webhook) error) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			id := s.RootModule().Resources[addr].Primary.ID
			w, err := api().WithNamespace(ns).GetWebhook(ctx(t), id)
			if err != nil {
				return err
			}
			if err := check(w); err != nil {
				b, _ := json.Marshal(w)
				return fmt.Errorf("%v; the API holds %s", err, b)
			}
			return nil
		}
	}
	var secret, id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(*terraform.State) error {
			ws, err := api().WithNamespace(ns).ListWebhooks(ctx(t))
			if err != nil {
				return err
			}
			if len(ws) != 0 {
				return fmt.Errorf("%d webhooks left", len(ws))
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config:      hook(`events = ["job.nope"]`),
				ExpectError: regexp.MustCompile(`(?s)events\[0\].*value must be one of`),
			},
			{
				Config: providerBlock(ns) + `
resource "jobbie_webhook" "w" {
  url    = "http://127.0.0.1:8443/x"
  events = ["*"]
}`,
				ExpectError: regexp.MustCompile(`must be an https URL`),
			},
			{ // the API's own check: a queue pattern it refuses, on the attribute
				Config:      hook("events = [\"*\"]\n  queues = [\"bad queue\"]"),
				ExpectError: regexp.MustCompile(`(?s)queues\[0\].*Field: queues\[0\]`),
			},
			{
				Config: first,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestMatchResourceAttr(addr, "id", regexp.MustCompile(`^wh_`)),
					resource.TestCheckResourceAttr(addr, "namespace", ns),
					resource.TestCheckResourceAttr(addr, "events.#", "2"),
					resource.TestCheckResourceAttr(addr, "queues.0", "mail.*"),
					resource.TestCheckResourceAttr(addr, "enabled", "true"),
					resource.TestMatchResourceAttr(addr, "secret", regexp.MustCompile(`^whsec_`)),
					resource.TestCheckResourceAttr(addr, "secret_ids.#", "1"),
					resource.TestCheckNoResourceAttr(addr, "disabled_reason"),
					resource.TestCheckResourceAttr("data.jobbie_webhooks.all", "webhooks.#", "1"),
					resource.TestCheckResourceAttrPair("data.jobbie_webhooks.all", "webhooks.0.id", addr, "id"),
					resource.TestCheckResourceAttr("data.jobbie_webhooks.all", "webhooks.0.description", "mail outcomes"),
					resource.TestCheckNoResourceAttr("data.jobbie_webhooks.all", "webhooks.0.secret"),
					held(func(w *client.Webhook) error {
						if w.URL != url || len(w.Events) != 2 || len(w.Queues) != 1 || w.Description != "mail outcomes" || !w.Enabled {
							return fmt.Errorf("not the declared endpoint")
						}
						return nil
					}),
					func(s *terraform.State) error {
						a := s.RootModule().Resources[addr].Primary.Attributes
						secret, id = a["secret"], a["id"]
						return nil
					},
				),
			},
			{ // an enqueue on a subscribed queue reaches the handler, signed with the secret
				PreConfig: func() {
					if _, err := api().WithNamespace(ns).Enqueue(ctx(t), client.EnqueueRequest{Queue: "mail.send", Payload: json.RawMessage(`{}`)}); err != nil {
						t.Fatal(err)
					}
					waitFor(t, "the enqueue's event delivered", func() bool {
						mu.Lock()
						defer mu.Unlock()
						return len(received) > 0
					})
					mu.Lock()
					defer mu.Unlock()
					if err := client.VerifyWebhook(received[0].Header, bodies[0], []string{secret}, 0); err != nil {
						t.Fatalf("the state's secret does not verify the delivery: %v", err)
					}
					var ev wire.CloudEvent
					if err := json.Unmarshal(bodies[0], &ev); err != nil || ev.Type != "dev.jobbie.job.enqueued" {
						t.Fatalf("delivered %s (%v)", bodies[0], err)
					}
				},
				Config:   first,
				PlanOnly: true,
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateIdFunc: func(*terraform.State) (string, error) { return ns + "/" + id, nil },
				ImportStateVerify: true,
				// The API shows a secret only when it is made.
				ImportStateVerifyIgnore: []string{"secret"},
			},
			{ // in place: every event type, every queue, stopped
				Config: changed,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "events.0", "*"),
					resource.TestCheckNoResourceAttr(addr, "queues.#"),
					resource.TestCheckResourceAttr(addr, "description", ""),
					resource.TestCheckResourceAttr(addr, "enabled", "false"),
					func(s *terraform.State) error {
						if got := s.RootModule().Resources[addr].Primary.Attributes["secret"]; got != secret {
							return fmt.Errorf("the secret changed in the state: %q", got)
						}
						return nil
					},
					held(func(w *client.Webhook) error {
						if w.Enabled || len(w.Queues) != 0 || len(w.Events) != 1 || w.Events[0] != "*" || w.Description != "" {
							return fmt.Errorf("not the changed endpoint")
						}
						return nil
					}),
				),
			},
			{ // the API's 400 on the attribute it names, and nothing changed
				Config:      hook("events = [\"*\"]\n  enabled = false\n  description = \"x\"\n  queues = [\"ok\", \"bad queue\"]"),
				ExpectError: regexp.MustCompile(`(?s)queues\[1\].*Field: queues\[1\]`),
			},
			{
				Config:   changed,
				PlanOnly: true,
			},
		},
	})
}
