package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
)

var _ datasource.DataSourceWithConfigure = (*signingKeysDataSource)(nil)

// The public keys that sign a namespace's push deliveries and webhooks,
// for handing to the handlers that verify them (an environment variable
// of the service that runs the handler, say).

func newSigningKeysDataSource() datasource.DataSource { return &signingKeysDataSource{} }

type signingKeysDataSource struct{ dataSourceBase }

type signingKeysModel struct {
	Namespace  types.String      `tfsdk:"namespace"`
	Keys       []signingKeyModel `tfsdk:"keys"`
	PublicKeys []string          `tfsdk:"public_keys"`
}

type signingKeyModel struct {
	ID        types.String `tfsdk:"id"`
	Scheme    types.String `tfsdk:"scheme"`
	PublicKey types.String `tfsdk:"public_key"`
	NotAfter  types.String `tfsdk:"not_after"`
}

func (d *signingKeysDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_signing_keys"
}

func (d *signingKeysDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	s := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads the public keys that sign a namespace's push deliveries and webhooks (Standard Webhooks, " +
			"Ed25519; `GET /api/v1/signing-keys`), for the handlers that verify them. The namespace's first key is made on " +
			"its first read. During a rotation's overlap (24 hours) the older key carries `not_after` and signs beside the " +
			"new one: give handlers every key listed. The provider's key needs `webhook.read`. These are not the keys " +
			"that sign API keys.",
		Attributes: map[string]schema.Attribute{
			"namespace": schema.StringAttribute{
				MarkdownDescription: "Namespace. Defaults to the provider's `namespace`.",
				Optional:            true, Computed: true, Validators: []validator.String{namespaceName()},
			},
			"keys": schema.ListNestedAttribute{
				MarkdownDescription: "The keys signing now, oldest first.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"id":         s("The key's id (`whk_…`)."),
					"scheme":     s("`v1a` (Ed25519)."),
					"public_key": s("The public key, `whpk_<base64>`, as verifiers take it."),
					"not_after":  s("When a rotated-out key stops signing (RFC 3339); null for the newest."),
				}},
			},
			"public_keys": schema.ListAttribute{
				MarkdownDescription: "Every `public_key` of `keys`, in the same order.",
				ElementType:         types.StringType,
				Computed:            true,
			},
		},
	}
}

func (d *signingKeysDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	m, ok := load[signingKeysModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	ns := d.namespace(m.Namespace)
	keys, ok := readCall(ctx, &resp.Diagnostics, "Could not read the signing keys of "+ns, nil,
		func() ([]client.WebhookKey, error) { return d.p.in(ns).WebhookSigningKeys(ctx) })
	if !ok {
		return
	}
	m.Namespace = types.StringValue(ns)
	m.Keys, m.PublicKeys = make([]signingKeyModel, 0, len(keys)), make([]string, 0, len(keys))
	for _, k := range keys {
		m.Keys = append(m.Keys, signingKeyModel{ID: types.StringValue(k.ID), Scheme: types.StringValue(k.Scheme),
			PublicKey: types.StringValue(k.Key), NotAfter: timeValue(k.NotAfter)})
		m.PublicKeys = append(m.PublicKeys, k.Key)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}
