// The tenant's administration (namespaces, keys, roles, usage and
// billing, webhooks, signing keys) as the SDK names it: aliases of the
// types generated from the OpenAPI document (api.gen.ts).

import type * as api from "./api.gen.js";

export type Namespace = api.Namespace;
export type CreateNamespaceRequest = api.NewNamespace;
export type UpdateNamespaceRequest = api.UpdateNamespaceRequest;

export type ApiKey = api.Key;
export type CreateKeyRequest = api.CreateKeyRequest;
/** A created key: its secret ("key") is in this answer only. */
export type CreatedKey = api.CreatedKey;
export type RotatedKey = api.RotatedKey;

export type Permission = api.PermissionInput;
export type Role = api.Role;
export type RoleRequest = api.RoleRequest;

/** GET /api/v1/usage: every meter per namespace and hour or day. */
export type UsageReport = api.Usage;
export type TenantPlan = api.TenantPlan;
export type InvoiceList = api.InvoiceList;
export type Invoice = api.Invoice;

export type WebhookRequest = api.WebhookRequest;
export type Webhook = api.Webhook;
export type WebhookDelivery = api.WebhookDelivery;

/** A namespace's public signing key: verify pushes and webhooks with `public_key`. */
export type SigningKey = api.WebhookKey;
