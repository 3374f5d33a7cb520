"""Jobs, batches, chains, dependencies and errors against a real jobbie dev."""

from __future__ import annotations

import pytest

import jobbie
from conftest import wait_for


def test_enqueue_with_options_and_read_back(client: jobbie.Client, queue: str) -> None:
    r = client.enqueue(queue, {"to": "a@example.com"}, priority="high", max_retries=5, tags={"team": "mail"},
                       retry_backoff="fixed", retry_base_delay="2s", unique_key="u1",
                       traceparent="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    assert r["status"] == "pending" and r["job_id"].startswith("job_")
    again = client.enqueue(queue, {"to": "a@example.com"}, unique_key="u1")
    assert again == {"job_id": r["job_id"], "status": "pending", "unique_existing": True}
    j = client.get_job(r["job_id"])
    assert (j["queue"], j["priority"], j["max_retries"], j["tags"], j["payload"]) == \
        (queue, "high", 5, {"team": "mail"}, {"to": "a@example.com"})
    assert j["retry_backoff"] == "fixed" and j["traceparent"].startswith("00-4bf92f35")


def test_cancel_retry_move_delete(client: jobbie.Client, queue: str) -> None:
    jid = client.enqueue(queue, 1)["job_id"]
    assert client.cancel_job(jid)["status"] == "cancelled"
    assert client.retry_job(jid)["status"] == "pending"
    client.move_job(jid, queue + ".other")
    assert client.get_job(jid)["queue"] == queue + ".other"
    client.delete_job(jid)
    with pytest.raises(jobbie.NotFoundError) as e:
        client.get_job(jid)
    assert e.value.status == 404 and e.value.code == "not_found" and e.value.request_id
    assert jobbie.is_not_found(e.value)


def test_dead_jobs_page(client: jobbie.Client, queue: str) -> None:
    jid = client.enqueue(queue, None, max_retries=0)["job_id"]
    j = client.fetch([queue], timeout=5)
    assert j is not None and j["job_id"] == jid
    assert client.fail(jid, "boom", lease_token=j["lease_token"])["status"] == "dead"
    page = client.dead_jobs(queue=queue, limit=10)
    assert [d["id"] for d in page["jobs"]] == [jid] and page["jobs"][0]["last_error"] == "boom"


def test_batch_with_callback(client: jobbie.Client, queue: str) -> None:
    out = client.enqueue_batch([jobbie.job_spec(queue, {"n": i}) for i in range(3)],
                               batch={"callback_queue": queue + ".done", "callback_payload": {"album": 1}})
    assert len(out["job_ids"]) == 3 and out["batch_id"]
    jobs = client.fetch_batch([queue], max=3, timeout=5)
    assert sorted(j["job_id"] for j in jobs) == sorted(out["job_ids"])
    res = client.ack_batch([{"job_id": j["job_id"], "lease_token": j["lease_token"]} for j in jobs])
    assert [r.get("status") for r in res["results"]] == ["completed"] * 3
    b = client.get_batch(out["batch_id"])
    assert (b["total"], b["succeeded"], b["failed"]) == (3, 3, 0) and b["callback_job_id"]
    cb = client.get_job(b["callback_job_id"])
    assert cb["queue"] == queue + ".done" and cb["payload"]["callback_payload"] == {"album": 1}
    assert out["batch_id"] in [x["id"] for x in client.iter_batches(limit=2)]


def test_chain_runs_its_steps(client: jobbie.Client, queue: str) -> None:
    first = client.enqueue_chain([{"queue": queue}, {"queue": queue + ".b", "payload": {"step": 2}}], {"step": 1})
    j = client.fetch([queue], timeout=5)
    assert j is not None and j["job_id"] == first["job_id"]
    client.ack(j["job_id"], {"r": 1}, lease_token=j["lease_token"])
    nxt = client.fetch([queue + ".b"], timeout=5)
    assert nxt is not None and nxt["payload"] == {"previous_result": {"r": 1}, "payload": {"step": 2}}
    chain = client.get_chain(first["job_id"])
    assert [s["queue"] for s in chain["steps"]] == [queue, queue + ".b"]
    assert chain["steps"][1]["job_id"] == nxt["job_id"]


def test_dependencies_hold_a_job(client: jobbie.Client, queue: str) -> None:
    dep = client.enqueue(queue, 1)["job_id"]
    held = client.enqueue(queue + ".after", 2, depends_on=[dep])
    assert held["status"] == "held"
    j = client.fetch([queue], timeout=5)
    assert j is not None
    client.ack(dep, lease_token=j["lease_token"])
    wait_for(lambda: client.get_job(held["job_id"])["state"] == "pending", "the dependent job to be released")


def test_bad_input_names_the_field_and_changes_nothing(client: jobbie.Client, queue: str) -> None:
    with pytest.raises(jobbie.BadRequestError) as e:
        client.enqueue(queue, 1, priority="urgent")
    assert e.value.field == "priority" and e.value.status == 400 and "priority" in str(e.value)
    with pytest.raises(jobbie.BadRequestError) as e:
        client.enqueue_batch([jobbie.job_spec(queue, 1), jobbie.job_spec(queue, 2, tags={"jobbie.x": "1"})])
    assert e.value.field == "jobs[1].tags"
    with pytest.raises(jobbie.BadRequestError) as e:
        client._call("POST", "/api/v1/enqueue", {"queue": queue, "priorty": "high"})
    assert e.value.field == "priorty"
    assert client.search({"queue": queue})["jobs"] == []
    with pytest.raises(ValueError):
        client.get_job("")


def test_errors_by_status(server, client: jobbie.Client, queue: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(jobbie.UnauthenticatedError):
        jobbie.Client(server.url, "not-a-key").list_queues()
    j = client.enqueue(queue, 1)["job_id"]
    got = client.fetch([queue], timeout=5)
    assert got is not None
    client.ack(j, lease_token=got["lease_token"])
    with pytest.raises(jobbie.ConflictError) as e:
        client.ack(j, lease_token=got["lease_token"])
    assert jobbie.is_conflict(e.value)
    producer = jobbie.Client(server.url, client.create_key("prod", "producer", namespaces=["*"])["key"])
    with pytest.raises(jobbie.ForbiddenError):
        producer.list_keys()
