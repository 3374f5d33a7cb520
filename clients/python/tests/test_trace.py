"""Trace context against a real jobbie dev: options given back on reads
and fetches, bad values refused before sending, and enqueues made within
a handler (coroutine or thread) continuing the handled job's trace."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import jobbie
from conftest import free_port
from test_worker import running, until_state

TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
OTHER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def trace_id(tp: str) -> str:
    return tp.split("-")[1]


def test_options_are_kept_and_given_back(client: jobbie.Client, queue: str) -> None:
    jid = client.enqueue(queue, 1, traceparent=TP, tracestate="congo=t61rcWkgMzE")["job_id"]
    j = client.get_job(jid)
    assert j.get("traceparent") == TP and j.get("tracestate") == "congo=t61rcWkgMzE"
    ids = client.enqueue_batch([jobbie.job_spec(queue, 2, traceparent=OTHER), jobbie.job_spec(queue, 3)])["job_ids"]
    assert client.get_job(ids[0]).get("traceparent") == OTHER
    assert "traceparent" not in client.get_job(ids[1])  # outside a handler nothing is inherited


@pytest.mark.parametrize("call,field", [
    (lambda c, q: c.enqueue(q, traceparent="00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"), "traceparent"),
    (lambda c, q: c.enqueue(q, tracestate="a=b"), "tracestate"),
    (lambda c, q: c.enqueue(q, traceparent=TP, tracestate="a=b,a=c"), "tracestate"),
    (lambda c, q: c.enqueue_batch([jobbie.job_spec(q), jobbie.job_spec(q, traceparent="00-x")]), "jobs[1].traceparent"),
    (lambda c, q: c.enqueue_batch([jobbie.job_spec(q)], batch={"callback_queue": q, "traceparent": TP, "tracestate": "B=1"}),
     "batch.tracestate"),
    (lambda c, q: c.enqueue_chain([{"queue": q}, {"queue": q, "traceparent": "00-" + "0" * 32 + "-00f067aa0ba902b7-01"}]),
     "chain.steps[1].traceparent"),
])
def test_bad_values_are_refused_before_sending(queue: str, call: Any, field: str) -> None:
    # Nothing listens at the client's address: had it sent, it would get
    # a network error rather than the refusal.
    nowhere = jobbie.Client(f"http://127.0.0.1:{free_port()}", "key", retries=0)
    with pytest.raises(jobbie.BadRequestError) as e:
        call(nowhere, queue)
    assert e.value.status == 400 and e.value.field == field and field in str(e.value)


def test_handler_enqueues_continue_the_jobs_trace(client: jobbie.Client, queue: str) -> None:
    follow = queue + ".next"

    async def main() -> None:
        made: dict[str, str] = {}

        async def handler(job: jobbie.Job) -> Any:
            if job.payload == "async":  # a coroutine handler calling the client in a thread
                made["async"] = (await asyncio.to_thread(client.enqueue, follow, "from-async"))["job_id"]
                made["batch"] = (await asyncio.to_thread(client.enqueue_batch, [jobbie.job_spec(follow)]))["job_ids"][0]
                made["own"] = (await asyncio.to_thread(client.enqueue, follow, traceparent=OTHER))["job_id"]
                made["none"] = (await asyncio.to_thread(client.enqueue, follow, inherit_trace=False))["job_id"]
            return "ok"

        def thread_handler(job: jobbie.Job) -> Any:
            made["thread"] = client.enqueue(follow, "from-thread")["job_id"]
            return "ok"

        first = (await asyncio.to_thread(client.enqueue, queue, "async", traceparent=TP, tracestate="congo=x"))["job_id"]
        other_q = queue + ".t"
        second = (await asyncio.to_thread(client.enqueue, other_q, "thread", traceparent=OTHER))["job_id"]
        w1 = jobbie.Worker(client, [queue], handler, fetch_timeout=2)
        w2 = jobbie.Worker(client, [other_q], thread_handler, fetch_timeout=2)
        async with running(w1, w2):
            await until_state(client, first, "completed")
            await until_state(client, second, "completed")
        for key in ("async", "batch"):
            j = await asyncio.to_thread(client.get_job, made[key])
            assert trace_id(j["traceparent"]) == TRACE_ID and j.get("tracestate") == "congo=x", key
        assert (await asyncio.to_thread(client.get_job, made["own"]))["traceparent"] == OTHER
        assert "traceparent" not in await asyncio.to_thread(client.get_job, made["none"])
        assert trace_id((await asyncio.to_thread(client.get_job, made["thread"]))["traceparent"]) == trace_id(OTHER)

    asyncio.run(main())
