package provider_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/jobbie/jobbie/wire"
)

// alertRules reads namespace ns's alert rules from the API, with the
// owner key.
func alertRules(t *testing.T, ns string) ([]wire.AlertRule, error) {
	req, err := http.NewRequestWithContext(ctx(t), http.MethodGet, gatewayURL+"/api/v1/alerts", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+ownerKey)
	req.Header.Set(wire.NamespaceHeader, ns)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return nil, fmt.Errorf("GET /api/v1/alerts: %s", res.Status)
	}
	var l wire.AlertRuleList
	return l.Alerts, json.NewDecoder(res.Body).Decode(&l)
}

// TestAccAlertRule: a rule made as declared; another spelling of its
// duration plans nothing; changes in place; the API's 400 on the
// attribute it names, and bad values refused at plan time; import by
// <namespace>/<name>; destroy deletes it.
func TestAccAlertRule(t *testing.T) {
	ns := accNamespace(t, "alert")
	const addr = "jobbie_alert_rule.r"
	rule := func(body string) string {
		return providerBlock(ns) + fmt.Sprintf(`
resource "jobbie_alert_rule" "r" {
  name = "backlog"
  %s
}
`, body)
	}
	first := rule(`kind      = "queue_depth_above"
  queue     = "emails"
  threshold = 100
  for       = "5m"`)
	changed := rule(`kind      = "failure_rate_above"
  queue     = "emails"
  threshold = 20
  for       = "10m"
  min_count = 50
  enabled   = false`)
	held := func(check func(a wire.AlertRule) error) resource.TestCheckFunc {
		return func(*terraform.State) error {
			rs, err := alertRules(t, ns)
			if err != nil {
				return err
			}
			if len(rs) != 1 {
				return fmt.Errorf("%d rules held", len(rs))
			}
			if err := check(rs[0]); err != nil {
				b, _ := json.Marshal(rs[0])
				return fmt.Errorf("%v; the API holds %s", err, b)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(*terraform.State) error {
			rs, err := alertRules(t, ns)
			if err != nil {
				return err
			}
			if len(rs) != 0 {
				return fmt.Errorf("%d rules left", len(rs))
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config:      rule(`kind = "louder_than"` + "\n  for = \"1m\""),
				ExpectError: regexp.MustCompile(`(?s)kind.*value must be one of`),
			},
			{
				Config:      rule(`kind = "queue_depth_above"` + "\n  for = \"soon\""),
				ExpectError: regexp.MustCompile(`"soon" is not a duration`),
			},
			{ // the API's own check, on the attribute it names
				Config:      rule(`kind = "failure_rate_above"` + "\n  for = \"1m\""),
				ExpectError: regexp.MustCompile(`(?s)threshold.*Field: threshold`),
			},
			{
				Config: first,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", ns+"/backlog"),
					resource.TestCheckResourceAttr(addr, "namespace", ns),
					resource.TestCheckResourceAttr(addr, "kind", "queue_depth_above"),
					resource.TestCheckResourceAttr(addr, "enabled", "true"),
					resource.TestCheckNoResourceAttr(addr, "min_count"),
					held(func(a wire.AlertRule) error {
						if a.Name != "backlog" || a.Kind != wire.AlertQueueDepth || a.Queue != "emails" || a.Threshold != 100 || a.For != "5m" || !a.Enabled {
							return fmt.Errorf("not the declared rule")
						}
						return nil
					}),
				),
			},
			{ // the same duration spelt otherwise
				Config:   rule(`kind = "queue_depth_above"` + "\n  queue = \"emails\"\n  threshold = 100\n  for = \"300s\""),
				PlanOnly: true,
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     ns + "/backlog",
				ImportStateVerify: true,
			},
			{ // in place: another kind, its minimum count, disabled
				Config: changed,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "min_count", "50"),
					resource.TestCheckResourceAttr(addr, "enabled", "false"),
					held(func(a wire.AlertRule) error {
						if a.Kind != wire.AlertFailureRate || a.Threshold != 20 || a.MinCount != 50 || a.For != "10m" || a.Enabled {
							return fmt.Errorf("not the changed rule")
						}
						return nil
					}),
				),
			},
			{ // the API's 400 on an update, and nothing changed
				Config:      rule(`kind = "failure_rate_above"` + "\n  queue = \"emails\"\n  threshold = 0\n  for = \"10m\"\n  min_count = 50\n  enabled = false"),
				ExpectError: regexp.MustCompile(`(?s)threshold.*Field: threshold`),
			},
			{
				Config:   changed,
				PlanOnly: true,
			},
		},
	})
}
