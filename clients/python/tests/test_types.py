"""The generated TypedDicts (jobbie/types_gen.py) against real answers of a
jobbie dev: every field an answer has is one its type declares, every
field the type requires is there, and nested objects and lists of them
hold to their own types; so a generator that inverts required and
optional, or drops a field, fails here."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, NotRequired, Required, Union, get_args, get_origin

import jobbie
from jobbie import types_gen


def _typed_dict(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, dict) and hasattr(t, "__required_keys__")


def conforms(value: Any, t: Any, path: str = "$") -> list[str]:
    """What of value does not hold to type t (empty when all does)."""
    origin = get_origin(t)
    if origin in (NotRequired, Required):
        return conforms(value, get_args(t)[0], path)
    if origin in (Union, types.UnionType):
        options = [conforms(value, a, path) for a in get_args(t)]
        return [] if any(not o for o in options) else min(options, key=len)
    if t is Any:
        return []
    if t is type(None):
        return [] if value is None else [f"{path}: {value!r} is not null"]
    if origin is Literal:
        return [] if value in get_args(t) else [f"{path}: {value!r} is not one of {get_args(t)}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{path}: not a list"]
        return [p for i, v in enumerate(value) for p in conforms(v, get_args(t)[0], f"{path}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{path}: not an object"]
        return [p for k, v in value.items() for p in conforms(v, get_args(t)[1], f"{path}.{k}")]
    if _typed_dict(t):
        if not isinstance(value, dict):
            return [f"{path}: not an object ({t.__name__})"]
        hints = typing.get_type_hints(t, include_extras=True)
        out = [f"{path}.{k}: not a field of {t.__name__}" for k in value if k not in hints]
        out += [f"{path}.{k}: required by {t.__name__}, missing" for k in t.__required_keys__ if k not in value]
        for k, v in value.items():
            if k in hints:
                out += conforms(v, hints[k], f"{path}.{k}")
        return out
    if t is float:
        return [] if isinstance(value, (int, float)) and not isinstance(value, bool) else [f"{path}: not a number"]
    if t in (int, str, bool):
        ok = isinstance(value, t) and (t is bool or not isinstance(value, bool))
        return [] if ok else [f"{path}: {value!r} is not {t.__name__}"]
    raise AssertionError(f"conforms: no rule for {t!r}")


def test_conforms_finds_what_differs() -> None:
    # The checker itself: a missing required field, an unknown one, a
    # wrong enum value and a wrong nested type are each found.
    good = {"job_id": "j1", "status": "completed"}
    assert conforms(good, types_gen.AckBatchResult) == []
    assert conforms({"status": "x"}, types_gen.AckBatchResult) == ["$.job_id: required by AckBatchResult, missing"]
    assert conforms({**good, "extra": 1}, types_gen.AckBatchResult) == ["$.extra: not a field of AckBatchResult"]
    assert conforms({"job_id": "j", "error": {"code": "nope", "message": "m"}}, types_gen.AckBatchResult) == \
        ["$.error.code: 'nope' is not one of " + str(get_args(types_gen.ErrorCode))]
    assert conforms({"results": [{"job_id": 1}]}, types_gen.AckBatchResponse) == ["$.results[0].job_id: 1 is not str"]


def test_answers_hold_to_the_generated_types(client: jobbie.Client, queue: str) -> None:
    client.declare_queue(queue, concurrency=2, throttle={"rate": 5, "period": "1m"}, defaults={"max_retries": 3})
    job = client.enqueue(queue, {"n": 1}, tags={"t": "x"})
    assert conforms(job, types_gen.EnqueueResponse) == []
    fetched = client.fetch([queue], timeout=5)
    assert fetched is not None
    assert conforms(fetched, types_gen.FetchedJob) == []
    assert conforms(client.ack(job["job_id"], {"ok": True}, lease_token=fetched["lease_token"]), types_gen.StatusResponse) == []
    assert conforms(client.get_job(job["job_id"]), types_gen.JobDetail) == []
    assert conforms(client.get_queue(queue), types_gen.Queue) == []
    assert conforms(client.search({"queue": queue}), types_gen.SearchPage) == []
    assert conforms(client.usage(granularity="day"), types_gen.Usage) == []
    assert conforms(client.plan(), types_gen.TenantPlan) == []
    upcoming = client.upcoming_invoice()
    assert conforms(upcoming, types_gen.Invoice) == []
    assert upcoming["status"] == "open"
    for summary in client.list_invoices():
        assert conforms(summary, types_gen.InvoiceSummary) == []
    for ns in client.list_namespaces():
        assert conforms(ns, types_gen.Namespace) == []
