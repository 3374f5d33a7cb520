package provider_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/jobbie/jobbie/wire"
)

// ownerCall sends body to the gateway as the owner in namespace ns, and
// returns the status and the error's field, if any.
func ownerCall(t *testing.T, method, ns, apiPath, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), method, gatewayURL+apiPath, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ownerKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(wire.NamespaceHeader, ns)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var e struct {
		Error struct {
			Field string `json:"field"`
		} `json:"error"`
	}
	_ = json.NewDecoder(res.Body).Decode(&e)
	return res.StatusCode, e.Error.Field
}

// enqueueChecked enqueues payload to queue over HTTP and checks the
// answer: taken when refusedAt is "", else 400 naming refusedAt.
func enqueueChecked(t *testing.T, ns, queue, payload, refusedAt string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		status, field := ownerCall(t, "POST", ns, "/api/v1/enqueue", `{"queue":"`+queue+`","payload":`+payload+`}`)
		switch {
		case refusedAt == "" && status/100 != 2:
			return fmt.Errorf("enqueue %s: %d (%s), want it taken", payload, status, field)
		case refusedAt != "" && (status != 400 || field != refusedAt):
			return fmt.Errorf("enqueue %s: %d naming %q, want 400 naming %q", payload, status, field, refusedAt)
		}
		return nil
	}
}

// apiSchema checks the schema and version the API holds for queue.
func apiSchema(t *testing.T, ns, queue, want string, version int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		q, err := api().WithNamespace(ns).GetQueue(ctx(t), queue)
		if err != nil {
			return err
		}
		if string(q.Schema) != want || q.SchemaVersion != version {
			return fmt.Errorf("the API holds schema %s version %d, want %s version %d", q.Schema, q.SchemaVersion, want, version)
		}
		return nil
	}
}

// typedQueue is a jobbie_queue with schema (HCL), and the data source
// reading it.
func typedQueue(ns, schema string) string {
	return providerBlock(ns) + `
resource "jobbie_queue" "payments" {
  name        = "payments"
  description = "typed"
` + schema + `
}
data "jobbie_queue" "payments" {
  name       = jobbie_queue.payments.name
  depends_on = [jobbie_queue.payments]
}
`
}

// The schema as a person writes it: keys out of order, spaces, newlines.
const paymentSchema = `  schema = <<-EOT
    {
      "type": "object",
      "required": ["order_id", "amount"],
      "properties": {
        "order_id": { "type": "string" },
        "amount":   { "type": "integer", "minimum": 0 }
      }
    }
  EOT`

const paymentCanonical = `{"properties":{"amount":{"minimum":0,"type":"integer"},"order_id":{"type":"string"}},` +
	`"required":["order_id","amount"],"type":"object"}`

// The same rules in another layout, and a changed rule.
const (
	paymentRespelled = `  schema = jsonencode({ required = ["order_id", "amount"], type = "object",
    properties = { amount = { minimum = 0, type = "integer" }, order_id = { type = "string" } } })`
	paymentChanged = `  schema = jsonencode({ type = "object", required = ["order_id", "amount"],
    properties = { order_id = { type = "string" }, amount = { type = "integer", minimum = 1 } } })`
	paymentChangedCanonical = `{"properties":{"amount":{"minimum":1,"type":"integer"},"order_id":{"type":"string"}},` +
		`"required":["order_id","amount"],"type":"object"}`
)

