"""How a request travels: the headers every call carries, the retry policy
(429, 503 and network errors, with backoff honouring Retry-After, one
Idempotency-Key per logical call), and the blocking transport on
http.client with one keep-alive connection per thread."""

from __future__ import annotations

import http.client
import json
import random
import socket
import ssl
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping
from urllib.parse import urlsplit

from .errors import JobbieError, NetworkError, error_from_response

__all__ = ["Config", "Backoff", "Response"]

USER_AGENT = "jobbie-python/0.1"
MIN_BACKOFF = 0.1
MAX_BACKOFF = 5.0
MAX_RETRY_AFTER = 30.0
MAX_ERROR_BODY = 64 << 10


@dataclass
class Config:
    """Where and as whom requests go. ``retries`` is how many times a call
    is sent again after a 429, 502, 503, 504 or a network error."""

    url: str
    api_key: str = ""
    namespace: str = ""
    timeout: float = 30.0
    retries: int = 4
    ca_file: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # Derived from url.
    scheme: str = field(init=False, default="")
    host: str = field(init=False, default="")
    port: int = field(init=False, default=0)
    prefix: str = field(init=False, default="")
    ssl_context: ssl.SSLContext | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        u = urlsplit(self.url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"jobbie: url {self.url!r} is not http(s)://host[:port]")
        self.scheme = u.scheme
        self.host = u.hostname
        self.port = u.port or (443 if u.scheme == "https" else 80)
        self.prefix = u.path.rstrip("/")
        if self.scheme == "https":
            self.ssl_context = ssl.create_default_context(cafile=self.ca_file)

    def request_headers(self, body: bool, idempotency_key: str | None, extra: Mapping[str, str] | None) -> dict[str, str]:
        h = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if self.api_key:
            h["Authorization"] = "Bearer " + self.api_key
        if self.namespace:
            h["X-Jobbie-Namespace"] = self.namespace
        if body:
            h["Content-Type"] = "application/json"
        if idempotency_key is not None:  # "" too: the server refuses it, naming the header
            h["Idempotency-Key"] = idempotency_key
        h.update(self.headers)
        if extra:
            h.update(extra)
        return h


def new_idempotency_key() -> str:
    return uuid.uuid4().hex


class Backoff:
    """Growing, jittered delays; a server's Retry-After takes precedence."""

    def __init__(self) -> None:
        self.n = 0

    def next(self, err: BaseException | None = None) -> float:
        self.n += 1
        if isinstance(err, JobbieError) and err.retry_after > 0:
            return min(err.retry_after, MAX_RETRY_AFTER)
        d: float = min(MIN_BACKOFF * float(2 ** min(self.n - 1, 16)), MAX_BACKOFF)
        return d / 2 + float(random.uniform(0, d / 2))

    def reset(self) -> None:
        self.n = 0


def should_retry(err: JobbieError) -> bool:
    return err.status == 0 or err.retryable


# The POST routes that take an Idempotency-Key (the OpenAPI document's
# header parameter, which a test compares): the shard's four and the four
# control serves. The server refuses the header on every other route.
IDEMPOTENT_ROUTES = frozenset({
    "/api/v1/enqueue", "/api/v1/enqueue/batch", "/api/v1/schedules", "/api/v1/webhooks",
    "/api/v1/namespaces", "/api/v1/keys", "/api/v1/roles", "/api/v1/backups",
})

# POSTs that take no Idempotency-Key and would make something again if
# sent twice: a network error (the request may have been applied) is not
# retried for them; a 429 or 503 answer (it was not) still is.
_REPEATS_CREATE = ("/api/v1/jobs/bulk", "/api/v1/shards/join-tokens")
_REPEATS_CREATE_SUFFIX = ("/run", "/rotate", "/rotate-secret", "/test", "/redeliver", "/join-tokens", "/restore")


def retry_network_error(method: str, path: str, idempotency_key: str | None) -> bool:
    """Whether a request that got no answer may be sent again."""
    if method != "POST" or idempotency_key:
        return True
    p = path.split("?", 1)[0]
    return p not in _REPEATS_CREATE and not p.endswith(_REPEATS_CREATE_SUFFIX)


def encode(body: Any) -> bytes | None:
    if body is None:
        return None
    return json.dumps(body, separators=(",", ":")).encode()


