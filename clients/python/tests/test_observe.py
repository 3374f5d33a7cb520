"""Alert rules and the audit log against a real jobbie dev: a rule created
and read back, replaced and deleted; an audited action found in the log
by page, by iterator following cursors and as JSON lines; a viewer key
refused with ForbiddenError."""

from __future__ import annotations

import json
import uuid
from typing import Any, Callable

import pytest

import jobbie
from conftest import wait_for


def rule_name() -> str:
    return "py-rule-" + uuid.uuid4().hex[:8]


def test_alert_rule_create_read_update_delete(client: jobbie.Client, queue: str) -> None:
    name = rule_name()
    made = client.create_alert_rule(name, "queue_depth_above", queue=queue, threshold=1000, for_="5m")
    assert (made["name"], made["kind"], made["queue"], made["threshold"], made["for"], made["enabled"], made["state"]) == \
        (name, "queue_depth_above", queue, 1000, "5m", True, "ok")
    got = client.get_alert_rule(name)
    assert (got["kind"], got["queue"], got["threshold"]) == ("queue_depth_above", queue, 1000)
    assert name in [r["name"] for r in client.list_alert_rules()]
    replaced = client.update_alert_rule(name, "dead_increase", queue=queue, threshold=3, for_="10m", enabled=False)
    assert (replaced["kind"], replaced["threshold"], replaced["for"], replaced["enabled"]) == ("dead_increase", 3, "10m", False)
    assert client.get_alert_rule(name)["enabled"] is False
    with pytest.raises(jobbie.ConflictError):
        client.create_alert_rule(name, "no_worker", for_="1m")
    client.delete_alert_rule(name)
    with pytest.raises(jobbie.NotFoundError):
        client.get_alert_rule(name)


def test_alert_rule_refusals(client: jobbie.Client, new_client: Callable[..., jobbie.Client]) -> None:
    with pytest.raises(jobbie.BadRequestError) as e:
        client.create_alert_rule(rule_name(), "queue_depth_above", threshold=1, for_="forever")
    assert e.value.field == "for"
    viewer = new_client("viewer")
    assert isinstance(viewer.list_alert_rules(), list)  # namespace.read: a viewer may look
    with pytest.raises(jobbie.ForbiddenError) as f:
        viewer.create_alert_rule(rule_name(), "no_worker", for_="1m")
    assert f.value.status == 403 and f.value.code == "forbidden"


def test_audit_log_pages_iterator_and_jsonl(client: jobbie.Client, queue: str) -> None:
    name = rule_name()
    client.create_alert_rule(name, "no_worker", queue=queue, for_="1m")
    client.update_alert_rule(name, "no_worker", queue=queue, for_="2m")
    # limit 1: the two records are on two pages, so reading both follows a cursor.
    f: dict[str, Any] = {"object": f"alert/{name}", "limit": 1}
    recs: list[Any] = wait_for(lambda: (lambda rs: rs if len(rs) == 2 else None)(list(client.iter_audit(**f))),
                               "both audit records")  # type: ignore[assignment]
    assert [(r["route"], r["action"], r["object_type"], r["object_id"], r["result"], r["status"], r["namespace"])
            for r in recs] == [
        ("POST /api/v1/alerts", "queue.manage", "alert", name, "ok", 201, "default"),
        ("PUT /api/v1/alerts/:name", "queue.manage", "alert", name, "ok", 200, "default"),
    ]
    assert recs[0]["key_id"]
    first = client.audit(**f)
    assert [r["id"] for r in first["records"] or []] == [recs[0]["id"]] and first.get("cursor")
    text, cursor = client.audit_jsonl(**f)
    assert cursor and json.loads(text) == recs[0]
    lines = [json.loads(line) for line in "".join(client.export_audit_jsonl(**f)).splitlines() if line.strip()]
    assert lines == recs
    assert list(client.iter_audit(**f, order="desc")) == recs[::-1]
    newest = [json.loads(line) for line in "".join(client.export_audit_jsonl(**f, order="desc")).splitlines() if line.strip()]
    assert newest == recs[::-1]
    client.delete_alert_rule(name)


def test_audit_log_refusals(client: jobbie.Client, new_client: Callable[..., jobbie.Client]) -> None:
    with pytest.raises(jobbie.ForbiddenError) as e:
        new_client("viewer").audit()
    assert e.value.status == 403 and e.value.code == "forbidden"
    with pytest.raises(jobbie.BadRequestError) as b:
        client.audit(limit=5000)
    assert b.value.field == "limit"
