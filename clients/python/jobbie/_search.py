"""Search with cursors, bulk operations with their progress, and the
namespace's event stream with resume."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Callable, Generator, Iterator, Mapping, Sequence, cast

from . import sse
from ._base import JSON, Base, drop_none, query, seg
from .types_gen import BulkAccepted, BulkOperation, BulkOperationList, BulkResult, SearchJob, SearchPage
from .errors import JobbieError, NetworkError


@dataclass
class Event:
    """One job lifecycle event. Pass ``id`` as ``last_event_id`` to resume
    after it. ``missed`` marks the first event after a gap the server no
    longer had."""

    id: str
    type: str
    data: JSON
    missed: bool = False


class SearchMixin(Base):
    def search(self, filter: Mapping[str, Any] | None = None, *, cursor: str | None = None,
               limit: int | None = None, sort: str | None = None, order: str | None = None) -> SearchPage:
        """One page of the namespace's jobs matching ``filter`` (queue,
        state, tags, payload_jq, ...; docs/search.md): ``{"jobs", "total",
        "cursor", "has_more", ...}``."""
        body = dict(filter or {})
        body.update(drop_none({"cursor": cursor, "limit": limit, "sort": sort, "order": order}))
        return self._call("POST", "/api/v1/jobs/search", body)  # type: ignore[no-any-return]

    def iter_search(self, filter: Mapping[str, Any] | None = None, *, limit: int | None = None,
                    sort: str | None = None, order: str | None = None) -> Iterator[SearchJob]:
        """Every matching job, page after page, following the cursor."""
        cursor: str | None = None
        while True:
            page = self.search(filter, cursor=cursor, limit=limit, sort=sort, order=order)
            yield from page.get("jobs") or []
            cursor = page.get("cursor")
            if not page.get("has_more") or not cursor:
                return

    def bulk(self, action: str, *, job_ids: Sequence[str] | None = None, filter: Mapping[str, Any] | None = None,
             move_to_queue: str | None = None, priority: str | None = None) -> BulkResult | BulkAccepted:
        """Retry, delete, cancel, move, requeue or change the priority of
        jobs, or approve or reject the jobs an AI budget holds, by id or by
        filter (``{"held_budget": name}`` selects one budget's). A small one answers its counts
        (``affected``...); a large one runs in the background and answers
        ``{"bulk_operation_id", "status": "processing", ...}``: follow it
        with watch_bulk."""
        body = drop_none({"action": action, "job_ids": list(job_ids) if job_ids is not None else None,
                          "filter": dict(filter) if filter is not None else None,
                          "move_to_queue": move_to_queue, "priority": priority})
        return self._call("POST", "/api/v1/jobs/bulk", body)  # type: ignore[no-any-return]

    def get_bulk(self, op_id: str) -> BulkOperation:
        """A background operation: status, total, processed, affected, skipped, errors."""
        return self._call("GET", f"/api/v1/bulk/{seg(op_id)}")  # type: ignore[no-any-return]

    def list_bulk(self, *, limit: int | None = None, cursor: str | None = None) -> BulkOperationList:
        return self._call("GET", query("/api/v1/bulk", {"limit": limit, "cursor": cursor}))  # type: ignore[no-any-return]

    def cancel_bulk(self, op_id: str) -> BulkOperation:
        return self._call("DELETE", f"/api/v1/bulk/{seg(op_id)}")  # type: ignore[no-any-return]

    def watch_bulk(self, op_id: str, on_progress: Callable[[BulkOperation], None] | None = None,
                   *, timeout: float | None = None) -> BulkOperation:
        """Follow a background operation's progress stream, calling
        ``on_progress`` with each update, and return its final status. A
        stream that breaks early is reopened (the status endpoint decides
        whether it is done meanwhile)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        path = f"/api/v1/bulk/{seg(op_id)}/progress"
        while True:
            final: BulkOperation | None = None
            done = False
            try:
                for m in sse.parse(self._t.stream(path, {}, 60.0)):
                    if m.event == "progress":
                        update: BulkOperation = json.loads(m.data)
                        if on_progress is not None:
                            on_progress(update)
                    elif m.event == "done":
                        done = True
                        if m.data:
                            got: Any = json.loads(m.data)
                            if isinstance(got, dict) and got.get("status"):
                                final = cast(BulkOperation, got)
                        break
            except NetworkError:
                pass
            if final is not None:
                return final
            op = self.get_bulk(op_id)
            if done or op.get("status") not in (None, "", "processing"):
                return op
            if deadline is not None and time.monotonic() > deadline:
                raise JobbieError(0, "timeout", f"bulk operation {op_id} still processing")
            time.sleep(0.5)

    def events(self, last_event_id: str | None = None, *, reconnect: bool = True,
               read_timeout: float = 60.0) -> Generator[Event, None, None]:
        """The namespace's job lifecycle events. With ``last_event_id`` it
        resumes after that event; without, it starts with the next one. A
        broken stream is opened again from the last event received when
        ``reconnect`` (the default), so none is missed or seen twice; stop
        by leaving the loop, or with close()."""
        last = last_event_id
        while True:
            headers = {"Last-Event-ID": last} if last else {}
            try:
                for m in sse.parse(self._t.stream("/api/v1/events", headers, read_timeout)):
                    try:
                        data = json.loads(m.data) if m.data else {}
                    except ValueError:
                        data = {"raw": m.data}
                    if m.id:
                        last = m.id
                    yield Event(m.id, m.event if m.event != "message" else str(data.get("type", "")),
                                data, m.missed)
            except NetworkError:
                if not reconnect:
                    raise
            except JobbieError as e:
                if not reconnect or not e.retryable:
                    raise
                time.sleep(min(e.retry_after or 1.0, 30.0))
                continue
            if not reconnect:
                return
            time.sleep(0.2)
