"""Watching a tenant's things: the namespace's alert rules
(docs/api/alerts.md) and the tenant's audit log (docs/api/audit.md): a
page, every record following cursors, and JSON lines."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterator

from ._base import Base, drop_none, query, seg
from .types_gen import AlertRule, AlertRuleList, AuditPage, AuditRecord

#: The header of a JSON-lines page of the audit log carrying the next page's cursor.
AUDIT_CURSOR_HEADER = "jobbie-cursor"


def _time(t: str | datetime | None) -> str | None:
    return t.isoformat() if isinstance(t, datetime) else t


class ObserveMixin(Base):
    # Alert rules

    def list_alert_rules(self) -> list[AlertRule]:
        """Every rule of the namespace, with its state."""
        page: AlertRuleList = self._call("GET", "/api/v1/alerts")
        return page.get("alerts") or []

    def get_alert_rule(self, name: str) -> AlertRule:
        return self._call("GET", f"/api/v1/alerts/{seg(name)}")  # type: ignore[no-any-return]

    def create_alert_rule(self, name: str, kind: str, *, for_: str, queue: str | None = None,
                          threshold: float | None = None, min_count: int | None = None,
                          enabled: bool | None = None) -> AlertRule:
        """Create a rule (``for_`` is the API's ``for``: "30s", "5m").
        A second rule of the same name is ConflictError; a bad field a
        BadRequestError naming it."""
        body = drop_none({"name": name, "kind": kind, "for": for_, "queue": queue, "threshold": threshold,
                          "min_count": min_count, "enabled": enabled})
        return self._call("POST", "/api/v1/alerts", body)  # type: ignore[no-any-return]

    def update_alert_rule(self, name: str, kind: str, *, for_: str, queue: str | None = None,
                          threshold: float | None = None, min_count: int | None = None,
                          enabled: bool | None = None) -> AlertRule:
        """Replace every setting of a rule (a rule is not renamed)."""
        body = drop_none({"kind": kind, "for": for_, "queue": queue, "threshold": threshold,
                          "min_count": min_count, "enabled": enabled})
        return self._call("PUT", f"/api/v1/alerts/{seg(name)}", body)  # type: ignore[no-any-return]

    def delete_alert_rule(self, name: str) -> None:
        """Delete a rule; each queue it fired on resolves."""
        self._call("DELETE", f"/api/v1/alerts/{seg(name)}")

    # The audit log: reading it needs audit.read (owner and admin keys).

    @staticmethod
    def _audit_query(action: str | None, key_id: str | None, namespace: str | None, object: str | None,
                     result: str | None, from_: str | datetime | None, to: str | datetime | None,
                     limit: int | None, cursor: str | None, **extra: Any) -> str:
        return query("/api/v1/audit", {
            "action": action, "key_id": key_id, "namespace": namespace, "object": object, "result": result,
            "from": _time(from_), "to": _time(to), "limit": limit, "cursor": cursor, **extra})

    def audit(self, *, action: str | None = None, key_id: str | None = None, namespace: str | None = None,
              object: str | None = None, result: str | None = None, from_: str | datetime | None = None,
              to: str | datetime | None = None, limit: int | None = None, cursor: str | None = None,
              order: str | None = None) -> AuditPage:
        """One page of the audit log, oldest first (``order="desc"``: newest
        first): ``{"records", "cursor"}``
        (no cursor: nothing more). ``object`` is a type (``"job"``) or type
        and id (``"job/job_01…"``); ``from_`` inclusive, ``to`` exclusive;
        ``limit`` 1 to 1,000."""
        return self._call("GET", self._audit_query(  # type: ignore[no-any-return]
            action, key_id, namespace, object, result, from_, to, limit, cursor, order=order))

    def iter_audit(self, *, action: str | None = None, key_id: str | None = None, namespace: str | None = None,
                   object: str | None = None, result: str | None = None, from_: str | datetime | None = None,
                   to: str | datetime | None = None, limit: int | None = None,
                   order: str | None = None) -> Iterator[AuditRecord]:
        """Every matching record, oldest first (or newest, ``order="desc"``), following cursors (a page
        may hold fewer than ``limit`` and still have a next)."""
        cursor: str | None = None
        while True:
            page = self.audit(action=action, key_id=key_id, namespace=namespace, object=object, result=result,
                              from_=from_, to=to, limit=limit, cursor=cursor, order=order)
            yield from page.get("records") or []
            cursor = page.get("cursor")
            if not cursor:
                return

    def audit_jsonl(self, *, action: str | None = None, key_id: str | None = None, namespace: str | None = None,
                    object: str | None = None, result: str | None = None, from_: str | datetime | None = None,
                    to: str | datetime | None = None, limit: int | None = None,
                    cursor: str | None = None, order: str | None = None) -> tuple[str, str | None]:
        """One page as JSON lines (one record a line) and the next page's
        cursor (None: nothing more)."""
        r = self._t.call("GET", self._audit_query(action, key_id, namespace, object, result, from_, to, limit, cursor,
                                                  format="jsonl", order=order),
                         headers={"Accept": "application/x-ndjson"})
        return str(r.body or ""), r.headers.get(AUDIT_CURSOR_HEADER) or None

    def export_audit_jsonl(self, *, action: str | None = None, key_id: str | None = None,
                           namespace: str | None = None, object: str | None = None, result: str | None = None,
                           from_: str | datetime | None = None, to: str | datetime | None = None,
                           limit: int | None = None, order: str | None = None) -> Iterator[str]:
        """The whole matching log as JSON lines, page after page: write
        each chunk to a file as it comes."""
        cursor: str | None = None
        while True:
            text, cursor = self.audit_jsonl(action=action, key_id=key_id, namespace=namespace, object=object,
                                            result=result, from_=from_, to=to, limit=limit, cursor=cursor, order=order)
            if text:
                yield text
            if not cursor:
                return
