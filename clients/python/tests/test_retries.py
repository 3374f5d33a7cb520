"""Retries of 429, 503 and network errors with backoff honouring
Retry-After, one Idempotency-Key per logical call reused by its retries."""

from __future__ import annotations

import time
from typing import Iterator

import pytest

import jobbie
import faultproxy
from conftest import Server


@pytest.fixture
def proxy(server: Server) -> Iterator[faultproxy.FaultProxy]:
    yield from faultproxy.serve(server.url)


def test_enqueue_retried_after_503_and_429_once_with_one_key(server: Server, proxy: faultproxy.FaultProxy,
                                                             queue: str) -> None:
    c = jobbie.Client(proxy.url, server.key)
    proxy.faults["POST /api/v1/enqueue"] = ["503", "429"]
    start = time.monotonic()
    jid = c.enqueue(queue, {"n": 1})["job_id"]
    assert time.monotonic() - start >= 1.9, "each Retry-After: 1 was waited"
    calls = proxy.calls("POST", "/api/v1/enqueue")
    assert [s.answered for s in calls] == ["503", "429", "proxied"]
    keys = {s.idempotency_key for s in calls}
    assert len(keys) == 1 and None not in keys, "one key for the call and its retries"
    assert [j["id"] for j in c.iter_search({"queue": queue})] == [jid], "one job, not three"

    c.enqueue(queue, {"n": 2})
    assert proxy.calls("POST", "/api/v1/enqueue")[-1].idempotency_key not in keys, "a new call, a new key"


def test_an_answer_lost_after_the_server_applied_the_enqueue_is_replayed(
        server: Server, proxy: faultproxy.FaultProxy, queue: str) -> None:
    c = jobbie.Client(proxy.url, server.key)
    proxy.faults["POST /api/v1/enqueue"] = ["drop_after"]
    jid = c.enqueue(queue, {"n": 1})["job_id"]
    calls = proxy.calls("POST", "/api/v1/enqueue")
    assert [(s.answered, s.replayed) for s in calls] == [("drop_after", False), ("proxied", True)]
    assert calls[0].idempotency_key == calls[1].idempotency_key
    assert [j["id"] for j in c.iter_search({"queue": queue})] == [jid], "the retry did not enqueue twice"


def test_a_callers_key_gets_the_first_answer_and_another_body_is_refused(client: jobbie.Client,
                                                                       queue: str) -> None:
    key = "order-" + queue
    first = client.enqueue(queue, {"order": 1}, idempotency_key=key)
    assert client.enqueue(queue, {"order": 1}, idempotency_key=key) == first
    with pytest.raises(jobbie.IdempotencyKeyReusedError) as e:
        client.enqueue(queue, {"order": 2}, idempotency_key=key)
    assert (e.value.status, e.value.code, e.value.field) == (422, "idempotency_key_reused", "Idempotency-Key")
    with pytest.raises(jobbie.IdempotencyKeyReusedError):
        client.create_schedule("s-" + queue, queue, "@hourly", idempotency_key=key)  # another route, same key
    s = client.create_schedule("s-" + queue, queue, "@hourly", idempotency_key=key + ".s")
    assert client.create_schedule("s-" + queue, queue, "@hourly", idempotency_key=key + ".s")["id"] == s["id"]
    assert len([x for x in client.list_schedules() if x["queue"] == queue]) == 1


def test_a_create_without_a_key_is_not_sent_again_after_a_network_error(
        server: Server, proxy: faultproxy.FaultProxy, queue: str) -> None:
    c = jobbie.Client(proxy.url, server.key)
    s = c.create_schedule("run-" + queue, queue, "@yearly")
    run = f"/api/v1/schedules/{s['id']}/run"
    proxy.faults["POST " + run] = ["drop_after"]
    with pytest.raises(jobbie.NetworkError):
        c.run_schedule(s["id"])
    calls = proxy.calls("POST", run)
    assert len(calls) == 1 and calls[0].idempotency_key is None, "the run may have landed: not sent twice"
    assert len(list(c.iter_search({"queue": queue}))) == 1
    proxy.faults["POST " + run] = ["503"]
    c.run_schedule(s["id"])
    assert [s.answered for s in proxy.calls("POST", run)][1:] == ["503", "proxied"]
    assert len(list(c.iter_search({"queue": queue}))) == 2


def test_a_dropped_connection_is_retried(server: Server, proxy: faultproxy.FaultProxy, queue: str) -> None:
    c = jobbie.Client(proxy.url, server.key)
    proxy.faults["POST /api/v1/enqueue/batch"] = ["drop"]
    out = c.enqueue_batch([jobbie.job_spec(queue, i) for i in range(3)])
    calls = proxy.calls("POST", "/api/v1/enqueue/batch")
    assert [s.answered for s in calls] == ["drop", "proxied"]
    assert calls[0].idempotency_key == calls[1].idempotency_key
    assert sorted(j["id"] for j in c.iter_search({"queue": queue})) == sorted(out["job_ids"])


def test_retries_give_up_and_4xx_is_not_retried(server: Server, proxy: faultproxy.FaultProxy, queue: str) -> None:
    c = jobbie.Client(proxy.url, server.key, retries=2)
    proxy.faults["GET /api/v1/queues"] = ["503"] * 3
    with pytest.raises(jobbie.UnavailableError) as e:
        c.list_queues()
    assert e.value.status == 503 and e.value.retry_after == 1.0 and e.value.request_id == "req_proxy"
    assert len(proxy.calls("GET", "/api/v1/queues")) == 3
    assert all(s.idempotency_key is None for s in proxy.calls("GET", "/api/v1/queues")), "reads carry no key"

    with pytest.raises(jobbie.BadRequestError):
        c.enqueue(queue, 1, priority="nope")
    assert len(proxy.calls("POST", "/api/v1/enqueue")) == 1


def test_network_error_when_nothing_listens(queue: str) -> None:
    c = jobbie.Client(f"http://127.0.0.1:{faultproxy_free_port()}", "k", retries=1)
    with pytest.raises(jobbie.NetworkError) as e:
        c.enqueue(queue, 1)
    assert e.value.status == 0 and jobbie.is_retryable(e.value)


def faultproxy_free_port() -> int:
    from conftest import free_port
    return free_port()
