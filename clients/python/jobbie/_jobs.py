"""Jobs: enqueue (with every option, batches, chains and dependencies),
read, cancel, retry, move, delete, dead jobs, batches, and the worker
protocol (fetch, ack, fail, heartbeat) for those who drive it by hand."""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence, cast

from ._base import JSON, Base, drop_none, query, seg
from .trace import check_context, check_enqueue, inherited_headers
from .types_gen import (
    AckBatchResponse, Batch, BatchList, BatchResponse, ChainView, DeadPage, EnqueueRequest, EnqueueResponse, FailResponse,
    FetchedJob, HeartbeatResponse, JobDetail, JobOpResponse, StatusResponse,
)

Duration = float | str


def job_spec(
    queue: str,
    payload: Any = None,
    *,
    priority: str | None = None,
    scheduled_at: str | None = None,
    unique_key: str | None = None,
    unique_period: int | None = None,
    max_retries: int | None = None,
    retry_backoff: str | None = None,
    retry_base_delay: Duration | None = None,
    retry_max_delay: Duration | None = None,
    expire_after: Duration | None = None,
    lease_duration: Duration | None = None,
    tags: Mapping[str, str] | None = None,
    chain: Mapping[str, Any] | None = None,
    depends_on: Sequence[str] | None = None,
    on_dependency_failure: str | None = None,
    concurrency_key: str | None = None,
    fairness_key: str | None = None,
    traceparent: str | None = None,
    tracestate: str | None = None,
) -> EnqueueRequest:
    """One job as enqueue and enqueue_batch take it (see docs/api/jobs.md,
    "Enqueue options"). ``chain`` is ``{"steps": [...], "on_failure": ...,
    "on_exit": ...}``; ``depends_on`` lists job ids."""
    return cast(EnqueueRequest, drop_none({
        "queue": queue, "payload": payload, "priority": priority, "scheduled_at": scheduled_at,
        "unique_key": unique_key, "unique_period": unique_period, "max_retries": max_retries,
        "retry_backoff": retry_backoff, "retry_base_delay": retry_base_delay,
        "retry_max_delay": retry_max_delay, "expire_after": expire_after, "lease_duration": lease_duration,
        "tags": dict(tags) if tags is not None else None, "chain": dict(chain) if chain is not None else None,
        "depends_on": list(depends_on) if depends_on is not None else None,
        "on_dependency_failure": on_dependency_failure, "concurrency_key": concurrency_key,
        "fairness_key": fairness_key, "traceparent": traceparent, "tracestate": tracestate,
    }))


