"""Jobbie's Python SDK: a blocking client of the whole API, an asyncio
worker runtime, and verification of signed webhooks and push deliveries.
Standard library only."""

from __future__ import annotations

from ._ai import format_cost_usd, parse_cost_usd
from ._search import Event
from ._jobs import job_spec
from .client import Client
from .errors import (
    BadRequestError,
    ConflictError,
    ForbiddenError,
    IdempotencyKeyReusedError,
    JobbieError,
    NetworkError,
    NotFoundError,
    RateLimitedError,
    TooLargeError,
    UnauthenticatedError,
    UnavailableError,
    WebhookUnverifiedError,
    is_bad_request,
    is_conflict,
    is_encryption_key_revoked,
    is_lease_mismatch,
    is_not_found,
    is_rate_limited,
    is_retryable,
)
from .job import CANCELLED, LEASE_LOST, SHUTDOWN, Job, NonRetryableError
from ._observe import AUDIT_CURSOR_HEADER
from .trace import job_trace
from .webhooks import WebhookVerifier, verify_webhook
from .worker import Worker

__version__ = "0.1.0"

__all__ = [
    "AUDIT_CURSOR_HEADER", "BadRequestError", "CANCELLED", "Client", "ConflictError", "Event", "ForbiddenError", "IdempotencyKeyReusedError", "Job", "JobbieError",
    "LEASE_LOST", "NetworkError", "NonRetryableError", "NotFoundError", "RateLimitedError", "SHUTDOWN",
    "TooLargeError", "UnauthenticatedError", "UnavailableError", "WebhookUnverifiedError", "WebhookVerifier",
    "Worker", "is_bad_request", "is_conflict", "is_encryption_key_revoked", "is_lease_mismatch", "is_not_found", "is_rate_limited",
    "format_cost_usd", "is_retryable", "job_spec", "job_trace", "parse_cost_usd", "verify_webhook",
]
