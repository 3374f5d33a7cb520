"""Verification of Jobbie's signed requests (webhooks and push
deliveries) per Standard Webhooks v1: the headers webhook-id,
webhook-timestamp and webhook-signature over "{id}.{timestamp}.{body}",
signed with the namespace's Ed25519 keys (``v1a``, public keys
``whpk_...``) and with an endpoint's shared secrets (``v1``, HMAC-SHA256,
``whsec_...``)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from typing import Callable, Mapping, Sequence

from . import ed25519
from .errors import WebhookUnverifiedError

DEFAULT_TOLERANCE = 300.0  # seconds either way
MAX_SIGNATURES = 8  # a rotation sends two; a few more are tolerated


def _b64(s: str) -> bytes:
    return base64.b64decode(s, validate=True)


class WebhookVerifier:
    """Trusts keys: ``whpk_<base64>`` Ed25519 public keys (as
    ``Client.signing_keys`` lists them) and ``whsec_<base64>`` secrets.
    During a rotation, trust both the old and the new key."""

    def __init__(self, keys: Sequence[str], *, tolerance: float = DEFAULT_TOLERANCE,
                 now: Callable[[], float] = time.time) -> None:
        if isinstance(keys, str):
            keys = [keys]
        if not keys:
            raise ValueError("jobbie: webhook verifier: no keys")
        self.tolerance = tolerance
        self.now = now
        self.public: list[bytes] = []
        self.secrets: list[bytes] = []
        for i, k in enumerate(keys):
            try:
                if k.startswith("whpk_"):
                    b = _b64(k[5:])
                    if len(b) != 32:
                        raise ValueError
                    self.public.append(b)
                elif k.startswith("whsec_"):
                    b = _b64(k[6:])
                    if len(b) < 24:
                        raise ValueError
                    self.secrets.append(b)
                else:
                    raise ValueError(f"jobbie: webhook verifier: key {i} starts with neither whpk_ nor whsec_")
            except (ValueError, binascii.Error) as e:
                if str(e).startswith("jobbie:"):
                    raise
                raise ValueError(f"jobbie: webhook verifier: key {i} is not a valid base64 key") from None

    def verify(self, headers: Mapping[str, str], body: bytes) -> None:
        """Raise WebhookUnverifiedError unless the request's timestamp is
        within the tolerance and one of its signatures was made by a
        trusted key over the exact body received (pass the raw bytes: do
        not decode and re-encode the JSON first)."""
        h = {k.lower(): v for k, v in headers.items()}
        mid, ts, sigs = h.get("webhook-id", ""), h.get("webhook-timestamp", ""), h.get("webhook-signature", "")
        if not mid or not ts or not sigs:
            raise WebhookUnverifiedError("missing webhook-id, webhook-timestamp or webhook-signature")
        try:
            sec = int(ts)
        except ValueError:
            raise WebhookUnverifiedError(f"webhook-timestamp {ts!r} is not a number of seconds") from None
        if abs(self.now() - sec) > self.tolerance:
            raise WebhookUnverifiedError(f"webhook-timestamp {sec} is more than {self.tolerance:g}s from now")
        content = f"{mid}.{ts}.".encode() + body
        for field in sigs.split()[:MAX_SIGNATURES]:
            if self._matches(field, content):
                return
        raise WebhookUnverifiedError("no signature matches a trusted key")

    def _matches(self, field: str, content: bytes) -> bool:
        version, sep, b64 = field.partition(",")
        if not sep:
            return False
        try:
            sig = _b64(b64)
        except (ValueError, binascii.Error):
            return False
        if version == "v1a":
            return any(ed25519.verify(pub, content, sig) for pub in self.public)
        if version == "v1":
            return any(hmac.compare_digest(hmac.new(s, content, hashlib.sha256).digest(), sig) for s in self.secrets)
        return False


def verify_webhook(headers: Mapping[str, str], body: bytes, keys: Sequence[str],
                   tolerance: float = DEFAULT_TOLERANCE) -> None:
    """Check one request against keys (see WebhookVerifier)."""
    WebhookVerifier(keys, tolerance=tolerance).verify(headers, body)
