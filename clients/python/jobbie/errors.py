"""Errors of the Jobbie API: one exception type carrying the server's code,
field and request id, with a subclass per kind of answer worth telling apart."""

from __future__ import annotations

import email.utils
import json
import time
from typing import Any, Mapping


class JobbieError(Exception):
    """A non-2xx answer of the API (status 0: the request never got one)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        field: str = "",
        request_id: str = "",
        retry_after: float = 0.0,
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.request_id = request_id
        self.retry_after = retry_after
        super().__init__(str(self))

    def __str__(self) -> str:
        s = f"jobbie: {self.status} {self.code}: {self.message}"
        if self.field:
            s += f" (field {self.field})"
        if self.request_id:
            s += f" [request {self.request_id}]"
        return s

    @property
    def retryable(self) -> bool:
        """Whether the same request may succeed later (429, 502, 503, 504),
        except an answer too large to pass on, which comes again."""
        if self.code == "shard_answer_too_large":
            return False
        return self.status in (429, 502, 503, 504)


class BadRequestError(JobbieError):
    """400: bad input; ``field`` names it."""


class UnauthenticatedError(JobbieError):
    """401: missing, invalid, expired or revoked key."""


class ForbiddenError(JobbieError):
    """403: the key's role or namespaces do not allow it."""


class NotFoundError(JobbieError):
    """404: unknown, or another tenant's."""


class ConflictError(JobbieError):
    """409: a conflict (``lease_mismatch``, ``deletion_protected``, ...)."""


class TooLargeError(JobbieError):
    """413: the request body is over the gateway's limit."""


class IdempotencyKeyReusedError(JobbieError):
    """422 ``idempotency_key_reused``: the key was used for another request."""


class RateLimitedError(JobbieError):
    """429: over a limit; ``retry_after`` says when to come back."""


class UnavailableError(JobbieError):
    """502, 503 or 504: no leader yet, or a dependency down."""


class NetworkError(JobbieError):
    """The request got no answer: refused, reset or timed out."""

    def __init__(self, message: str) -> None:
        super().__init__(0, "network_error", message)


class WebhookUnverifiedError(Exception):
    """A signed request that must not be trusted."""


_BY_STATUS: dict[int, type[JobbieError]] = {
    400: BadRequestError,
    401: UnauthenticatedError,
    403: ForbiddenError,
    404: NotFoundError,
    405: NotFoundError,
    409: ConflictError,
    413: TooLargeError,
    422: IdempotencyKeyReusedError,
    429: RateLimitedError,
    502: UnavailableError,
    503: UnavailableError,
    504: UnavailableError,
}

_CODE_FOR_STATUS = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "not_found",
    409: "conflict",
    413: "too_large",
    422: "unprocessable",
    429: "rate_limited",
    502: "unavailable",
    503: "unavailable",
    504: "unavailable",
}


def parse_retry_after(value: str | None, now: float | None = None) -> float:
    """Seconds a Retry-After header asks to wait: delay seconds or an HTTP date."""
    if not value:
        return 0.0
    value = value.strip()
    if value.isdigit():
        return float(int(value))
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return 0.0
    wait = when - (time.time() if now is None else now)
    return wait if wait > 0 else 0.0


def error_from_response(status: int, headers: Mapping[str, str], body: bytes) -> JobbieError:
    """The error a non-2xx answer stands for. A body that is not the API's
    error shape (a proxy's page) still gives a code derived from the status."""
    cls = _BY_STATUS.get(status, JobbieError)
    request_id = headers.get("x-request-id", "")
    retry_after = parse_retry_after(headers.get("retry-after"))
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        parsed = None
    err = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(err, dict) and err.get("code"):
        return cls(
            status,
            str(err["code"]),
            str(err.get("message", "")),
            str(err.get("field") or ""),
            str(err.get("request_id") or request_id),
            retry_after,
        )
    text = body.decode("utf-8", "replace").strip()
    if len(text) > 200:
        text = text[:200] + "…"
    return cls(status, _CODE_FOR_STATUS.get(status, "internal"), text or f"HTTP {status}", "", request_id, retry_after)


def is_not_found(err: BaseException) -> bool:
    return isinstance(err, JobbieError) and err.status in (404, 405)


def is_conflict(err: BaseException) -> bool:
    return isinstance(err, JobbieError) and err.status == 409


def is_bad_request(err: BaseException) -> bool:
    return isinstance(err, JobbieError) and err.status == 400


def is_rate_limited(err: BaseException) -> bool:
    return isinstance(err, JobbieError) and err.status == 429


def is_lease_mismatch(err: BaseException) -> bool:
    return isinstance(err, JobbieError) and err.code == "lease_mismatch"


def is_encryption_key_revoked(err: BaseException) -> bool:
    """A read or write refused: the value was sealed under a tenant key
    since revoked, or the namespace needs a new key to seal again (409)."""
    return isinstance(err, JobbieError) and err.code == "encryption_key_revoked"


def is_retryable(err: BaseException) -> bool:
    """A network error, or an answer worth asking again later."""
    return isinstance(err, JobbieError) and (err.status == 0 or err.retryable)
