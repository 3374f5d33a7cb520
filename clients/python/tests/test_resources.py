"""Queues, schedules, search, bulk, workers, namespaces, keys, roles and
usage against a real jobbie dev."""

from __future__ import annotations

import uuid

import pytest

import jobbie
from conftest import Server


def test_queues(client: jobbie.Client, queue: str) -> None:
    q = client.declare_queue(queue, description="mail", concurrency=4, throttle={"rate": 10, "period": 60},
                             defaults={"max_retries": 7})
    assert (q["description"], q["concurrency"], q["throttle"], q["defaults"]["max_retries"]) == \
        ("mail", 4, {"rate": 10, "period": "1m"}, 7)
    assert queue in [x["name"] for x in client.list_queues()]
    assert client.pause_queue(queue) and client.get_queue(queue)["paused"] is True
    client.resume_queue(queue)
    assert client.get_queue(queue)["paused"] is False
    client.set_queue_concurrency(queue, None)
    client.set_queue_throttle(queue, None)
    client.set_queue_defaults(queue, lease_duration="5m")
    q = client.get_queue(queue)
    assert (q["concurrency"], q["throttle"], q["defaults"]["lease_duration"]) == (None, None, "5m")
    client.drain_queue(queue)
    assert client.get_queue(queue)["drained"] is True
    client.resume_queue(queue)
    client.enqueue(queue, 1)
    client.clear_queue(queue)
    assert client.get_queue(queue)["counts"]["pending"] == 0
    with pytest.raises(jobbie.BadRequestError) as e:
        client.declare_queue(queue, throttle={"rate": 1, "period": "0s"})
    assert e.value.field == "throttle.period"
    client.delete_queue(queue)


def test_schedules(client: jobbie.Client, queue: str) -> None:
    s = client.create_schedule("nightly-" + queue, queue, "0 3 * * *", timezone="Europe/Paris", payload={"k": 1})
    assert s["id"].startswith("sch_") and s["enabled"] is True
    assert client.get_schedule(s["name"])["id"] == s["id"]
    assert s["id"] in [x["id"] for x in client.list_schedules()]
    assert client.disable_schedule(s["id"])["enabled"] is False
    assert client.enable_schedule(s["id"])["enabled"] is True
    upd = client.update_schedule(s["id"], {"name": s["name"], "queue": queue, "cron": "@every 1h"})
    assert upd["cron"] == "@every 1h"
    run = client.run_schedule(s["id"])
    assert client.get_job(run["job_id"])["tags"]["jobbie.schedule_id"] == s["id"]
    assert len(client.preview_schedule("0 15 * * *", timezone="Europe/Paris", count=3)) == 3
    with pytest.raises(jobbie.BadRequestError) as e:
        client.create_schedule("bad-" + queue, queue, "61 * * * *")
    assert e.value.field == "cron"
    client.delete_schedule(s["id"])
    with pytest.raises(jobbie.NotFoundError):
        client.get_schedule(s["id"])


def test_search_follows_cursors(client: jobbie.Client, queue: str) -> None:
    ids = client.enqueue_batch([jobbie.job_spec(queue, {"n": i}, tags={"k": "v"}) for i in range(7)])["job_ids"]
    page = client.search({"queue": queue}, limit=3)
    assert len(page["jobs"]) == 3 and page["has_more"] and page["cursor"]
    seen = [j["id"] for j in client.iter_search({"queue": queue, "tags": {"k": "v"}}, limit=3)]
    assert sorted(seen) == sorted(ids) and len(seen) == len(set(seen))
    assert [j["id"] for j in client.iter_search({"queue": queue, "payload_jq": ".n == 4"})] == [ids[4]]


def test_bulk_small_and_in_the_background_with_progress(client: jobbie.Client, queue: str) -> None:
    ids = client.enqueue_batch([jobbie.job_spec(queue, i) for i in range(4)])["job_ids"]
    small = client.bulk("cancel", job_ids=ids[:2])
    assert small["affected"] == 2
    # The session's server runs a bulk over more than 5 matches in the background.
    more = client.enqueue_batch([jobbie.job_spec(queue, i) for i in range(40)])["job_ids"]
    op = client.bulk("delete", filter={"queue": queue, "state": ["pending"]})
    assert op["status"] == "processing" and op["bulk_operation_id"].startswith("bulk_")
    updates: list[dict] = []
    final = client.watch_bulk(op["bulk_operation_id"], updates.append, timeout=60)
    assert final["status"] == "completed" and final["affected"] == len(more) + 2
    assert all(u["id"] == op["bulk_operation_id"] for u in updates)
    assert client.get_bulk(op["bulk_operation_id"])["status"] == "completed"
    assert op["bulk_operation_id"] in [b["id"] for b in client.list_bulk(limit=20)["operations"]]
    assert client.search({"queue": queue, "state": ["pending"]})["jobs"] == []


