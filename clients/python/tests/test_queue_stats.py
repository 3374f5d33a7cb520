"""A queue's history and its autoscaling figures against a real jobbie dev."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

import jobbie


def _totals(stats: Any) -> dict[str, int]:
    t = {"enqueued": 0, "completed": 0, "failed": 0, "dead": 0, "attempts": 0}
    for b in stats["buckets"]:
        for k in ("enqueued", "completed", "failed", "dead"):
            t[k] += b[k]
        t["attempts"] += b["processing_time"]["count"]
    return t


def test_queue_stats_and_scale(client: jobbie.Client, queue: str) -> None:
    for i in range(3):
        client.enqueue(queue, {"i": i}, max_retries=0)
    a = client.fetch([queue], worker_id="py-stats", timeout=5)
    assert a is not None
    client.ack(a["job_id"], lease_token=a["lease_token"])
    b = client.fetch([queue], worker_id="py-stats", timeout=5)
    assert b is not None
    assert client.fail(b["job_id"], "boom", lease_token=b["lease_token"])["status"] == "dead"

    minutes = client.queue_stats(queue)
    assert (minutes["queue"], minutes["step"], len(minutes["buckets"] or [])) == (queue, "1m", 60)
    assert _totals(minutes) == {"enqueued": 3, "completed": 1, "failed": 1, "dead": 1, "attempts": 2}
    hours = client.queue_stats(queue, from_=datetime.now(timezone.utc) - timedelta(hours=3), step="1h")
    assert hours["step"] == "1h" and len(hours["buckets"] or []) in (3, 4)
    assert _totals(hours)["enqueued"] == 3

    # One pending; then none pending and one held: demand is never 0 while a worker holds a job.
    s = client.queue_scale(queue)
    assert (s["queue"], s["backlog"], s["in_flight"], s["demand"], s["paused"]) == (queue, 1, 0, 1, False)
    held = client.fetch([queue], worker_id="py-stats", timeout=5)
    assert held is not None
    s = client.queue_scale(queue)
    assert (s["backlog"], s["in_flight"], s["demand"], s["oldest_pending_age"]) == (0, 1, 1, 0)
    client.ack(held["job_id"], lease_token=held["lease_token"])
    assert client.queue_scale(queue)["demand"] == 0


def test_queue_stats_refusals(client: jobbie.Client, queue: str) -> None:
    client.enqueue(queue, None)
    with pytest.raises(jobbie.BadRequestError) as e:
        client.queue_stats(queue, step="2m")
    assert e.value.field == "step"
    with pytest.raises(jobbie.BadRequestError) as e:
        client.queue_stats(queue, from_="2026-01-01T00:00:00Z", to="2025-12-31T00:00:00Z")
    assert e.value.field == "to"
    with pytest.raises(jobbie.BadRequestError) as e:
        client.queue_stats(queue, from_=datetime(2026, 1, 1))  # no time zone: not RFC 3339
    assert e.value.field == "from"
    other = "py." + uuid.uuid4().hex[:12]
    with pytest.raises(jobbie.NotFoundError):
        client.queue_stats(other)
    with pytest.raises(jobbie.NotFoundError):
        client.queue_scale(other)
