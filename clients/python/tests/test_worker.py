"""The asyncio worker runtime against a real jobbie dev: concurrency,
results, failures with backtraces, non-retryable errors, cancellation,
progress and checkpoints, backoff on 429 and 503, refusals."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from typing import Any, AsyncIterator, Callable, Iterator

import pytest

import faultproxy
import jobbie
from conftest import LONG_POLLS_PER_KEY, Server, wait_for


async def until(cond: Callable[[], object], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def state(c: jobbie.Client, jid: str) -> dict[str, Any]:
    return await asyncio.to_thread(c.get_job, jid)


async def until_state(c: jobbie.Client, jid: str, *states: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        j = await state(c, jid)
        if j["state"] in states:
            return j
        if time.monotonic() > deadline:
            raise AssertionError(f"job {jid} is {j['state']}, not {states}")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def running(*workers: jobbie.Worker) -> AsyncIterator[None]:
    """Workers running for the block, then stopped and awaited (within a
    bound, so that a failing test cannot hang on a worker)."""
    tasks = [asyncio.create_task(w.run(handle_signals=False)) for w in workers]
    try:
        yield
    finally:
        for w in workers:
            w.stop()
        await asyncio.wait_for(asyncio.gather(*tasks), 60)


def test_concurrency_and_results(client: jobbie.Client, queue: str) -> None:
    async def main() -> None:
        busy, peak, gate = 0, 0, asyncio.Event()

        async def handler(job: jobbie.Job) -> Any:
            nonlocal busy, peak
            busy += 1
            peak = max(peak, busy)
            await gate.wait()
            busy -= 1
            return {"double": job.payload * 2}

        ids = (await asyncio.to_thread(client.enqueue_batch, [jobbie.job_spec(queue, i) for i in range(7)]))["job_ids"]
        w = jobbie.Worker(client, [queue], handler, concurrency=3, fetch_timeout=2)
        async with running(w):
            await until(lambda: busy == 3, "three jobs running")
            await asyncio.sleep(0.3)  # room for a fourth to start if the limit did not hold
            assert busy == 3 and len(w.active) == 3
            gate.set()
            for i, jid in enumerate(ids):
                j = await until_state(client, jid, "completed")
                assert j["result"] == {"double": i * 2} and j["attempt"] == 1
            assert peak == 3
            workers = await asyncio.to_thread(client.list_workers)
            assert any(x["id"] == w.worker_id and x["queues"] == [queue] for x in workers)

    asyncio.run(main())


def explode(n: int) -> None:
    raise ValueError(f"bad input {n}")


def test_failures_carry_backtraces_and_non_retryable_ends_the_job(client: jobbie.Client, queue: str) -> None:
    async def main() -> None:
        async def handler(job: jobbie.Job) -> Any:
            if job.payload == "permanent":
                raise jobbie.NonRetryableError("card declined")
            explode(job.attempt)

        flaky = (await asyncio.to_thread(client.enqueue, queue, "flaky", max_retries=1, retry_backoff="none"))["job_id"]
        perm = (await asyncio.to_thread(client.enqueue, queue, "permanent", max_retries=5))["job_id"]
        w = jobbie.Worker(client, [queue], handler, concurrency=2, fetch_timeout=2)
        async with running(w):
            dead = await until_state(client, flaky, "dead")
            assert [e["error"] for e in dead["errors"]] == ["ValueError: bad input 1", "ValueError: bad input 2"]
            assert "in explode" in dead["errors"][0]["backtrace"] and "Traceback" in dead["errors"][0]["backtrace"]
            ended = await until_state(client, perm, "dead")
            assert ended["attempt"] == 1 and ended["dead_reason"] == "non_retryable"
            assert [e["error"] for e in ended["errors"]] == ["NonRetryableError: card declined"]

    asyncio.run(main())


def test_cancel_reaches_coroutine_and_thread_handlers(client: jobbie.Client, queue: str) -> None:
    async def main() -> None:
        seen: dict[str, str] = {}

        async def async_handler(job: jobbie.Job) -> Any:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                seen[job.id] = f"cancelled:{job.stop_reason}"
                raise

        def sync_handler(job: jobbie.Job) -> Any:
            deadline = time.monotonic() + 60  # a bound, so that a failing test cannot hang on the thread
            while not job.cancelled and time.monotonic() < deadline:
                time.sleep(0.02)
            seen[job.id] = f"flag:{job.stop_reason}"
            return "ignored: the server cancelled it"

        a = (await asyncio.to_thread(client.enqueue, queue, 1, lease_duration=3))["job_id"]
        s = (await asyncio.to_thread(client.enqueue, queue + ".sync", 2, lease_duration=3))["job_id"]
        wa = jobbie.Worker(client, [queue], async_handler, fetch_timeout=2)
        ws = jobbie.Worker(client, [queue + ".sync"], sync_handler, fetch_timeout=2)
        async with running(wa, ws):
            await until(lambda: a in wa.active and s in ws.active, "both jobs running")
            for jid in (a, s):
                assert (await asyncio.to_thread(client.cancel_job, jid))["status"] == "cancelling"
            await until(lambda: len(seen) == 2, "both handlers told")  # a heartbeat a second (lease 3 s)
            assert seen == {a: "cancelled:cancelled", s: "flag:cancelled"}
            for jid in (a, s):
                j = await until_state(client, jid, "cancelled")
                assert j["result"] is None

    asyncio.run(main())


def test_progress_and_checkpoints(client: jobbie.Client, queue: str) -> None:
    async def main() -> None:
        seen: list[Any] = []

        async def handler(job: jobbie.Job) -> Any:
            seen.append(job.checkpoint)
            if job.checkpoint is None:
                job.progress(1, 2, "half")
                await job.save_checkpoint({"offset": 1})
                seen.append((await state(client, job.id))["progress"])
                raise RuntimeError("crash after the checkpoint")
            return {"resumed_from": job.checkpoint["offset"]}

        jid = (await asyncio.to_thread(client.enqueue, queue, None, retry_backoff="none"))["job_id"]
        w = jobbie.Worker(client, [queue], handler, fetch_timeout=2)
        async with running(w):
            j = await until_state(client, jid, "completed")
            assert seen == [None, {"current": 1, "total": 2, "message": "half"}, {"offset": 1}]
            assert j["result"] == {"resumed_from": 1} and j["attempt"] == 2

    asyncio.run(main())


@pytest.fixture
def proxy(server: Server) -> Iterator[faultproxy.FaultProxy]:
    yield from faultproxy.serve(server.url)


def test_503_on_fetch_and_ack_is_retried_without_a_duplicate(server: Server, proxy: faultproxy.FaultProxy,
                                                             queue: str) -> None:
    async def main() -> None:
        calls = 0

        async def handler(job: jobbie.Job) -> Any:
            nonlocal calls
            calls += 1
            return "ok"

        jid = (await asyncio.to_thread(jobbie.Client(server.url, server.key).enqueue, queue, 1))["job_id"]
        proxy.faults["POST /api/v1/fetch/batch"] = ["503"]
        proxy.faults[f"POST /api/v1/ack/{jid}"] = ["503", "drop"]
        c = jobbie.Client(proxy.url, server.key)
        w = jobbie.Worker(c, [queue], handler, fetch_timeout=2)
        async with running(w):
            j = await until_state(c, jid, "completed")
            assert (j["attempt"], j["result"], calls) == (1, "ok", 1)
            assert [s.answered for s in proxy.calls("POST", f"/api/v1/ack/{jid}")] == ["503", "drop", "proxied"]
            assert proxy.calls("POST", "/api/v1/fetch/batch")[0].answered == "503"

    asyncio.run(main())


def test_429_from_the_long_poll_limit_is_waited_out(server: Server, new_client: Callable[..., jobbie.Client],
                                                    queue: str, caplog: pytest.LogCaptureFixture) -> None:
    c = new_client()
    # Hold every long-poll the key may have, on a queue that stays empty.
    holders = [threading.Thread(target=c.fetch, args=([queue + ".empty"],), kwargs={"timeout": 3})
               for _ in range(LONG_POLLS_PER_KEY)]
    for t in holders:
        t.start()
    wait_for(lambda: _refused(c, queue), "the key's long-polls to be used up")

    async def main() -> None:
        jid = (await asyncio.to_thread(c.enqueue, queue, 1))["job_id"]
        w = jobbie.Worker(c, [queue], lambda job: "ok", fetch_timeout=2)
        async with running(w):
            j = await until_state(c, jid, "completed")
            assert j["attempt"] == 1

    with caplog.at_level(logging.WARNING, logger="jobbie.worker"):
        asyncio.run(main())
    for t in holders:
        t.join()
    assert any("429" in r.getMessage() for r in caplog.records), "the worker met the limit and backed off"


def _refused(c: jobbie.Client, queue: str) -> bool:
    try:
        c._t.once("POST", "/api/v1/fetch", {"queues": [queue + ".empty"], "timeout": 0})
    except jobbie.RateLimitedError as e:
        return e.code == "key_long_poll_limit"
    return False


def test_a_refused_worker_stops_with_the_error(server: Server, new_client: Callable[..., jobbie.Client],
                                               queue: str) -> None:
    producer = new_client("producer")
    w = jobbie.Worker(producer, [queue], lambda job: None, fetch_timeout=2)
    with pytest.raises(jobbie.ForbiddenError):
        asyncio.run(w.run(handle_signals=False))


def test_a_stale_workers_ack_does_not_settle_the_new_lease(client: jobbie.Client, queue: str) -> None:
    async def main() -> None:
        taken: dict[str, Any] = {}
        started = threading.Event()

        async def handler(job: jobbie.Job) -> Any:
            # Hold the event loop past the 1 s lease (no heartbeat goes out)
            # until another worker has leased the job again.
            started.set()
            deadline = time.monotonic() + 30
            while "job" not in taken and time.monotonic() < deadline:
                time.sleep(0.05)
            return "stale"

        def thief() -> None:
            if started.wait(30):  # the worker holds the job: take it once its lease ran out,
                # under the same worker id, so that only the lease token tells the two apart
                taken["job"] = client.fetch([queue], worker_id=w.worker_id, timeout=30)

        jid = (await asyncio.to_thread(client.enqueue, queue, 1, lease_duration=1, retry_backoff="none"))["job_id"]
        # One slot: the worker has no fetch waiting that could take the job back.
        w = jobbie.Worker(client, [queue], handler, concurrency=1, fetch_timeout=2)
        other = threading.Thread(target=thief)
        other.start()
        async with running(w):
            await until(lambda: not w.active and "job" in taken, "the stale worker to finish")
        other.join()
        got = taken["job"]
        assert got["job_id"] == jid and got["attempt"] == 2
        j = await state(client, jid)
        assert (j["state"], j["result"]) == ("active", None), "the stale ack was refused"
        client.ack(jid, "fresh", lease_token=got["lease_token"])
        assert (await state(client, jid))["result"] == "fresh"

    asyncio.run(main())


def test_a_drained_worker_finishes_what_it_holds_and_returns(client: jobbie.Client, queue: str) -> None:
    async def main() -> None:
        gate = asyncio.Event()
        started: list[str] = []

        async def handler(job: jobbie.Job) -> Any:
            started.append(job.id)
            await gate.wait()
            return "done"

        held = (await asyncio.to_thread(client.enqueue, queue, 1))["job_id"]
        w = jobbie.Worker(client, [queue], handler, concurrency=1, fetch_timeout=2)
        run = asyncio.create_task(w.run(handle_signals=False))
        try:
            await until(lambda: started == [held], "the held job started")
            out = await asyncio.to_thread(client.drain_worker, w.worker_id)
            assert out == {"worker_id": w.worker_id, "draining": True}
            workers = await asyncio.to_thread(client.list_workers)
            assert [x["draining"] for x in workers if x["id"] == w.worker_id] == [True]
            nxt = (await asyncio.to_thread(client.enqueue, queue, 2))["job_id"]
            gate.set()
            await asyncio.wait_for(asyncio.shield(run), 30)  # returns by itself
        finally:
            w.stop()
            await asyncio.wait_for(run, 60)
        assert w.drained
        assert (await state(client, held))["state"] == "completed"
        j = await state(client, nxt)
        assert j["state"] == "pending" and j["attempt"] == 0, "nothing else fetched"
        assert started == [held]
        with pytest.raises(jobbie.NotFoundError):
            await asyncio.to_thread(client.drain_worker, "never-seen-" + queue)

    asyncio.run(main())
