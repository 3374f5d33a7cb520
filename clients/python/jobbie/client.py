"""The blocking client of the Jobbie API: every resource family of a
tenant, each call retried on 429, 503 and network errors."""

from __future__ import annotations

from typing import Any, Mapping

from ._admin import AdminMixin
from ._ai import AIMixin
from ._jobs import JobsMixin
from ._observe import ObserveMixin
from ._queues import QueuesMixin
from ._search import SearchMixin
from ._transport import Config, SyncTransport


class Client(JobsMixin, QueuesMixin, SearchMixin, AdminMixin, ObserveMixin, AIMixin):
    """A client of one gateway, as one API key, in one namespace (the key's
    default unless ``namespace`` names another).

    Creating calls (enqueue, batches, schedules, keys, ...) send an
    ``Idempotency-Key``, one per call and the same on each of its retries.
    A client is safe to share between threads: each thread keeps its own
    keep-alive connection."""

    def __init__(
        self,
        url: str,
        api_key: str = "",
        *,
        namespace: str = "",
        timeout: float = 30.0,
        retries: int = 4,
        ca_file: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.config = Config(url, api_key, namespace, timeout, retries, ca_file, dict(headers or {}))
        self._t = SyncTransport(self.config)

    @classmethod
    def from_key_file(cls, url: str, key_file: str, **kwargs: Any) -> "Client":
        """A client whose key is read from a file (``jobbie dev`` writes
        the owner key to ``<data-dir>/owner.key``)."""
        with open(key_file, encoding="utf-8") as f:
            return cls(url, f.read().strip(), **kwargs)

    def with_namespace(self, namespace: str) -> "Client":
        """A client like this one working in another namespace."""
        c = self.config
        return Client(c.url, c.api_key, namespace=namespace, timeout=c.timeout, retries=c.retries,
                      ca_file=c.ca_file, headers=c.headers)

    def close(self) -> None:
        """Close this thread's connection."""
        self._t.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
