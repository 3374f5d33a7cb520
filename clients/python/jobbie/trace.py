"""W3C Trace Context on enqueues (docs/api/jobs.md, "Trace context"):
the checks the server makes, made before sending, and the trace of the
job a worker's handler runs, which enqueues made within it continue."""

from __future__ import annotations

import contextlib
import contextvars
import re
from typing import Any, Iterator, Mapping

from .errors import BadRequestError

MAX_TRACESTATE_BYTES = 512
MAX_TRACESTATE_MEMBERS = 32

_TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}")
_KEY = re.compile(r"[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13}")
_VALUE = re.compile(r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]")

# The job a handler runs: (traceparent, tracestate), or None outside one.
_current: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar("jobbie_trace", default=None)


def _bad(field: str, message: str) -> BadRequestError:
    # The answer the server would give, without the round trip.
    return BadRequestError(400, "bad_request", message, field=field)


def check_traceparent(v: str, field: str = "traceparent") -> None:
    """Raise BadRequestError naming ``field`` unless ``v`` is a traceparent
    of version 00 with neither id all zeros."""
    m = _TRACEPARENT.fullmatch(v) if isinstance(v, str) else None
    if m is None:
        raise _bad(field, f"{field} must be 00-<32 lowercase hex trace id>-<16 hex parent id>-<2 hex flags>")
    if m.group(1).strip("0") == "" or m.group(2).strip("0") == "":
        raise _bad(field, f"{field}'s trace id and parent id must not be all zeros")


def check_tracestate(v: str, field: str = "tracestate") -> None:
    """Raise BadRequestError naming ``field`` unless ``v`` is a W3C
    tracestate within the limits the server keeps."""
    if not isinstance(v, str):
        raise _bad(field, f"{field} must be a string")
    if len(v.encode()) > MAX_TRACESTATE_BYTES:
        raise _bad(field, f"{field} is {len(v.encode())} bytes; the limit is {MAX_TRACESTATE_BYTES}")
    seen: set[str] = set()
    for member in v.split(","):
        member = member.strip(" \t")
        if not member:
            continue
        key, eq, value = member.partition("=")
        if not eq or not _KEY.fullmatch(key) or not _VALUE.fullmatch(value):
            raise _bad(field, f"{field} member {member!r} must be key=value of W3C's form")
        if key in seen:
            raise _bad(field, f"{field} names {key!r} twice")
        seen.add(key)
    if len(seen) > MAX_TRACESTATE_MEMBERS:
        raise _bad(field, f"{field} has {len(seen)} list members; the limit is {MAX_TRACESTATE_MEMBERS}")


def check_context(spec: Mapping[str, Any], prefix: str = "") -> None:
    """Check the traceparent and tracestate of one job, chain step or
    batch object; a tracestate only beside a traceparent."""
    tp, ts = spec.get("traceparent"), spec.get("tracestate")
    if tp is not None:
        check_traceparent(tp, prefix + "traceparent")
    if ts is not None:
        if tp is None:
            raise _bad(prefix + "tracestate", f"{prefix}tracestate needs a traceparent beside it")
        check_tracestate(ts, prefix + "tracestate")


def check_enqueue(spec: Mapping[str, Any], prefix: str = "") -> None:
    """Check a job's trace context and its chain's, naming fields as the
    server does (``chain.steps[1].traceparent``)."""
    check_context(spec, prefix)
    chain = spec.get("chain") or {}
    for i, step in enumerate(chain.get("steps") or []):
        check_context(step, f"{prefix}chain.steps[{i}].")
    for h in ("on_failure", "on_exit"):
        if chain.get(h):
            check_context(chain[h], f"{prefix}chain.{h}.")


def current() -> tuple[str, str] | None:
    """The (traceparent, tracestate) of the job whose handler is running
    in this context, or None."""
    return _current.get()


@contextlib.contextmanager
def job_trace(traceparent: str, tracestate: str = "") -> Iterator[None]:
    """Within the block, enqueues of this context that name no trace
    continue the given one (the worker runs each handler so)."""
    token = _current.set((traceparent, tracestate) if traceparent else None)
    try:
        yield
    finally:
        _current.reset(token)


def inherited_headers(inherit: bool) -> dict[str, str]:
    """The running job's trace as the headers of an enqueue: the server
    applies them to each job (and batch callback) that names none."""
    tc = _current.get() if inherit else None
    if tc is None:
        return {}
    h = {"traceparent": tc[0]}
    if tc[1]:
        h["tracestate"] = tc[1]
    return h
