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

// budgets reads namespace ns's AI budgets from the API, with the owner
// key.
func budgets(t *testing.T, ns string) ([]wire.Budget, error) {
	req, err := http.NewRequestWithContext(ctx(t), http.MethodGet, gatewayURL+"/api/v1/ai/budgets", nil)
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
		return nil, fmt.Errorf("GET /api/v1/ai/budgets: %s", res.Status)
	}
	var l wire.BudgetList
	return l.Budgets, json.NewDecoder(res.Body).Decode(&l)
}

// TestAccBudget: a budget made as declared, its cost kept as spelt; the
// same configuration plans nothing; changes in place; the API's 400 on
// the attribute it names, and bad values refused at plan time; import
// by <namespace>/<name>; destroy deletes it.
func TestAccBudget(t *testing.T) {
	ns := accNamespace(t, "budget")
	const addr = "jobbie_budget.b"
	budget := func(body string) string {
		return providerBlock(ns) + fmt.Sprintf(`
resource "jobbie_budget" "b" {
  name = "llm-daily"
  %s
}
`, body)
	}
	first := budget(`scope          = "queue"
  queue          = "summaries"
  daily_cost_usd = "25.50"
  on_exceed      = "hold"`)
	changed := budget(`scope            = "tag"
  tag              = "team=search"
  daily_tokens     = 2000000
  per_job_cost_usd = "0.50"
  per_job_tokens   = 40000
  on_exceed        = "reject"`)
	held := func(check func(b wire.Budget) error) resource.TestCheckFunc {
		return func(*terraform.State) error {
			bs, err := budgets(t, ns)
			if err != nil {
				return err
			}
			if len(bs) != 1 {
				return fmt.Errorf("%d budgets held", len(bs))
			}
			if err := check(bs[0]); err != nil {
				b, _ := json.Marshal(bs[0])
				return fmt.Errorf("%v; the API holds %s", err, b)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(*terraform.State) error {
			bs, err := budgets(t, ns)
			if err != nil {
				return err
			}
			if len(bs) != 0 {
				return fmt.Errorf("%d budgets left", len(bs))
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config:      budget(`scope = "everything"` + "\n  daily_tokens = 5\n  on_exceed = \"hold\""),
				ExpectError: regexp.MustCompile(`(?s)scope.*value must be one of`),
			},
			{
				Config:      budget(`scope = "namespace"` + "\n  daily_cost_usd = \"lots\"\n  on_exceed = \"hold\""),
				ExpectError: regexp.MustCompile(`(?s)daily_cost_usd.*must be a non-negative decimal`),
			},
			{ // the API's own check, on the attribute it names
				Config:      budget(`scope = "tag"` + "\n  tag = \"nokey\"\n  daily_tokens = 5\n  on_exceed = \"hold\""),
				ExpectError: regexp.MustCompile(`(?s)tag.*Field: tag`),
			},
			{
				Config: first,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "id", ns+"/llm-daily"),
					resource.TestCheckResourceAttr(addr, "namespace", ns),
					resource.TestCheckResourceAttr(addr, "daily_cost_usd", "25.50"),
					resource.TestCheckResourceAttr(addr, "daily_tokens", "0"),
					resource.TestCheckNoResourceAttr(addr, "per_job_cost_usd"),
					resource.TestCheckResourceAttr(addr, "per_job_tokens", "0"),
					resource.TestCheckResourceAttr(addr, "tag", ""),
					held(func(b wire.Budget) error {
						if b.Name != "llm-daily" || b.Scope != "queue" || b.Queue != "summaries" || b.DailyCostUSD != "25.5" || b.OnExceed != "hold" {
							return fmt.Errorf("not the declared budget")
						}
						return nil
					}),
				),
			},
			{
				Config:   first,
				PlanOnly: true,
			},
			{
				ResourceName:            addr,
				ImportState:             true,
				ImportStateId:           ns + "/llm-daily",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"daily_cost_usd"}, // imported as the API spells it: "25.5"
			},
			{ // in place: another scope, a token limit, reject
				Config: changed,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr(addr, "daily_cost_usd"),
					resource.TestCheckResourceAttr(addr, "daily_tokens", "2000000"),
					resource.TestCheckResourceAttr(addr, "per_job_cost_usd", "0.50"),
					resource.TestCheckResourceAttr(addr, "per_job_tokens", "40000"),
					held(func(b wire.Budget) error {
						if b.Scope != "tag" || b.Tag != "team=search" || b.DailyTokens != 2000000 || b.DailyCostUSD != "" || b.OnExceed != "reject" ||
							b.PerJobCostUSD != "0.5" || b.PerJobTokens != 40000 {
							return fmt.Errorf("not the changed budget")
						}
						return nil
					}),
				),
			},
			{ // the API's 400 on an update (no limit), and nothing changed
				Config:      budget(`scope = "tag"` + "\n  tag = \"team=search\"\n  on_exceed = \"reject\""),
				ExpectError: regexp.MustCompile(`(?s)daily_cost_usd.*Field: daily_cost_usd`),
			},
			{
				Config:   changed,
				PlanOnly: true,
			},
		},
	})
}
