"""Queues, schedules, workers and the namespace's cluster health."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

from ._base import Base, drop_none, iso_time, query, seg
from .types_gen import (
    ClearResponse, ClusterHealth, DrainResponse, EnqueueResponse, Queue, QueueDeleteResponse, QueueScale, QueueStats,
    Schedule, Worker, WorkerDrainResponse,
)


class QueuesMixin(Base):
    def list_queues(self) -> list[Queue]:
        """Every queue: counts per state, throughput, oldest pending age, settings."""
        out = self._call("GET", "/api/v1/queues")
        return list(out.get("queues") or []) if isinstance(out, dict) else list(out or [])

    def get_queue(self, name: str) -> Queue:
        return self._call("GET", f"/api/v1/queues/{seg(name)}")  # type: ignore[no-any-return]

    def declare_queue(self, name: str, *, description: str | None = None, paused: bool | None = None,
                      concurrency: int | None = None, throttle: Mapping[str, Any] | None = None,
                      defaults: Mapping[str, Any] | None = None,
                      key_concurrency: Mapping[str, Any] | None = None,
                      **settings: Any) -> Queue:
        """The whole configuration in one idempotent PUT: creates the queue
        or replaces every setting (a setting left out is reset)."""
        body = drop_none({"description": description, "paused": paused, "concurrency": concurrency,
                          "throttle": dict(throttle) if throttle is not None else None,
                          "defaults": dict(defaults) if defaults is not None else None,
                          "key_concurrency": dict(key_concurrency) if key_concurrency is not None else None,
                          **settings})
        return self._call("PUT", f"/api/v1/queues/{seg(name)}", body)  # type: ignore[no-any-return]

    def delete_queue(self, name: str) -> QueueDeleteResponse:
        """The queue and all its jobs."""
        return self._call("DELETE", query(f"/api/v1/queues/{seg(name)}", {"confirm": True}))  # type: ignore[no-any-return]

    def pause_queue(self, name: str) -> Queue:
        return self._call("POST", f"/api/v1/queues/{seg(name)}/pause")  # type: ignore[no-any-return]

    def resume_queue(self, name: str) -> Queue:
        return self._call("POST", f"/api/v1/queues/{seg(name)}/resume")  # type: ignore[no-any-return]

    def drain_queue(self, name: str) -> DrainResponse:
        """Pause; ``"drained": true`` once no job is active."""
        return self._call("POST", f"/api/v1/queues/{seg(name)}/drain")  # type: ignore[no-any-return]

    def clear_queue(self, name: str) -> ClearResponse:
        """Delete the queue's pending, scheduled and retrying jobs."""
        return self._call("POST", f"/api/v1/queues/{seg(name)}/clear")  # type: ignore[no-any-return]

    def set_queue_concurrency(self, name: str, max: int | None) -> Queue:
        """At most ``max`` active jobs; None removes the cap."""
        if max is None:
            return self._call("DELETE", f"/api/v1/queues/{seg(name)}/concurrency")  # type: ignore[no-any-return]
        return self._call("POST", f"/api/v1/queues/{seg(name)}/concurrency", {"max": max})  # type: ignore[no-any-return]

    def set_queue_throttle(self, name: str, rate: int | None, period: float | str | None = None) -> Queue:
        """At most ``rate`` jobs per ``period``; rate None removes the throttle."""
        if rate is None:
            return self._call("DELETE", f"/api/v1/queues/{seg(name)}/throttle")  # type: ignore[no-any-return]
        return self._call("POST", f"/api/v1/queues/{seg(name)}/throttle", {"rate": rate, "period": period})  # type: ignore[no-any-return]

    def set_queue_defaults(self, name: str, **defaults: Any) -> Queue:
        """Defaults for the job fields a producer leaves out (``max_retries``,
        ``retry_backoff``, ``lease_duration``, ``expire_after``, ``retention``...)."""
        return self._call("POST", f"/api/v1/queues/{seg(name)}/defaults", defaults)  # type: ignore[no-any-return]

    def queue_stats(self, name: str, *, from_: str | datetime | None = None, to: str | datetime | None = None,
                    step: str | None = None) -> QueueStats:
        """The queue's history: ``{"queue", "step", "from", "to", "buckets"}``,
        one bucket per step over [from, to), oldest first, every step
        present (docs/api/queues.md, "History"). ``step`` is ``"1m"``
        (kept 48 hours; the default) or ``"1h"`` (kept 30 days); ``from_``
        and ``to`` are RFC 3339 or aware datetimes, by default the hour (a
        day for ``"1h"``) before now. A bad one is BadRequestError naming
        its field; a queue the key cannot see NotFoundError."""
        out: QueueStats = self._call("GET", query(f"/api/v1/queues/{seg(name)}/stats", {
            "from": iso_time(from_), "to": iso_time(to), "step": step}))
        if out.get("buckets") is None:
            out["buckets"] = []
        return out

    def queue_scale(self, name: str) -> QueueScale:
        """What an autoscaler sizes the queue's workers by, live:
        ``{"queue", "backlog", "oldest_pending_age", "in_flight", "demand",
        "paused", "limited_by"?}``; demand is the jobs in flight and the
        pending jobs workers could take now (none while paused, at most a
        concurrency limit's room; "limited_by" says which held them out),
        never 0 while a job is in flight (docs/api/queues.md, "Autoscaling")."""
        return self._call("GET", f"/api/v1/queues/{seg(name)}/scale")  # type: ignore[no-any-return]

    # Schedules: every {id} takes the schedule's name as well.

    def list_schedules(self) -> list[Schedule]:
        out = self._call("GET", "/api/v1/schedules")
        return list(out.get("schedules") or [])

    def create_schedule(self, name: str, queue: str, cron: str, *, timezone: str | None = None,
                        payload: Any = None, priority: str | None = None, unique_key: str | None = None,
                        max_retries: int | None = None, enabled: bool | None = None,
                        idempotency_key: str | None = None) -> Schedule:
        body = drop_none({"name": name, "queue": queue, "cron": cron, "timezone": timezone, "payload": payload,
                          "priority": priority, "unique_key": unique_key, "max_retries": max_retries,
                          "enabled": enabled})
        return self._create("/api/v1/schedules", body, idempotency_key)  # type: ignore[no-any-return]

    def get_schedule(self, id_or_name: str) -> Schedule:
        return self._call("GET", f"/api/v1/schedules/{seg(id_or_name)}")  # type: ignore[no-any-return]

    def update_schedule(self, id_or_name: str, schedule: Mapping[str, Any]) -> Schedule:
        """Replace every field (what is left out takes its default)."""
        return self._call("PUT", f"/api/v1/schedules/{seg(id_or_name)}", dict(schedule))  # type: ignore[no-any-return]

    def delete_schedule(self, id_or_name: str) -> None:
        self._call("DELETE", f"/api/v1/schedules/{seg(id_or_name)}")

    def enable_schedule(self, id_or_name: str) -> Schedule:
        return self._call("POST", f"/api/v1/schedules/{seg(id_or_name)}/enable")  # type: ignore[no-any-return]

    def disable_schedule(self, id_or_name: str) -> Schedule:
        return self._call("POST", f"/api/v1/schedules/{seg(id_or_name)}/disable")  # type: ignore[no-any-return]

    def run_schedule(self, id_or_name: str) -> EnqueueResponse:
        """Enqueue the schedule's job now: ``{"job_id", "status", ...}``."""
        return self._call("POST", f"/api/v1/schedules/{seg(id_or_name)}/run")  # type: ignore[no-any-return]

    def preview_schedule(self, cron: str, *, timezone: str | None = None, count: int | None = None) -> list[str]:
        """The next run times of a cron expression; nothing is stored."""
        out = self._call("POST", "/api/v1/schedules/preview",
                         drop_none({"cron": cron, "timezone": timezone, "count": count}))
        return list(out.get("next_runs") or [])

    def list_workers(self) -> list[Worker]:
        """Every worker seen in the namespace: hostname, queues, active jobs, last seen."""
        out = self._call("GET", "/api/v1/workers")
        return list(out.get("workers") or [])

    def drain_worker(self, worker_id: str) -> WorkerDrainResponse:
        """Ask a worker to stop taking jobs: ``{"worker_id", "draining": true}``.
        Its fetches get none from then on; a Worker under that id finishes
        what it holds and returns from run()."""
        return self._call("POST", f"/api/v1/workers/{seg(worker_id)}/drain")  # type: ignore[no-any-return]

    def cluster(self) -> ClusterHealth:
        """The namespace's shard: leader, health, nodes."""
        return self._call("GET", "/api/v1/cluster")  # type: ignore[no-any-return]
