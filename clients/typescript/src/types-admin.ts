// The JSON shapes of the tenant's administration (namespaces, keys,
// roles, webhooks, signing keys), written by hand from wire/*.go.

export interface Namespace {
  name: string;
  description: string;
  retention?: string;
  deletion_protection: boolean;
  created_at: string;
  shard?: string;
}

export interface CreateNamespaceRequest {
  name: string;
  description?: string;
  retention?: unknown;
  deletion_protection?: boolean;
  shard?: string;
}

export interface ApiKey {
  id: string;
  name: string;
  description: string;
  role: string;
  namespaces: string[];
  created_at: string;
  expires_at?: string;
  revoked_at?: string;
  last_used_at?: string;
  rotated_at?: string;
}

export interface CreateKeyRequest {
  name: string;
  role: string;
  namespaces: string[];
  expires_at?: string;
  description?: string;
}

/** A created key: its secret ("key") is in this answer only. */
export interface CreatedKey extends ApiKey {
  key: string;
}

export interface Permission {
  actions: string[];
  namespaces: string[];
  queues: string[];
}

export interface Role {
  name: string;
  description: string;
  permissions: Permission[];
  builtin: boolean;
  created_at?: string;
  updated_at?: string;
}

export interface RoleRequest {
  name?: string;
  description: string;
  permissions: Permission[];
}

export interface WebhookRequest {
  url: string;
  events: string[];
  queues?: string[];
  enabled?: boolean;
  description?: string;
  secret?: boolean;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  queues: string[];
  enabled: boolean;
  description: string;
  secret_ids: string[];
  /** Only in a create's or a rotation's answer. */
  secret?: string;
  disabled?: { reason: string; at: string };
  failing_since?: string;
  created_at: string;
  updated_at: string;
}

export interface WebhookDelivery {
  event_id: string;
  type: string;
  at: string;
  status: number;
  latency_ms: number;
  error?: string;
  attempt: number;
  ok: boolean;
}

/** A namespace's public signing key: verify pushes and webhooks with `public_key`. */
export interface SigningKey {
  id: string;
  scheme: "v1a" | string;
  public_key: string;
  not_after: string | null;
}
