"""About a tenant as a whole: namespaces, API keys, roles, backups, usage
and invoices, webhook endpoints and the namespace's signing keys.

The creates of a namespace, key, role, backup and webhook endpoint take an
``idempotency_key`` (default: a random one per call, the same on each of
its retries): a repeat within 24 hours gets the first answer back, a
created key's secret included; another body under the same key is
IdempotencyKeyReusedError."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ._base import Base, drop_none, query, seg
from .types_gen import (
    Backup, CreatedKey, Encryption, EncryptionRequest, Invoice, InvoiceSummary, Key, Namespace, Role, RotatedKey, TenantPlan, Usage, Webhook, WebhookDelivery,
    WebhookKey,
)

_UNSET: Any = object()


class AdminMixin(Base):
    # Namespaces

    def list_namespaces(self) -> list[Namespace]:
        out = self._call("GET", "/api/v1/namespaces")
        return list(out.get("namespaces") or [])

    def create_namespace(self, name: str, *, description: str | None = None, retention: float | str | None = None,
                         deletion_protection: bool | None = None, shard: str | None = None,
                         idempotency_key: str | None = None) -> Namespace:
        body = drop_none({"name": name, "description": description, "retention": retention,
                          "deletion_protection": deletion_protection, "shard": shard})
        return self._create("/api/v1/namespaces", body, idempotency_key)  # type: ignore[no-any-return]

    def get_namespace(self, name: str) -> Namespace:
        return self._call("GET", f"/api/v1/namespaces/{seg(name)}")  # type: ignore[no-any-return]

    def update_namespace(self, name: str, *, description: Any = _UNSET, retention: Any = _UNSET,
                         deletion_protection: Any = _UNSET) -> Namespace:
        """Change only the fields given; None resets one."""
        body = {k: v for k, v in (("description", description), ("retention", retention),
                                  ("deletion_protection", deletion_protection)) if v is not _UNSET}
        return self._call("PATCH", f"/api/v1/namespaces/{seg(name)}", body)  # type: ignore[no-any-return]

    def delete_namespace(self, name: str, *, force: bool = False) -> None:
        """Delete it; ``force`` with its jobs, queues and schedules."""
        self._call("DELETE", query(f"/api/v1/namespaces/{seg(name)}", {"force": True if force else None}))

    def get_namespace_egress(self, name: str) -> list[str]:
        out = self._call("GET", f"/api/v1/namespaces/{seg(name)}/egress")
        return list(out.get("egress_allow") or [])

    def put_namespace_egress(self, name: str, allow: Sequence[str] | None) -> list[str]:
        out = self._call("PUT", f"/api/v1/namespaces/{seg(name)}/egress",
                         {"egress_allow": list(allow) if allow is not None else None})
        return list(out.get("egress_allow") or [])

    def get_tracing(self) -> str:
        """The OTLP endpoint of the client's namespace: where its jobs'
        spans are sent, "" for nowhere."""
        out = self._call("GET", "/api/v1/tracing")
        return str(out.get("otlp_endpoint") or "")

    def set_tracing(self, endpoint: str | None) -> str:
        """Set the OTLP endpoint of the client's namespace (an https
        OTLP/HTTP traces URL), or remove it (None or ""); returns it as kept."""
        out = self._call("PUT", "/api/v1/tracing", {"otlp_endpoint": endpoint or None})
        return str(out.get("otlp_endpoint") or "")

    def get_encryption(self) -> Encryption:
        """The encryption at rest of the client's namespace: never a key;
        ``tenant_key_id`` names the tenant's key in use."""
        return self._call("GET", "/api/v1/encryption")  # type: ignore[no-any-return]

    def set_encryption(self, *, enabled: bool | None = None, search_decrypt: bool | None = None,
                       tenant_key: str | None = None, revoke_tenant_key: bool = False) -> Encryption:
        """Change the encryption at rest of the client's namespace (the
        owner's key alone); what is None keeps its value. ``tenant_key``
        (32 random bytes, base64 or hex) is sent, never answered back: the
        first wraps the namespace's keys in place of the operator's, a
        later one rotates it. ``revoke_tenant_key`` makes everything sealed
        under the key unreadable, for good; reads of it then raise
        ConflictError with code ``encryption_key_revoked``
        (is_encryption_key_revoked)."""
        body: EncryptionRequest = drop_none({"enabled": enabled, "search_decrypt": search_decrypt,  # type: ignore[assignment]
                                             "tenant_key": tenant_key})
        if revoke_tenant_key:
            body["revoke_tenant_key"] = True
        return self._call("PUT", "/api/v1/encryption", body)  # type: ignore[no-any-return]

    # API keys

    def list_keys(self) -> list[Key]:
        out = self._call("GET", "/api/v1/keys")
        return list(out.get("keys") or [])

    def create_key(self, name: str, role: str, *, namespaces: Sequence[str] | None = None,
                   description: str | None = None, expires_at: str | None = None,
                   idempotency_key: str | None = None) -> CreatedKey:
        """A new key; its secret (``key``) is in this answer only, and in a
        repeat of it under the same ``idempotency_key``."""
        body = drop_none({"name": name, "role": role, "namespaces": list(namespaces) if namespaces is not None else None,
                          "description": description, "expires_at": expires_at})
        return self._create("/api/v1/keys", body, idempotency_key)  # type: ignore[no-any-return]

    def get_key(self, key_id: str) -> Key:
        return self._call("GET", f"/api/v1/keys/{seg(key_id)}")  # type: ignore[no-any-return]

    def revoke_key(self, key_id: str) -> None:
        self._call("DELETE", f"/api/v1/keys/{seg(key_id)}")

    def rotate_key(self, key_id: str, *, grace_period: float | str | None = None) -> RotatedKey:
        return self._call("POST", f"/api/v1/keys/{seg(key_id)}/rotate",  # type: ignore[no-any-return]
                          drop_none({"grace_period": grace_period}))

    # Roles

    def list_roles(self) -> list[Role]:
        out = self._call("GET", "/api/v1/roles")
        return list(out.get("roles") or [])

    def create_role(self, name: str, permissions: Sequence[Mapping[str, Any]], *,
                    description: str | None = None, idempotency_key: str | None = None) -> Role:
        """A custom role: each permission ``{"actions", "namespaces", "queues"}``."""
        body = drop_none({"name": name, "description": description, "permissions": [dict(p) for p in permissions]})
        return self._create("/api/v1/roles", body, idempotency_key)  # type: ignore[no-any-return]

    def get_role(self, name: str) -> Role:
        return self._call("GET", f"/api/v1/roles/{seg(name)}")  # type: ignore[no-any-return]

    def update_role(self, name: str, permissions: Sequence[Mapping[str, Any]], *,
                    description: str | None = None) -> Role:
        body = drop_none({"description": description, "permissions": [dict(p) for p in permissions]})
        return self._call("PUT", f"/api/v1/roles/{seg(name)}", body)  # type: ignore[no-any-return]

    def delete_role(self, name: str) -> None:
        self._call("DELETE", f"/api/v1/roles/{seg(name)}")

    # Backups

    def create_backup(self, namespace: str, *, idempotency_key: str | None = None) -> Backup:
        """Start a backup of ``namespace``: answered at once, ``running``;
        get_backup follows it to ``completed`` or ``failed``."""
        return self._create("/api/v1/backups", {"namespace": namespace}, idempotency_key)  # type: ignore[no-any-return]

    def list_backups(self, namespace: str | None = None) -> list[Backup]:
        """The catalog the key may read, newest first; only ``namespace``'s when given."""
        out = self._call("GET", query("/api/v1/backups", {"namespace": namespace}))
        return list(out.get("backups") or [])

    def get_backup(self, backup_id: str) -> Backup:
        return self._call("GET", f"/api/v1/backups/{seg(backup_id)}")  # type: ignore[no-any-return]

    # Usage and billing

    def usage(self, **params: Any) -> Usage:
        """Meters per namespace and hour or day (``from``, ``to``,
        ``granularity``, ``namespace``... as query parameters)."""
        return self._call("GET", query("/api/v1/usage", params))  # type: ignore[no-any-return]

    def plan(self) -> TenantPlan:
        return self._call("GET", "/api/v1/plan")  # type: ignore[no-any-return]

    def list_invoices(self) -> list[InvoiceSummary]:
        out = self._call("GET", "/api/v1/invoices")
        return list(out.get("invoices") or [])

    def upcoming_invoice(self) -> Invoice:
        return self._call("GET", "/api/v1/invoices/upcoming")  # type: ignore[no-any-return]

    def get_invoice(self, invoice_id: str) -> Invoice:
        return self._call("GET", f"/api/v1/invoices/{seg(invoice_id)}")  # type: ignore[no-any-return]

    # Webhook endpoints and signing keys

    def list_webhooks(self) -> list[Webhook]:
        out = self._call("GET", "/api/v1/webhooks")
        return list(out.get("webhooks") or [])

    def create_webhook(self, url: str, events: Sequence[str], *, queues: Sequence[str] | None = None,
                       enabled: bool | None = None, description: str | None = None,
                       secret: bool | None = None, idempotency_key: str | None = None) -> Webhook:
        """An endpoint; with ``secret=True`` the answer shows its ``whsec_`` secret, once."""
        body = drop_none({"url": url, "events": list(events), "queues": list(queues) if queues else None,
                          "enabled": enabled, "description": description, "secret": secret})
        return self._create("/api/v1/webhooks", body, idempotency_key)  # type: ignore[no-any-return]

    def get_webhook(self, webhook_id: str) -> Webhook:
        return self._call("GET", f"/api/v1/webhooks/{seg(webhook_id)}")  # type: ignore[no-any-return]

    def update_webhook(self, webhook_id: str, settings: Mapping[str, Any]) -> Webhook:
        """Replace its settings (``url``, ``events``, ``queues``, ``enabled``, ``description``)."""
        return self._call("PUT", f"/api/v1/webhooks/{seg(webhook_id)}", dict(settings))  # type: ignore[no-any-return]

    def delete_webhook(self, webhook_id: str) -> None:
        self._call("DELETE", f"/api/v1/webhooks/{seg(webhook_id)}")

    def webhook_deliveries(self, webhook_id: str) -> list[WebhookDelivery]:
        out = self._call("GET", f"/api/v1/webhooks/{seg(webhook_id)}/deliveries")
        return list(out.get("deliveries") or [])

    def rotate_webhook_secret(self, webhook_id: str) -> Webhook:
        return self._call("POST", f"/api/v1/webhooks/{seg(webhook_id)}/rotate-secret")  # type: ignore[no-any-return]

    def test_webhook(self, webhook_id: str) -> WebhookDelivery:
        return self._call("POST", f"/api/v1/webhooks/{seg(webhook_id)}/test")  # type: ignore[no-any-return]

    def redeliver_webhook(self, webhook_id: str, event_id: str) -> WebhookDelivery:
        return self._call("POST", f"/api/v1/webhooks/{seg(webhook_id)}/redeliver",  # type: ignore[no-any-return]
                          {"event_id": event_id})

    def signing_keys(self) -> list[WebhookKey]:
        """The namespace's Ed25519 public keys (``whpk_``) that sign push
        deliveries and webhooks."""
        out = self._call("GET", "/api/v1/signing-keys")
        return list(out.get("keys") or out.get("signing_keys") or [])

    def rotate_signing_keys(self) -> list[WebhookKey]:
        out = self._call("POST", "/api/v1/signing-keys/rotate")
        return list(out.get("keys") or out.get("signing_keys") or [])
