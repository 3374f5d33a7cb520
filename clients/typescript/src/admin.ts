// The tenant's own administration: namespaces, API keys, roles, usage
// and billing, lifecycle webhooks, and the namespace's signing keys.

import type { CallOptions, Transport } from "./http.js";
import type * as api from "./api.gen.js";
import type { Duration } from "./types.js";
import type {
  ApiKey, CreatedKey, CreateKeyRequest, CreateNamespaceRequest, Invoice, InvoiceList, Namespace, Role, RoleRequest,
  RotatedKey, SigningKey, TenantPlan, UpdateNamespaceRequest, UsageReport, Webhook, WebhookDelivery, WebhookRequest,
} from "./types-admin.js";

const enc = encodeURIComponent;
type Query = Record<string, string | number | boolean | undefined>;

class Family {
  constructor(protected readonly t: Transport) {}
  protected async read<T>(path: string, co?: CallOptions, query?: Query): Promise<T> {
    return (await this.t.call<T>({ method: "GET", path, query }, co)).data;
  }
  protected async send<T>(method: string, path: string, body?: unknown, co?: CallOptions, retry = false, query?: Query): Promise<T> {
    return (await this.t.call<T>({ method, path, body, retry, query }, co)).data;
  }
}

/** Namespaces (docs/api/namespaces.md). */
export class Namespaces extends Family {
  async list(co?: CallOptions): Promise<Namespace[]> {
    return (await this.read<api.NamespaceList>("/api/v1/namespaces", co)).namespaces ?? [];
  }
  create(req: CreateNamespaceRequest, co?: CallOptions): Promise<Namespace> { return this.send("POST", "/api/v1/namespaces", req, co); }
  getOne(name: string, co?: CallOptions): Promise<Namespace> { return this.read(`/api/v1/namespaces/${enc(name)}`, co); }
  /** Changes description, retention or deletion_protection. */
  update(name: string, patch: UpdateNamespaceRequest, co?: CallOptions): Promise<Namespace> {
    return this.send("PATCH", `/api/v1/namespaces/${enc(name)}`, patch, co);
  }
  /** Deletes it; force with its jobs, queues and schedules. */
  async delete(name: string, opts: { force?: boolean } & CallOptions = {}): Promise<void> {
    await this.send("DELETE", `/api/v1/namespaces/${enc(name)}`, undefined, opts, false, { force: opts.force || undefined });
  }
  async getEgress(name: string, co?: CallOptions): Promise<string[]> {
    return (await this.read<api.NamespaceEgress>(`/api/v1/namespaces/${enc(name)}/egress`, co)).egress_allow ?? [];
  }
  async setEgress(name: string, allow: string[] | null, co?: CallOptions): Promise<string[]> {
    const body: api.NamespaceEgressRequest = { egress_allow: allow };
    return (await this.send<api.NamespaceEgress>("PUT", `/api/v1/namespaces/${enc(name)}/egress`, body, co)).egress_allow ?? [];
  }
}

/** API keys (docs/api/keys-and-roles.md). */
export class Keys extends Family {
  async list(co?: CallOptions): Promise<ApiKey[]> { return (await this.read<api.KeyList>("/api/v1/keys", co)).keys ?? []; }
  /** Creates a key; its secret (`key`) is in this answer only. */
  create(req: CreateKeyRequest, co?: CallOptions): Promise<CreatedKey> { return this.send("POST", "/api/v1/keys", req, co); }
  getOne(id: string, co?: CallOptions): Promise<ApiKey> { return this.read(`/api/v1/keys/${enc(id)}`, co); }
  /** Revokes a key: refused within seconds. */
  async revoke(id: string, co?: CallOptions): Promise<void> { await this.send("DELETE", `/api/v1/keys/${enc(id)}`, undefined, co); }
  /** A new secret; the old one works for gracePeriod. */
  rotate(id: string, gracePeriod?: Duration, co?: CallOptions): Promise<RotatedKey> {
    return this.send("POST", `/api/v1/keys/${enc(id)}/rotate`, gracePeriod === undefined ? {} : { grace_period: gracePeriod }, co);
  }
}

/** Built-in and custom roles. */
export class Roles extends Family {
  async list(co?: CallOptions): Promise<Role[]> { return (await this.read<api.RoleList>("/api/v1/roles", co)).roles ?? []; }
  create(req: RoleRequest & { name: string }, co?: CallOptions): Promise<Role> { return this.send("POST", "/api/v1/roles", req, co); }
  getOne(name: string, co?: CallOptions): Promise<Role> { return this.read(`/api/v1/roles/${enc(name)}`, co); }
  /** Replaces a custom role's description and permissions. */
  update(name: string, req: RoleRequest, co?: CallOptions): Promise<Role> { return this.send("PUT", `/api/v1/roles/${enc(name)}`, req, co); }
  /** Deletes a custom role (409 role_in_use while live keys carry it). */
  async delete(name: string, co?: CallOptions): Promise<void> { await this.send("DELETE", `/api/v1/roles/${enc(name)}`, undefined, co); }
}

