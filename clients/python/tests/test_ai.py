"""AI workloads against a real jobbie dev: a handler's usage reports sent
with a heartbeat and the ack and summed exactly, the usage totals,
budgets' create, read, update and delete, and the jobs a budget holds
found, approved and rejected, one by one and in bulk."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import pytest

import jobbie
from test_worker import running, state, until_state


def spend(c: jobbie.Client, queue: str, cost: str) -> None:
    """Run one job of queue to completion, reporting cost_usd on its ack."""
    c.enqueue(queue, None)
    f = c.fetch([queue], worker_id="w", timeout=5)
    assert f is not None
    c.ack(f["job_id"], None, worker_id="w", lease_token=f["lease_token"], usage={"cost_usd": cost})


def test_report_usage_sums_exactly_over_a_heartbeat_and_the_ack(client: jobbie.Client, queue: str) -> None:
    async def main() -> None:
        seen: dict[str, Any] = {}

        async def handler(job: jobbie.Job) -> Any:
            job.report_usage(input_tokens=100, cost_usd="0.1", model="m-small")
            with pytest.raises(ValueError, match=r"usage\.cost_usd"):
                job.report_usage(cost_usd="0.1.2")
            with pytest.raises(ValueError, match=r"usage\.input_tokens"):
                job.report_usage(input_tokens=-1)
            await job.save_checkpoint({"step": 1})  # a heartbeat: it carries what was reported so far
            seen["after_heartbeat"] = (await state(client, job.id))["usage"]["cost_usd"]
            job.report_usage(output_tokens=7, cost_usd="0.2")
            job.report_usage(cache_read_tokens=3, cost_usd="0.3", model="m-large", provider="p")
            return "ok"

        jid = (await asyncio.to_thread(client.enqueue, queue, None))["job_id"]
        w = jobbie.Worker(client, [queue], handler, fetch_timeout=2)
        async with running(w):
            j = await until_state(client, jid, "completed")
        assert seen["after_heartbeat"] == "0.1"
        u = j["usage"]
        assert (u["input_tokens"], u["output_tokens"], u["cache_read_tokens"], u["cost_usd"]) == (100, 7, 3, "0.6")
        assert (u["model"], u["provider"]) == ("m-large", "p")

    asyncio.run(main())
    groups = client.ai_usage(group_by="queue")["groups"] or []
    g = next(g for g in groups if g["key"] == queue)
    assert (g["reports"], g["input_tokens"], g["cost_usd"]) == (2, 100, "0.6")
    with pytest.raises(jobbie.BadRequestError) as e:
        client.ai_usage(group_by="day")
    assert e.value.field == "group_by"
    # By step: a bucket per hour of the last 24, whose sums add up to the totals.
    by = client.ai_usage(group_by="queue", step="1h")
    assert by.get("step") == "1h"
    buckets = by.get("buckets") or []
    assert len(buckets) == 24 and buckets[0]["start"] == by["from"]
    mine = [g for b in buckets for g in b["groups"] or [] if g["key"] == queue]
    assert sum(g["reports"] for g in mine) == 2
    assert sum(Decimal(g["cost_usd"]) for g in mine) == Decimal("0.6")
    assert "buckets" not in client.ai_usage(group_by="queue")
    with pytest.raises(jobbie.BadRequestError) as e:
        client.ai_usage(step="90m")
    assert e.value.field == "step"


def test_budgets_and_the_jobs_they_hold(client: jobbie.Client, queue: str) -> None:
    name = "hold-" + queue
    with pytest.raises(jobbie.BadRequestError) as e:
        client.create_budget(name, "queue", "hold", queue=queue, per_job_cost_usd="free")
    assert e.value.field == "per_job_cost_usd"
    b = client.create_budget(name, "queue", "hold", queue=queue, daily_cost_usd="0.5", per_job_tokens=1000)
    assert (b["daily_cost_usd"], b.get("per_job_tokens"), b["exceeded"]) == ("0.5", 1000, False)
    assert name in [x.get("name") for x in client.list_budgets()]
    with pytest.raises(jobbie.ConflictError):
        client.create_budget(name, "queue", "hold", queue=queue, daily_tokens=1)
    b = client.update_budget(name, "queue", "hold", queue=queue, daily_cost_usd="0.25")
    assert b["daily_cost_usd"] == "0.25" and "per_job_tokens" not in b

    spend(client, queue, "0.3")
    assert client.get_budget(name)["exceeded"] is True
    held = [client.enqueue(queue, i)["job_id"] for i in range(10)]
    j = client.get_job(held[0])
    assert (j["state"], j.get("held_reason"), j.get("held_budget")) == ("held", "budget", name)
    page = client.search({"held_budget": name}, order="asc", limit=100)
    assert [x["id"] for x in page["jobs"]] == held

    assert client.approve_job(held[0]) == {"job_id": held[0], "status": "pending"}
    assert client.reject_job(held[1]) == {"job_id": held[1], "status": "cancelled"}
    with pytest.raises(jobbie.ConflictError):
        client.approve_job(held[1])
    r = client.bulk("reject", job_ids=held[2:4])
    assert r.get("affected") == 2
    # Six left: more than the dev server's synchronous limit (5), so the
    # bulk approve runs in the background.
    r = client.bulk("approve", filter={"held_budget": name})
    assert r.get("status") == "processing", r
    final = client.watch_bulk(r["bulk_operation_id"], timeout=60)  # type: ignore[typeddict-item]
    assert (final["status"], final["action"], final["affected"]) == ("completed", "approve", 6), final
    for jid in held[4:]:
        assert client.get_job(jid)["state"] == "pending"
    assert client.get_job(held[2])["cancel_reason"] == "budget_rejected"

    client.delete_budget(name)
    with pytest.raises(jobbie.NotFoundError):
        client.get_budget(name)
