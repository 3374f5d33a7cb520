"""The base every resource family's methods build on: one call returning
the answer's decoded JSON, paths with escaped segments and query strings."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping
from urllib.parse import quote, urlencode

from ._transport import IDEMPOTENT_ROUTES, SyncTransport, new_idempotency_key

JSON = dict[str, Any]


def seg(s: str) -> str:
    """One path segment, escaped."""
    if not s:
        raise ValueError("jobbie: an empty id or name in a path")
    return quote(s, safe="")


def query(path: str, params: Mapping[str, Any]) -> str:
    q = {k: ("true" if v is True else "false" if v is False else v) for k, v in params.items() if v is not None}
    return f"{path}?{urlencode(q)}" if q else path


def iso_time(t: str | datetime | None) -> str | None:
    """A time query parameter: a datetime in ISO 8601 (RFC 3339 when it
    has a time zone), a string as given."""
    return t.isoformat() if isinstance(t, datetime) else t


def drop_none(d: Mapping[str, Any]) -> JSON:
    return {k: v for k, v in d.items() if v is not None}


class Base:
    _t: SyncTransport

    def _call(
        self, method: str, path: str, body: Any = None, *, idempotency_key: str | None = None,
        headers: Mapping[str, str] | None = None, timeout: float | None = None,
    ) -> Any:
        return self._t.call(method, path, body, idempotency_key=idempotency_key, headers=headers,
                            timeout=timeout).body

    def _create(self, path: str, body: Any, idempotency_key: str | None,
                headers: Mapping[str, str] | None = None) -> Any:
        """A POST of a route that takes an Idempotency-Key
        (IDEMPOTENT_ROUTES: the enqueues, a schedule's, a webhook
        endpoint's, a namespace's, a key's, a role's and a backup's
        create): the caller's key (an empty one too, which the server
        refuses naming the header, as it does the TypeScript SDK's), or a
        random one when none is given, the same on every retry of the
        call."""
        if path not in IDEMPOTENT_ROUTES:
            raise ValueError(f"jobbie: POST {path} takes no Idempotency-Key")
        return self._call("POST", path, body, idempotency_key=new_idempotency_key() if idempotency_key is None else idempotency_key,
                          headers=headers)
