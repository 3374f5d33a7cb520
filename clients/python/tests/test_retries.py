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
