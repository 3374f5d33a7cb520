// Package provider is the Terraform provider for Jobbie (source address
// jobbie/jobbie). It talks to a Jobbie gateway's public API through the Go
// SDK (client/) only, the way any customer would.
//
// A resource that is one setting of a namespace embeds namespaceSetting,
// one the API keeps under its name in a namespace embeds
// namedInNamespace; they and the other resources and the data sources
// stand on crud.go's plumbing.
package provider

import (
	"context"
	"os"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
)

// Address is the provider's full source address.
const Address = "registry.terraform.io/jobbie/jobbie"

// Environment variables the provider reads when its configuration leaves
// endpoint or api_key out.
const (
	EnvURL    = "JOBBIE_URL"
	EnvAPIKey = "JOBBIE_API_KEY"
)

// DefaultEndpoint is the gateway `jobbie dev` (make dev) serves.
const DefaultEndpoint = "http://127.0.0.1:8080"

var _ provider.Provider = (*jobbieProvider)(nil)

type jobbieProvider struct{ version string }

// New returns the provider factory for version (the release, or "dev").
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &jobbieProvider{version: version} }
}

type providerModel struct {
	Endpoint  types.String `tfsdk:"endpoint"`
	APIKey    types.String `tfsdk:"api_key"`
	Namespace types.String `tfsdk:"namespace"`
}

func (p *jobbieProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "jobbie"
	resp.Version = p.version
}

func (p *jobbieProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Manages a Jobbie tenant's namespaces, queues, schedules, API keys and self-hosted shards through the " +
			"gateway's public API (`/api/v1`), authenticated with an API key.",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				MarkdownDescription: "Base URL of the Jobbie gateway, e.g. `https://jobbie.example.com`. " +
					"Defaults to the `" + EnvURL + "` environment variable, else `" + DefaultEndpoint + "` (`make dev`).",
				Optional:   true,
				Validators: []validator.String{endpointValidator{}},
			},
			"api_key": schema.StringAttribute{
				MarkdownDescription: "API key to authenticate with. Defaults to the `" + EnvAPIKey + "` environment variable. " +
					"What the provider may manage follows the key's role (an `owner` or `admin` key can manage everything).",
				Optional:  true,
				Sensitive: true,
			},
			"namespace": schema.StringAttribute{
				MarkdownDescription: "Namespace for resources and data sources that do not set their own `namespace`. " +
					"Defaults to the API key's default namespace.",
				Optional:   true,
				Validators: []validator.String{namespaceName()},
			},
		},
	}
}

func (p *jobbieProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	for attr, v := range map[string]types.String{"endpoint": cfg.Endpoint, "api_key": cfg.APIKey, "namespace": cfg.Namespace} {
		if v.IsUnknown() {
			resp.Diagnostics.AddAttributeError(path.Root(attr), "Unknown provider "+attr,
				"The provider's "+attr+" depends on a value not known until apply. Set it from a known value, "+
					"or apply the resources it depends on first (terraform apply -target).")
		}
	}
	if resp.Diagnostics.HasError() {
		return
	}
	endpoint := firstSet(cfg.Endpoint.ValueString(), os.Getenv(EnvURL), DefaultEndpoint)
	key := firstSet(cfg.APIKey.ValueString(), os.Getenv(EnvAPIKey))
	if key == "" {
		resp.Diagnostics.AddAttributeError(path.Root("api_key"), "Missing API key",
			"Set api_key in the provider block or the "+EnvAPIKey+" environment variable. With `make dev`, "+
				"the owner key of tenant default is in jobbie-data/owner.key.")
		return
	}
	ns := cfg.Namespace.ValueString()
	if ns == "" {
		ns = keyDefaultNamespace(key)
	}
	ua := "terraform-provider-jobbie/" + p.version
	data := &providerData{
		client:    client.New(endpoint, key, client.WithUserAgent(ua)),
		namespace: ns,
	}
	resp.ResourceData = data
	resp.DataSourceData = data
}

func (p *jobbieProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		newScheduleResource,
		newAPIKeyResource,
		newQueueResource,
		newNamespaceResource,
		newRoleResource,
		newBackupPolicyResource,
		newNamespaceEgressResource,
		newTracingResource,
		newSSOResource,
		newNamespaceEncryptionResource,
		newShardJoinTokenResource,
		newWebhookResource,
		newAlertRuleResource,
		newBudgetResource,
	}
}

func (p *jobbieProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		newNamespaceDataSource,
		newRoleDataSource,
		newQueueDataSource,
		newQueuesDataSource,
		newShardsDataSource,
		newSigningKeysDataSource,
		newWebhooksDataSource,
	}
}

func firstSet(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