def decode(status: int, data: bytes) -> Any:
    if status == 204 or not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return data.decode("utf-8", "replace")


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: Any


class SyncTransport:
    """Blocking requests on http.client, one keep-alive connection per
    thread, each logical call retried as Config says."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.local = threading.local()

    def _conn(self, timeout: float) -> http.client.HTTPConnection:
        c: http.client.HTTPConnection | None = getattr(self.local, "conn", None)
        if c is None:
            if self.cfg.scheme == "https":
                c = http.client.HTTPSConnection(self.cfg.host, self.cfg.port, timeout=timeout, context=self.cfg.ssl_context)
            else:
                c = http.client.HTTPConnection(self.cfg.host, self.cfg.port, timeout=timeout)
            self.local.conn = c
        c.timeout = timeout
        if c.sock is not None:
            c.sock.settimeout(timeout)
        return c

    def _drop(self) -> None:
        c = getattr(self.local, "conn", None)
        if c is not None:
            c.close()
            self.local.conn = None

    def close(self) -> None:
        self._drop()

    def once(
        self, method: str, path: str, body: Any = None, *, idempotency_key: str | None = None,
        headers: Mapping[str, str] | None = None, timeout: float | None = None,
    ) -> Response:
        """One attempt, no retry: a JobbieError for a non-2xx or no answer."""
        data = encode(body)
        h = self.cfg.request_headers(data is not None, idempotency_key, headers)
        t = self.cfg.timeout if timeout is None else timeout
        try:
            c = self._conn(t)
            c.request(method, self.cfg.prefix + path, body=data, headers=h)
            resp = c.getresponse()
            raw = resp.read()
            rh = {k.lower(): v for k, v in resp.getheaders()}
            if resp.will_close:
                self._drop()
        except (OSError, http.client.HTTPException) as e:
            self._drop()
            raise NetworkError(f"{method} {path}: {e.__class__.__name__}: {e}") from e
        if not 200 <= resp.status < 300:
            raise error_from_response(resp.status, rh, raw[:MAX_ERROR_BODY])
        if "ndjson" in rh.get("content-type", ""):  # JSON lines: many documents, kept as text
            return Response(resp.status, rh, raw.decode("utf-8", "replace"))
        return Response(resp.status, rh, decode(resp.status, raw))

    def call(
        self, method: str, path: str, body: Any = None, *, idempotency_key: str | None = None,
        headers: Mapping[str, str] | None = None, timeout: float | None = None, retry: bool = True,
    ) -> Response:
        """A logical call: retried on 429, 502-504 and network errors, each
        attempt with the same idempotency_key (a route that takes one)."""
        key = idempotency_key
        bo = Backoff()
        attempt = 0
        while True:
            try:
                return self.once(method, path, body, idempotency_key=key, headers=headers, timeout=timeout)
            except JobbieError as e:
                attempt += 1
                if not retry or attempt > self.cfg.retries or not should_retry(e):
                    raise
                if e.status == 0 and not retry_network_error(method, path, key):
                    raise
                time.sleep(bo.next(e))

    def stream(self, path: str, headers: Mapping[str, str], timeout: float | None) -> Iterator[bytes]:
        """GET a Server-Sent Events stream on a connection of its own,
        yielding its lines (without line endings) until it ends."""
        h = self.cfg.request_headers(False, None, headers)
        h["Accept"] = "text/event-stream"
        if self.cfg.scheme == "https":
            c: http.client.HTTPConnection = http.client.HTTPSConnection(
                self.cfg.host, self.cfg.port, timeout=timeout, context=self.cfg.ssl_context)
        else:
            c = http.client.HTTPConnection(self.cfg.host, self.cfg.port, timeout=timeout)
        try:
            try:
                c.request("GET", self.cfg.prefix + path, headers=h)
                resp = c.getresponse()
            except (OSError, http.client.HTTPException) as e:
                raise NetworkError(f"GET {path}: {e.__class__.__name__}: {e}") from e
            if resp.status != 200:
                rh = {k.lower(): v for k, v in resp.getheaders()}
                raise error_from_response(resp.status, rh, resp.read(MAX_ERROR_BODY))
            while True:
                try:
                    line = resp.readline()
                except (OSError, http.client.HTTPException, socket.timeout):
                    return
                if not line:
                    return
                yield line.rstrip(b"\r\n")
        finally:
            c.close()
