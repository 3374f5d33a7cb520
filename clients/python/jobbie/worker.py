"""The asyncio worker runtime: fetches jobs in batches for its free slots,
runs a handler for each (at most ``concurrency`` at once), heartbeats all
running jobs in one call, acks or fails each with its backtrace, stops a
job the server cancelled, backs off on 429 and 503, and shuts down
gracefully on SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import json
import inspect
import logging
import os
import secrets
import signal
import socket
import traceback
from typing import Any, Awaitable, Callable, Mapping, Sequence

from ._aio import AsyncTransport
from ._base import seg
from ._transport import Backoff, Config
from .client import Client
from .errors import JobbieError
from .job import CANCELLED, LEASE_LOST, SHUTDOWN, Job, NonRetryableError
from .trace import job_trace
from .types_gen import AIUsage, FailRequest

Handler = Callable[[Job], Awaitable[Any]] | Callable[[Job], Any]

MIN_HEARTBEAT_TIMEOUT = 5.0
REPORT_RETRIES = 5


def _permanent(e: JobbieError) -> bool:
    """A refusal retrying cannot fix: a 4xx other than 408 and 429."""
    return 400 <= e.status < 500 and e.status not in (408, 429)


class Worker:
    """Runs ``handler`` for the jobs of ``queues``. A coroutine handler runs
    on the event loop and is cancelled (asyncio.CancelledError) when the
    server cancels its job; a plain function runs in a thread and checks
    ``job.cancelled``. Its return value acks the job as its result; an
    exception fails the attempt with the exception and its traceback
    (the server schedules the retry); NonRetryableError ends the job."""

    def __init__(
        self,
        client: Client | Config,
        queues: Sequence[str],
        handler: Handler,
        *,
        concurrency: int = 10,
        worker_id: str | None = None,
        hostname: str | None = None,
        lease_duration: float | None = None,
        heartbeat_interval: float | None = None,
        fetch_timeout: float = 30.0,
        fetch_max: int | None = None,
        shutdown_grace: float = 30.0,
        logger: logging.Logger | None = None,
    ) -> None:
        if not queues:
            raise ValueError("jobbie: worker: no queues")
        if concurrency < 1:
            raise ValueError(f"jobbie: worker: concurrency {concurrency} is below 1")
        if not 0 < fetch_timeout <= 60:
            raise ValueError("jobbie: worker: fetch_timeout must be above 0 and at most 60 seconds")
        self.config = client.config if isinstance(client, Client) else client
        self.queues = list(queues)
        self.handler = handler
        self.concurrency = concurrency
        self.hostname = hostname or socket.gethostname()
        self.worker_id = worker_id or f"{self.hostname}-{os.getpid()}-{secrets.token_hex(4)}"
        self.lease_duration = lease_duration
        if heartbeat_interval is None:
            heartbeat_interval = 15.0
            if lease_duration and lease_duration / 3 < heartbeat_interval:
                heartbeat_interval = lease_duration / 3
        if heartbeat_interval <= 0 or (lease_duration and heartbeat_interval >= lease_duration):
            raise ValueError("jobbie: worker: heartbeat_interval must be positive and shorter than the lease")
        self.heartbeat_interval = heartbeat_interval
        self.fetch_timeout = fetch_timeout
        self.fetch_max = fetch_max
        self.shutdown_grace = shutdown_grace
        self.log = logger or logging.getLogger("jobbie.worker")
        self.stopping = False
        self.active: dict[str, Job] = {}
        self._t = AsyncTransport(self.config)
        self._runs: set[asyncio.Task[None]] = set()
        self._reports: set[asyncio.Task[None]] = set()
        self._stop_event: asyncio.Event | None = None
        self._slot_freed: asyncio.Event | None = None
        self._nudge: asyncio.Event | None = None
        self._fatal: BaseException | None = None
        self.drained = False  # the server asked it to stop taking jobs

    def stop(self) -> None:
        """Begin a graceful shutdown: fetch nothing more, let running jobs
        finish for up to ``shutdown_grace`` seconds, then fail those still
        running with ``worker_shutdown`` so they are retried elsewhere."""
        self.stopping = True
        if self._stop_event is not None:
            self._stop_event.set()

    def _drain(self) -> None:
        """The worker was drained (``Client.drain_worker``, ``jobbie workers
        drain``): fetch nothing more, finish what it holds (as stop())."""
        if not self.drained:
            self.log.info("jobbie worker %s: drained, finishing held jobs", self.worker_id)
        self.drained = True
        self.stop()

    async def run(self, *, handle_signals: bool = True) -> None:
        """Work until stop() (or SIGTERM or SIGINT, when handle_signals),
        then shut down gracefully and return. Raises the server's refusal
        when it refuses the worker (bad key, forbidden queue...)."""
        loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        self._slot_freed = asyncio.Event()
        self._nudge = asyncio.Event()
        if self.stopping:
            self._stop_event.set()
        signals: list[signal.Signals] = []
        for sig in (signal.SIGTERM, signal.SIGINT) if handle_signals else ():
            try:
                loop.add_signal_handler(sig, self.stop)
                signals.append(sig)
            except (ValueError, RuntimeError, NotImplementedError):
                # Not the main thread's loop, or a platform without them:
                # the caller stops the worker with stop().
                self.log.warning("jobbie worker %s: cannot handle %s here; call stop()", self.worker_id, sig.name)
        heartbeats = asyncio.create_task(self._heartbeat_loop())
        fetcher = asyncio.create_task(self._fetch_loop())
        try:
            await self._stop_event.wait()
            self.stopping = True
            fetcher.cancel()  # closes a long-poll in flight: the server leases it nothing
            await asyncio.gather(fetcher, return_exceptions=True)
            if self._runs:
                await asyncio.wait(set(self._runs), timeout=self.shutdown_grace)
            self._abandon()
            if self._runs:
                await asyncio.wait(set(self._runs), timeout=5.0)
            while self._reports:
                await asyncio.gather(*set(self._reports), return_exceptions=True)
        finally:
            heartbeats.cancel()
            await asyncio.gather(heartbeats, return_exceptions=True)
            for sig in signals:
                loop.remove_signal_handler(sig)
            await self._t.close()
        if self._fatal is not None:
            raise self._fatal

    async def _sleep_or_stop(self, seconds: float) -> bool:
        """Wait seconds, or less if the worker stops; whether it did not."""
        assert self._stop_event is not None
        try:
            await asyncio.wait_for(self._stop_event.wait(), seconds)
            return False
        except asyncio.TimeoutError:
            return True

    async def _fetch_loop(self) -> None:
        assert self._slot_freed is not None
        bo = Backoff()
        while not self.stopping:
            free = self.concurrency - len(self._runs)
            if free <= 0:
                self._slot_freed.clear()
                await self._slot_freed.wait()
                continue
            n = min(free, self.fetch_max) if self.fetch_max else free
            body: dict[str, Any] = {"queues": self.queues, "worker_id": self.worker_id, "hostname": self.hostname,
                                    "max": n, "timeout": self.fetch_timeout}
            if self.lease_duration:
                body["lease_duration"] = self.lease_duration
            try:
                resp = await self._t.call("POST", "/api/v1/fetch/batch", body,
                                          timeout=self.fetch_timeout + 15.0, retries=0)
            except JobbieError as e:
                if _permanent(e):
                    self.log.error("jobbie worker %s: fetch refused, stopping: %s", self.worker_id, e)
                    self._fatal = e
                    self.stop()
                    return
                wait = bo.next(e)
                self.log.warning("jobbie worker %s: fetch failed, again in %.1fs: %s", self.worker_id, wait, e)
                await self._sleep_or_stop(wait)
                continue
            bo.reset()
            for wire in (resp.body or {}).get("jobs") or []:
                self._start(Job(self, wire))
            if resp.headers.get("jobbie-worker-drain") == "true":
                self._drain()
                return

    def _start(self, job: Job) -> None:
        assert self._nudge is not None
        self.active[job.id] = job
        if job.lease_duration and job.lease_duration / 3 < self.heartbeat_interval:
            self._nudge.set()
        run = asyncio.create_task(self._process(job))
        self._runs.add(run)
        run.add_done_callback(self._run_done)

    def _run_done(self, run: asyncio.Task[None]) -> None:
        assert self._slot_freed is not None
        self._runs.discard(run)
        self._slot_freed.set()

    async def _invoke(self, job: Job) -> Any:
        # Runs in the job's own task, so the trace set here is the
        # handler's alone (and its threads', which asyncio.to_thread copies).
        with job_trace(job.traceparent, job.tracestate):
            return await self._call_handler(job)

    async def _call_handler(self, job: Job) -> Any:
        if inspect.iscoroutinefunction(self.handler):
            return await self.handler(job)
        result = await asyncio.to_thread(self.handler, job)
        if inspect.isawaitable(result):
            return await result
        return result

    async def _process(self, job: Job) -> None:
        job._task = asyncio.create_task(self._invoke(job))
        error: BaseException | None = None
        result: Any = None
        try:
            result = await job._task
        except asyncio.CancelledError as e:
            if job._stopped is None:  # the handler cancelled itself: a failure
                error = e
        except Exception as e:  # noqa: BLE001 - every handler error fails the attempt
            error = e
        self.active.pop(job.id, None)
        if not job._claim():
            return  # shutdown gave up on it and failed it already
        if job._stopped in (CANCELLED, LEASE_LOST):
            self.log.debug("jobbie worker %s: job %s stopped by the server (%s)", self.worker_id, job.id, job._stopped)
            return
        if error is not None:
            await self._fail(job, error)
        else:
            await self._ack(job, result)

    def _abandon(self) -> None:
        """Fail every job still running with worker_shutdown and cancel its
        handler; a handler that ignores that is left to end on its own,
        and its outcome is ignored."""
        for job in list(self.active.values()):
            self.active.pop(job.id, None)
            if job._claim():
                job._stop(SHUTDOWN)
                report = asyncio.create_task(self._fail(job, RuntimeError(SHUTDOWN), message=SHUTDOWN))
                self._reports.add(report)
                report.add_done_callback(self._reports.discard)

    async def _report(self, what: str, job: Job, path: str, body: Mapping[str, Any]) -> Any:
        try:
            return (await self._t.call("POST", path, body, retries=REPORT_RETRIES)).body
        except JobbieError as e:
            self.log.warning("jobbie worker %s: %s of job %s failed: %s", self.worker_id, what, job.id, e)
            return None

    async def _ack(self, job: Job, result: Any) -> None:
        body: dict[str, Any] = {"lease_token": job.lease_token, "worker_id": self.worker_id}
        if result is not None:
            body["result"] = result
        try:
            json.dumps(body)
            usage = job._usage.take()
            if usage is not None:
                body["usage"] = usage
        except (TypeError, ValueError) as e:
            await self._fail(job, e)
            return
        await self._report("ack", job, f"/api/v1/ack/{seg(job.id)}", body)

    async def _fail(self, job: Job, error: BaseException, *, message: str | None = None) -> None:
        msg = message or (f"{type(error).__name__}: {error}" if str(error) else type(error).__name__)
        bt = "" if message else "".join(traceback.format_exception(error))
        body: FailRequest = {"error": msg, "lease_token": job.lease_token, "worker_id": self.worker_id}
        if bt:
            body["backtrace"] = bt
        if isinstance(error, NonRetryableError):
            body["non_retryable"] = True
        usage = job._usage.take()
        if usage is not None:
            body["usage"] = usage
        await self._report("fail", job, f"/api/v1/fail/{seg(job.id)}", body)

    async def _heartbeat_loop(self) -> None:
        assert self._nudge is not None
        while True:
            try:
                await asyncio.wait_for(self._nudge.wait(), self._heartbeat_every())
                self._nudge.clear()
                continue  # a short lease started: wait again, the shorter interval now
            except asyncio.TimeoutError:
                pass
            jobs = list(self.active.values())
            if jobs:
                try:
                    await self._heartbeat_jobs(jobs)
                except JobbieError as e:
                    self.log.warning("jobbie worker %s: heartbeat of %d jobs failed: %s", self.worker_id, len(jobs), e)

    def _heartbeat_every(self) -> float:
        every = self.heartbeat_interval
        for job in self.active.values():
            if job.lease_duration and job.lease_duration / 3 < every:
                every = job.lease_duration / 3
        return every

    async def _heartbeat_jobs(self, jobs: list[Job], checkpoint: dict[str, Any] | None = None) -> None:
        """One heartbeat for jobs: extends their leases, delivers their
        progress (and checkpoints), and stops those the server cancelled
        or took back."""
        entries: dict[str, Any] = {}
        versions = {}
        sent: dict[str, AIUsage] = {}  # given back to the jobs if the heartbeat fails
        for job in jobs:
            e: dict[str, Any] = {"lease_token": job.lease_token}
            if job._progress is not None:
                e["progress"] = job._progress
            usage = job._usage.take()
            if usage is not None:
                e["usage"] = sent[job.id] = usage
            versions[job.id] = job._progress_ver
            if checkpoint and job.id in checkpoint:
                e["checkpoint"] = checkpoint[job.id]
            entries[job.id] = e
        try:
            resp = await self._t.call("POST", "/api/v1/heartbeat", {"worker_id": self.worker_id, "jobs": entries},
                                      timeout=max(self.heartbeat_interval, MIN_HEARTBEAT_TIMEOUT))
        except BaseException:
            for job in jobs:
                job._usage.restore(sent.get(job.id))
            raise
        answers = (resp.body or {}).get("jobs") or {}
        if (resp.body or {}).get("drain") is True:
            self._drain()
        for job in jobs:
            if job._progress_ver == versions[job.id]:
                job._progress = None
            status = (answers.get(job.id) or {}).get("status")
            if status == "cancel":
                job._stop(CANCELLED)
            elif status == "lost":
                job._stop(LEASE_LOST)
