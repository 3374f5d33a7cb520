// The tenant's administration (namespaces, keys, roles, backups, usage and
// billing, webhooks, signing keys) as the SDK names it: aliases of the
// types generated from the OpenAPI document (api.gen.ts).

import type * as api from "./api.gen.js";

export type Namespace = api.Namespace;
export type CreateNamespaceRequest = api.NewNamespace;
export type UpdateNamespaceRequest = api.UpdateNamespaceRequest;

/** A namespace's encryption at rest (docs/api/encryption.md): never a key; tenant_key_id names the tenant's. */
export type Encryption = api.Encryption;
/** A change to it: fields left out keep their value; tenant_key is sent, never answered back. */
export type EncryptionRequest = api.EncryptionRequest;
export type EncryptionRevokedKey = api.EncryptionRevokedKey;

export type ApiKey = api.Key;
export type CreateKeyRequest = api.CreateKeyRequest;
/** A created key: its secret ("key") is in this answer only. */
export type CreatedKey = api.CreatedKey;
export type RotatedKey = api.RotatedKey;

export type Permission = api.PermissionInput;
export type Role = api.Role;
export type RoleRequest = api.RoleRequest;

/** A backup in the catalog: `state` running, then completed or failed. */
export type Backup = api.Backup;

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

/** A namespace's alert rule with its state (docs/api/alerts.md). */
export type AlertRule = api.AlertRule;
/** POST /api/v1/alerts (name required) and PUT /api/v1/alerts/{name} (the whole rule). */
export type AlertRuleRequest = api.AlertRuleRequest;
export type AlertRuleKind = api.AlertRuleRequest["kind"];
export type AlertQueue = api.AlertQueue;
export type AlertValue = api.AlertValue;

/** One record of the audit log (docs/api/audit.md). */
export type AuditRecord = api.AuditRecord;
/** A page of the audit log, oldest first; no cursor means nothing more. */
export type AuditPage = api.AuditPage;