/** The query of GET /api/v1/usage. */
export interface UsageQuery {
  /** Only this namespace's. */
  namespace?: string;
  /** Start: RFC 3339 or YYYY-MM-DD. */
  from?: string;
  /** End: RFC 3339 or YYYY-MM-DD. */
  to?: string;
  granularity?: api.Usage["granularity"];
}

/** Usage, plan and invoices (docs/api/usage-and-billing.md). */
export class Usage extends Family {
  /** Every meter per namespace and hour or day, and the tenant's totals. */
  get(query: UsageQuery = {}, co?: CallOptions): Promise<UsageReport> { return this.read("/api/v1/usage", co, { ...query }); }
  plan(co?: CallOptions): Promise<TenantPlan> { return this.read("/api/v1/plan", co); }
  /** Every month of the tenant, the running one first. */
  invoices(co?: CallOptions): Promise<InvoiceList> { return this.read("/api/v1/invoices", co); }
  upcomingInvoice(co?: CallOptions): Promise<Invoice> { return this.read("/api/v1/invoices/upcoming", co); }
  invoice(id: string, co?: CallOptions): Promise<Invoice> { return this.read(`/api/v1/invoices/${enc(id)}`, co); }
  /** The invoice as CSV text. */
  invoiceCSV(id: string, co?: CallOptions): Promise<string> { return this.read(`/api/v1/invoices/${enc(id)}/csv`, co); }
}

/** Lifecycle webhook endpoints (docs/api/webhooks.md). */
export class Webhooks extends Family {
  async list(co?: CallOptions): Promise<Webhook[]> { return (await this.read<api.WebhookList>("/api/v1/webhooks", co)).webhooks ?? []; }
  create(req: WebhookRequest, co?: CallOptions): Promise<Webhook> { return this.send("POST", "/api/v1/webhooks", req, co); }
  getOne(id: string, co?: CallOptions): Promise<Webhook> { return this.read(`/api/v1/webhooks/${enc(id)}`, co); }
  update(id: string, req: WebhookRequest, co?: CallOptions): Promise<Webhook> { return this.send("PUT", `/api/v1/webhooks/${enc(id)}`, req, co); }
  async delete(id: string, co?: CallOptions): Promise<void> { await this.send("DELETE", `/api/v1/webhooks/${enc(id)}`, undefined, co); }
  /** Its last 50 delivery attempts, newest first. */
  async deliveries(id: string, co?: CallOptions): Promise<WebhookDelivery[]> {
    return (await this.read<api.WebhookDeliveryList>(`/api/v1/webhooks/${enc(id)}/deliveries`, co)).deliveries ?? [];
  }
  /** A new whsec_ secret, in this answer only. */
  rotateSecret(id: string, co?: CallOptions): Promise<Webhook> { return this.send("POST", `/api/v1/webhooks/${enc(id)}/rotate-secret`, undefined, co); }
  /** Sends a dev.jobbie.test event now; answers the attempt. */
  test(id: string, co?: CallOptions): Promise<WebhookDelivery> { return this.send("POST", `/api/v1/webhooks/${enc(id)}/test`, undefined, co); }
  /** Sends one event of the log again now. */
  redeliver(id: string, eventId: string, co?: CallOptions): Promise<WebhookDelivery> {
    return this.send("POST", `/api/v1/webhooks/${enc(id)}/redeliver`, { event_id: eventId }, co);
  }
}

/** The namespace's public signing keys of push deliveries and webhooks. */
export class SigningKeys extends Family {
  async list(co?: CallOptions): Promise<SigningKey[]> { return (await this.read<api.WebhookKeyList>("/api/v1/signing-keys", co)).keys ?? []; }
  /** Adds a new key; the older ones go on signing beside it for a while. */
  async rotate(co?: CallOptions): Promise<SigningKey[]> {
    return (await this.send<api.WebhookKeyList>("POST", "/api/v1/signing-keys/rotate", undefined, co)).keys ?? [];
  }
}

export class Admin {
  readonly namespaces: Namespaces;
  readonly keys: Keys;
  readonly roles: Roles;
  readonly usage: Usage;
  readonly webhooks: Webhooks;
  readonly signingKeys: SigningKeys;
  constructor(t: Transport) {
    this.namespaces = new Namespaces(t);
    this.keys = new Keys(t);
    this.roles = new Roles(t);
    this.usage = new Usage(t);
    this.webhooks = new Webhooks(t);
    this.signingKeys = new SigningKeys(t);
  }
}