class JobsMixin(Base):
    def enqueue(self, queue: str, payload: Any = None, *, idempotency_key: str | None = None,
                inherit_trace: bool = True, **options: Any) -> EnqueueResponse:
        """Enqueue one job: ``{"job_id", "status", "unique_existing"}``.
        ``options`` are job_spec's keywords. ``idempotency_key`` (default: a
        random one per call) makes a repeat within 24 h get the first
        answer instead of a second job.

        Within a Worker's handler a job that names no ``traceparent``
        continues the trace of the job being handled, unless
        ``inherit_trace`` is False. A bad ``traceparent`` or ``tracestate``
        (of the job or a chain step) raises BadRequestError naming it
        before anything is sent."""
        spec = job_spec(queue, payload, **options)
        check_enqueue(spec)
        return self._create("/api/v1/enqueue", spec, idempotency_key,  # type: ignore[no-any-return]
                            inherited_headers(inherit_trace and "traceparent" not in spec))

    def enqueue_batch(self, jobs: Sequence[Mapping[str, Any]], *, batch: Mapping[str, Any] | None = None,
                      idempotency_key: str | None = None, inherit_trace: bool = True) -> BatchResponse:
        """Enqueue up to 1,000 jobs (each a job_spec), all or none. With
        ``batch`` (``{"callback_queue", "callback_payload"}``) a callback job
        is enqueued once every job finished: the answer has ``batch_id``.
        Trace context as enqueue's: each job, and the callback, that names
        no ``traceparent`` continues the handled job's trace; bad values
        raise BadRequestError naming them (``jobs[3].traceparent``)."""
        body: JSON = {"jobs": [dict(j) for j in jobs]}
        for i, j in enumerate(body["jobs"]):
            check_enqueue(j, f"jobs[{i}].")
        if batch is not None:
            body["batch"] = dict(batch)
            check_context(body["batch"], "batch.")
        return self._create("/api/v1/enqueue/batch", body, idempotency_key,  # type: ignore[no-any-return]
                            inherited_headers(inherit_trace))

    def enqueue_chain(self, steps: Sequence[Mapping[str, Any]], payload: Any = None, *,
                      on_failure: Mapping[str, Any] | None = None, on_exit: Mapping[str, Any] | None = None,
                      **options: Any) -> EnqueueResponse:
        """Enqueue a chain: the first step runs with ``payload``; each
        completed step enqueues the next with the previous result."""
        if not steps:
            raise ValueError("jobbie: a chain needs at least one step")
        chain: JSON = {"steps": [dict(s) for s in steps]}
        if on_failure is not None:
            chain["on_failure"] = dict(on_failure)
        if on_exit is not None:
            chain["on_exit"] = dict(on_exit)
        return self.enqueue(str(steps[0]["queue"]), payload, chain=chain, **options)

    def get_job(self, job_id: str) -> JobDetail:
        """Everything about a job: state, attempts, errors, progress, result, timeline."""
        return self._call("GET", f"/api/v1/jobs/{seg(job_id)}")  # type: ignore[no-any-return]

    def get_chain(self, job_id: str) -> ChainView:
        """The chain a job is a step of, every step in order."""
        return self._call("GET", f"/api/v1/jobs/{seg(job_id)}/chain")  # type: ignore[no-any-return]

    def cancel_job(self, job_id: str) -> StatusResponse:
        """Cancel a job; a running one answers ``"cancelling"``."""
        return self._call("POST", f"/api/v1/jobs/{seg(job_id)}/cancel")  # type: ignore[no-any-return]

    def retry_job(self, job_id: str) -> JobOpResponse:
        """Retry a dead, cancelled or completed job."""
        return self._call("POST", f"/api/v1/jobs/{seg(job_id)}/retry")  # type: ignore[no-any-return]

    def move_job(self, job_id: str, queue: str) -> JobOpResponse:
        return self._call("POST", f"/api/v1/jobs/{seg(job_id)}/move", {"queue": queue})  # type: ignore[no-any-return]

    def delete_job(self, job_id: str) -> None:
        self._call("DELETE", f"/api/v1/jobs/{seg(job_id)}")

    def dead_jobs(self, *, queue: str | None = None, limit: int | None = None, cursor: str | None = None) -> DeadPage:
        """One page of dead jobs, newest first: ``{"jobs", "cursor", "has_more"}``."""
        return self._call("GET", query("/api/v1/dead", {"queue": queue, "limit": limit, "cursor": cursor}))  # type: ignore[no-any-return]

    def get_batch(self, batch_id: str) -> Batch:
        """A batch: its counts and its callback."""
        return self._call("GET", f"/api/v1/batches/{seg(batch_id)}")  # type: ignore[no-any-return]

    def list_batches(self, *, limit: int | None = None, cursor: str | None = None) -> BatchList:
        return self._call("GET", query("/api/v1/batches", {"limit": limit, "cursor": cursor}))  # type: ignore[no-any-return]

    def iter_batches(self, *, limit: int | None = None) -> Iterator[Batch]:
        """Every batch, newest first, following the cursor."""
        cursor: str | None = None
        while True:
            page = self.list_batches(limit=limit, cursor=cursor)
            yield from page.get("batches") or []
            cursor = page.get("cursor")
            if not page.get("has_more") or not cursor:
                return

    # The worker protocol, for callers that drive it themselves; the
    # Worker runtime does all of this for a handler.

    def fetch(self, queues: Sequence[str], *, worker_id: str | None = None, hostname: str | None = None,
              timeout: float | None = None, lease_duration: float | None = None) -> FetchedJob | None:
        """Long-poll for one job and lease it; None when none came in time."""
        body = drop_none({"queues": list(queues), "worker_id": worker_id, "hostname": hostname,
                          "timeout": timeout, "lease_duration": lease_duration})
        wait = (timeout if timeout is not None else 30.0) + 15.0
        return self._t.call("POST", "/api/v1/fetch", body, timeout=wait).body  # type: ignore[no-any-return]

    def fetch_batch(self, queues: Sequence[str], *, max: int | None = None, worker_id: str | None = None,
                    hostname: str | None = None, timeout: float | None = None,
                    lease_duration: float | None = None) -> list[FetchedJob]:
        """Long-poll for up to ``max`` jobs (1-1000); [] when none came in time."""
        body = drop_none({"queues": list(queues), "max": max, "worker_id": worker_id, "hostname": hostname,
                          "timeout": timeout, "lease_duration": lease_duration})
        wait = (timeout if timeout is not None else 30.0) + 15.0
        out = self._t.call("POST", "/api/v1/fetch/batch", body, timeout=wait).body
        return list(out.get("jobs") or []) if isinstance(out, dict) else []

    def ack(self, job_id: str, result: Any = None, *, lease_token: str | None = None,
            worker_id: str | None = None, step_status: str | None = None,
            usage: Mapping[str, Any] | None = None) -> StatusResponse:
        """Complete a job with its result; ``usage`` (docs/api/ai.md) adds
        model usage to the job's."""
        body = drop_none({"result": result, "lease_token": lease_token, "worker_id": worker_id,
                          "step_status": step_status, "usage": dict(usage) if usage is not None else None})
        return self._call("POST", f"/api/v1/ack/{seg(job_id)}", body)  # type: ignore[no-any-return]

    def ack_batch(self, acks: Sequence[Mapping[str, Any]], *, worker_id: str | None = None) -> AckBatchResponse:
        """Ack up to 1,000 jobs (``{"job_id", "result"?, "lease_token"?}``
        each): ``{"results": [...]}``, one entry per ack."""
        body = drop_none({"acks": [dict(a) for a in acks], "worker_id": worker_id})
        return self._call("POST", "/api/v1/ack/batch", body)  # type: ignore[no-any-return]

    def fail(self, job_id: str, error: str, *, backtrace: str | None = None, lease_token: str | None = None,
             worker_id: str | None = None, non_retryable: bool = False,
             usage: Mapping[str, Any] | None = None) -> FailResponse:
        """Fail the attempt: ``{"status": "retrying"|"pending"|"dead"|..., ...}``.
        ``non_retryable`` makes the job dead at once (``reason``
        ``non_retryable``), whatever retries remain."""
        body = drop_none({"error": error, "backtrace": backtrace, "lease_token": lease_token, "worker_id": worker_id,
                          "non_retryable": True if non_retryable else None,
                          "usage": dict(usage) if usage is not None else None})
        return self._call("POST", f"/api/v1/fail/{seg(job_id)}", body)  # type: ignore[no-any-return]

    def heartbeat(self, jobs: Mapping[str, Mapping[str, Any]], *, worker_id: str | None = None) -> HeartbeatResponse:
        """Heartbeat many jobs: ``{job_id: {"progress"?, "checkpoint"?,
        "lease_token"?}}``; each job's answer status is ``ok``, ``cancel``
        or ``lost``."""
        body = drop_none({"jobs": {k: dict(v) for k, v in jobs.items()}, "worker_id": worker_id})
        return self._call("POST", "/api/v1/heartbeat", body)  # type: ignore[no-any-return]