def test_workers_are_listed(client: jobbie.Client, queue: str) -> None:
    client.fetch([queue], worker_id="py-w-" + queue, hostname="h1", timeout=0)
    w = [x for x in client.list_workers() if x["id"] == "py-w-" + queue]
    assert w and w[0]["hostname"] == "h1" and w[0]["queues"] == [queue]
    assert client.cluster()["healthy"] is True


def test_namespaces(server: Server, client: jobbie.Client) -> None:
    name = "py" + uuid.uuid4().hex[:8]
    ns = client.create_namespace(name, description="d", retention="90m", deletion_protection=True)
    assert (ns["name"], ns["retention"]) == (name, "1h30m")
    assert name in [n["name"] for n in client.list_namespaces()]
    other = client.with_namespace(name)
    jid = other.enqueue("q1", 1)["job_id"]
    assert other.get_job(jid)["queue"] == "q1"
    with pytest.raises(jobbie.NotFoundError):
        client.get_job(jid)  # the default namespace does not see it
    with pytest.raises(jobbie.ConflictError) as e:
        client.delete_namespace(name, force=True)
    assert e.value.code == "deletion_protected"
    assert client.update_namespace(name, deletion_protection=False, retention=None)["deletion_protection"] is False
    otlp = "https://127.0.0.1:4318/v1/traces"  # the dev server allows inside addresses; no allow-list yet
    assert other.set_tracing(otlp) == otlp
    assert (other.get_tracing(), client.get_tracing()) == (otlp, "")
    with pytest.raises(jobbie.BadRequestError) as bad:
        other.set_tracing("http://127.0.0.1:4318/v1/traces")
    assert bad.value.field == "otlp_endpoint"
    assert other.get_tracing() == otlp
    assert other.set_tracing(None) == ""
    assert other.get_tracing() == ""
    assert client.put_namespace_egress(name, ["hooks.example.com"]) == ["hooks.example.com"]
    assert client.get_namespace_egress(name) == ["hooks.example.com"]
    client.delete_namespace(name, force=True)
    with pytest.raises(jobbie.NotFoundError):
        client.get_namespace(name)


def test_keys_and_roles(server: Server, client: jobbie.Client) -> None:
    role = "py-" + uuid.uuid4().hex[:8]
    r = client.create_role(role, [{"actions": ["job.read"], "namespaces": ["*"], "queues": ["*"]}], description="x")
    assert r["builtin"] is False and role in [x["name"] for x in client.list_roles()]
    client.update_role(role, [{"actions": ["job.read", "queue.read"], "namespaces": ["*"], "queues": ["*"]}])
    assert client.get_role(role)["permissions"][0]["actions"] == ["job.read", "queue.read"]
    k = client.create_key("py-key", role, namespaces=["default"], description="test")
    kc = jobbie.Client(server.url, k["key"])
    assert isinstance(kc.list_queues(), list)
    with pytest.raises(jobbie.ForbiddenError):
        kc.enqueue("q", 1)
    assert client.get_key(k["id"])["role"] == role
    with pytest.raises(jobbie.ConflictError) as e:
        client.delete_role(role)
    assert e.value.code == "role_in_use"
    rotated = client.rotate_key(k["id"])
    assert rotated["key"] != k["key"]
    client.revoke_key(k["id"])
    client.delete_role(role)
    with pytest.raises(jobbie.BadRequestError) as bad:
        client.create_role("Bad Name", [{"actions": ["job.read"], "namespaces": ["*"], "queues": ["*"]}])
    assert bad.value.field == "name"


def test_usage_plan_invoices(client: jobbie.Client) -> None:
    assert "totals" in client.usage()
    assert client.plan()["plan"]
    invoices = client.list_invoices()
    assert invoices and client.get_invoice(invoices[0]["id"])["id"] == invoices[0]["id"]
    assert "total" in client.upcoming_invoice()