// A typed queue round-trips through Terraform without a diff: created
// with a schema laid out by hand, stored canonical, planned as no change
// (also against the canonical form an import reads, and another layout
// of the same rules); an enqueue it refuses is a 400 naming the JSON
// pointer; a changed schema takes the next version, which the plan shows
// as unknown (and as known while only other settings change); a change
// made outside Terraform shows in the plan and an apply undoes it; a bad
// schema is refused naming the attribute, changing nothing; removing the
// attribute removes the schema.
func TestAccQueueSchema(t *testing.T) {
	ns := accNamespace(t, "qschema")
	const addr = "jobbie_queue.payments"
	version := tfjsonpath.New("schema_version")
	good, bad := `{"order_id":"o1","amount":0}`, `{"order_id":"o1","amount":-5}`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             queueGone(ns, "payments"),
		Steps: []resource.TestStep{
			{
				Config: typedQueue(ns, paymentSchema),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "schema_version", "1"),
					resource.TestCheckResourceAttr("data.jobbie_queue.payments", "schema", paymentCanonical),
					resource.TestCheckResourceAttr("data.jobbie_queue.payments", "schema_version", "1"),
					apiSchema(t, ns, "payments", paymentCanonical, 1),
					enqueueChecked(t, ns, "payments", bad, "payload/amount"),
					enqueueChecked(t, ns, "payments", `{"amount":1}`, "payload"),
					enqueueChecked(t, ns, "payments", good, ""),
				),
			},
			{Config: typedQueue(ns, paymentSchema), PlanOnly: true}, // no diff
			{Config: typedQueue(ns, paymentRespelled), PlanOnly: true},
			{
				ResourceName:            addr,
				ImportState:             true,
				ImportStateId:           ns + "/payments",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"schema"}, // the state holds the configuration's layout
				ImportStateCheck: func(s []*terraform.InstanceState) error {
					if len(s) != 1 || s[0].Attributes["schema"] != paymentCanonical || s[0].Attributes["schema_version"] != "1" {
						return fmt.Errorf("imported %v", s)
					}
					return nil
				},
			},
			{ // an import block: the canonical form read is no change from the layout written
				Config:          typedQueue(ns, paymentSchema),
				ResourceName:    addr,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   ns + "/payments",
			},
			{ // another setting changes: the version is known, and stays
				Config: providerBlock(ns) + `
resource "jobbie_queue" "payments" {
  name        = "payments"
  description = "typed payments"
` + paymentSchema + `
}`,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(addr, version, knownvalue.Int64Exact(1)),
				}},
				Check: apiSchema(t, ns, "payments", paymentCanonical, 1),
			},
			{ // the schema changes: the next version
				Config: typedQueue(ns, paymentChanged),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(addr, version),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "schema_version", "2"),
					resource.TestCheckResourceAttr("data.jobbie_queue.payments", "schema", paymentChangedCanonical),
					apiSchema(t, ns, "payments", paymentChangedCanonical, 2),
					enqueueChecked(t, ns, "payments", good, "payload/amount"),
					enqueueChecked(t, ns, "payments", `{"order_id":"o2","amount":1}`, ""),
				),
			},
			{Config: typedQueue(ns, paymentChanged), PlanOnly: true},
			{ // changed outside Terraform: the plan shows it
				PreConfig: func() {
					if status, field := ownerCall(t, "PUT", ns, "/api/v1/queues/payments", `{"description":"typed","schema":{"type":"object"}}`); status != 200 {
						t.Fatalf("PUT the queue: %d %s", status, field)
					}
				},
				Config:             typedQueue(ns, paymentChanged),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{ // and an apply puts it back, as the next version
				Config: typedQueue(ns, paymentChanged),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "schema_version", "4"),
					apiSchema(t, ns, "payments", paymentChangedCanonical, 4),
				),
			},
			{ // a schema the API refuses names the attribute; nothing changes
				Config:      typedQueue(ns, `  schema = jsonencode({ type = "nope" })`),
				ExpectError: regexp.MustCompile(`(?s)schema.*not a valid JSON Schema`),
			},
			{ // refused at plan time: not a schema, not JSON
				PreConfig: func() {
					if err := apiSchema(t, ns, "payments", paymentChangedCanonical, 4)(nil); err != nil {
						t.Fatalf("after the refused apply: %v", err)
					}
				},
				Config:      typedQueue(ns, `  schema = "[1]"`),
				ExpectError: regexp.MustCompile(`A JSON Schema is an object or a boolean`),
			},
			{
				Config:      typedQueue(ns, `  schema = "{"`),
				ExpectError: regexp.MustCompile(`Invalid JSON String Value`),
			},
			{ // the attribute removed: the schema is removed, version 0
				Config: typedQueue(ns, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(addr, version, knownvalue.Int64Exact(0)),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					apiSchema(t, ns, "payments", "null", 0),
					resource.TestCheckNoResourceAttr(addr, "schema"),
					resource.TestCheckNoResourceAttr("data.jobbie_queue.payments", "schema"),
					enqueueChecked(t, ns, "payments", bad, ""),
				),
			},
			{
				Config:   typedQueue(ns, ""),
				PlanOnly: true,
				PreConfig: func() { // so that the destroy finds the queue empty
					if _, err := api().WithNamespace(ns).ClearQueue(ctx(t), "payments"); err != nil {
						t.Fatal(err)
					}
				},
			},
		},
	})
}
