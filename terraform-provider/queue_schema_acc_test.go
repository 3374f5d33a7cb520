package provider_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/jobbie/jobbie/wire"
)

// putQueueSchema sets queue's payload schema in ns through the API, with
// the owner key (jobbie_queue does not manage schemas yet).
func putQueueSchema(t *testing.T, ns, queue, schema string) {
	t.Helper()
	body := []byte(`{"schema":` + schema + `}`)
	req, err := http.NewRequestWithContext(ctx(t), http.MethodPut, gatewayURL+"/api/v1/queues/"+queue, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ownerKey)
	req.Header.Set(wire.NamespaceHeader, ns)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("PUT /api/v1/queues/%s: %s", queue, res.Status)
	}
}

// A typed queue: the data source shows its schema (canonical JSON) and
// version; a jobbie_queue on it, which does not manage the schema,
// applies without erasing it and plans nothing afterwards.
func TestAccQueueSchemaLeftAsItIs(t *testing.T) {
	ns := accNamespace(t, "qschema")
	putQueueSchema(t, ns, "payments", `{ "type": "object", "required": ["amount"] }`)
	config := providerBlock(ns) + `
resource "jobbie_queue" "payments" {
  name        = "payments"
  description = "typed"
}
data "jobbie_queue" "payments" {
  name       = jobbie_queue.payments.name
  depends_on = [jobbie_queue.payments]
}
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.jobbie_queue.payments", "schema", `{"required":["amount"],"type":"object"}`),
					resource.TestCheckResourceAttr("data.jobbie_queue.payments", "schema_version", "1"),
					resource.TestCheckResourceAttr("data.jobbie_queue.payments", "description", "typed"),
					func(*terraform.State) error {
						q, err := api().WithNamespace(ns).GetQueue(ctx(t), "payments")
						if err != nil {
							return err
						}
						var s map[string]any
						if q.SchemaVersion != 1 || json.Unmarshal(q.Schema, &s) != nil || s["type"] != "object" {
							return fmt.Errorf("the apply changed the schema: version %d, %s", q.SchemaVersion, q.Schema)
						}
						return nil
					},
				),
			},
			{Config: config, PlanOnly: true}, // no diff
		},
	})
}
