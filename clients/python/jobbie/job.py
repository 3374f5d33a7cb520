"""A running job as its handler sees it, and the errors a handler raises
to steer its outcome."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from ._ai import PendingUsage, check_usage

if TYPE_CHECKING:
    from .worker import Worker

# Why a job stopped before its handler returned.
CANCELLED = "cancelled"  # the server cancelled the job: nothing is reported
LEASE_LOST = "lease_lost"  # the lease ran out and the job went elsewhere: nothing is reported
SHUTDOWN = "worker_shutdown"  # the worker stopped waiting: the job is failed with this message


class NonRetryableError(Exception):
    """Raised by a handler: the attempt fails as non-retryable (its error
    and backtrace are kept) and the server makes the job ``dead`` at once
    with ``dead_reason`` ``non_retryable``, whatever retries remain."""


class Job:
    """A fetched job. ``checkpoint`` is what an earlier attempt saved with
    ``save_checkpoint`` (None if nothing): resume from it."""

    def __init__(self, worker: "Worker", wire: dict[str, Any]) -> None:
        self.id: str = wire["job_id"]
        self.queue: str = wire.get("queue", "")
        self.payload: Any = wire.get("payload")
        self.attempt: int = int(wire.get("attempt", 0))
        self.max_retries: int = int(wire.get("max_retries", 0))
        self.tags: dict[str, str] = dict(wire.get("tags") or {})
        self.checkpoint: Any = wire.get("checkpoint")
        self.lease_duration: float = float(wire.get("lease_duration") or 0)
        self.lease_token: str = wire.get("lease_token", "")
        self.traceparent: str = wire.get("traceparent", "")
        self.tracestate: str = wire.get("tracestate", "")
        self._worker = worker
        self._task: asyncio.Task[Any] | None = None
        self._stopped: str | None = None
        self._claimed = False
        self._progress: dict[str, Any] | None = None
        self._progress_ver = 0
        self._usage = PendingUsage()

    @property
    def stop_reason(self) -> str | None:
        """CANCELLED or LEASE_LOST once the server stopped the job,
        SHUTDOWN once the worker is shutting down, else None."""
        if self._stopped:
            return self._stopped
        if self._worker.stopping:
            return SHUTDOWN
        return None

    @property
    def cancelled(self) -> bool:
        """Whether the job should stop: a handler that runs in a thread (a
        plain function), or that steps through long work, checks it between
        steps. A coroutine handler is also cancelled (asyncio.CancelledError)
        when the server cancels the job or its lease is lost."""
        return self.stop_reason is not None

    def progress(self, current: int, total: int, message: str = "") -> None:
        """Record progress; the next batched heartbeat reports it."""
        self._progress = {"current": current, "total": total}
        if message:
            self._progress["message"] = message
        self._progress_ver += 1

    def report_usage(self, *, input_tokens: int = 0, output_tokens: int = 0, cache_read_tokens: int = 0,
                     cache_write_tokens: int = 0, cost_usd: str = "", model: str = "", provider: str = "") -> None:
        """Add a model call's usage to what the job reports: summed exactly
        (``cost_usd`` a decimal string, never a float) and sent with the
        job's next heartbeat (``save_checkpoint`` sends one), else with
        its ack or fail. A bad value raises ValueError naming the field
        (``usage.cost_usd``), as the server would refuse it."""
        self._usage.add(check_usage({
            "input_tokens": input_tokens, "output_tokens": output_tokens, "cache_read_tokens": cache_read_tokens,
            "cache_write_tokens": cache_write_tokens, "cost_usd": cost_usd, "model": model, "provider": provider}))

    async def save_checkpoint(self, value: Any) -> None:
        """Store value on the server now (it also extends the lease and
        reports pending progress): a later attempt of this job starts with
        it in ``checkpoint``."""
        json.dumps(value)  # refuse what cannot be sent before sending
        await self._worker._heartbeat_jobs([self], checkpoint={self.id: value})

    def _stop(self, reason: str) -> None:
        """The server (or shutdown) stopped the job: the first reason wins,
        and a coroutine handler is cancelled."""
        if self._stopped is None:
            self._stopped = reason
            if self._task is not None and not self._task.done():
                self._task.cancel()

    def _claim(self) -> bool:
        """The outcome is this caller's to report; only the first gets True."""
        if self._claimed:
            return False
        self._claimed = True
        return True
