"""Webhook signature verification: the Standard Webhooks vectors the
server's own tests use (internal/whsign), and real signed deliveries of a
jobbie dev to an HTTPS receiver of the test's own."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.server
import ssl
import threading
from typing import Iterator

import pytest

import jobbie
from conftest import Server, wait_for
from jobbie import ed25519

MSG_ID, TS, BODY = "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, b'{"test": 2432232314}'
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
HMAC_SIG = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
ED_SEED = base64.b64decode("VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk=")  # whsk_ of the asymmetric vector
ED_SIG = "v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag=="
ED_PUB = "whpk_" + base64.b64encode(ed25519.public_key(ED_SEED)).decode()


def headers(sig: str, ts: int = TS) -> dict[str, str]:
    return {"webhook-id": MSG_ID, "webhook-timestamp": str(ts), "webhook-signature": sig}


def at_vector_time() -> float:
    return float(TS)


def test_spec_vectors_verify() -> None:
    # The asymmetric vector's signature is what our Ed25519 makes of the content.
    content = f"{MSG_ID}.{TS}.".encode() + BODY
    assert "v1a," + base64.b64encode(ed25519.sign(ED_SEED, content)).decode() == ED_SIG
    assert "v1," + base64.b64encode(hmac.new(base64.b64decode(SECRET[6:]), content, hashlib.sha256).digest()).decode() == HMAC_SIG
    jobbie.WebhookVerifier([SECRET], now=at_vector_time).verify(headers(HMAC_SIG), BODY)
    jobbie.WebhookVerifier([ED_PUB], now=at_vector_time).verify(headers(ED_SIG), BODY)
    # A rotation's header carries both; either key alone verifies it.
    both = headers(f"{ED_SIG} {HMAC_SIG}")
    jobbie.WebhookVerifier([ED_PUB], now=at_vector_time).verify(both, BODY)
    jobbie.WebhookVerifier([SECRET], now=at_vector_time).verify(both, BODY)


@pytest.mark.parametrize("hdrs,body,keys,why", [
    (headers(HMAC_SIG), BODY + b" ", [SECRET], "no signature matches"),
    (headers(ED_SIG), b'{"test":2432232314}', [ED_PUB], "no signature matches"),
    (headers(ED_SIG), BODY, [SECRET], "no signature matches"),  # v1a needs a public key
    (headers(HMAC_SIG), BODY, [ED_PUB], "no signature matches"),
    (headers(HMAC_SIG, TS + 301), BODY, [SECRET], "from now"),
    (headers("v2," + HMAC_SIG[3:]), BODY, [SECRET], "no signature matches"),
    ({"webhook-id": MSG_ID, "webhook-timestamp": str(TS)}, BODY, [SECRET], "missing"),
    (headers(HMAC_SIG) | {"webhook-timestamp": "soon"}, BODY, [SECRET], "not a number"),
])
def test_bad_requests_are_not_verified(hdrs: dict[str, str], body: bytes, keys: list[str], why: str) -> None:
    with pytest.raises(jobbie.WebhookUnverifiedError, match=why):
        jobbie.WebhookVerifier(keys, now=at_vector_time).verify(hdrs, body)


def test_bad_keys_are_refused() -> None:
    for key in ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_!!!", "whpk_" + base64.b64encode(bytes(31)).decode(),
                "whsec_" + base64.b64encode(bytes(16)).decode()]:
        with pytest.raises(ValueError):
            jobbie.WebhookVerifier([key])
    with pytest.raises(ValueError):
        jobbie.WebhookVerifier([])


class Receiver(http.server.BaseHTTPRequestHandler):
    got: list[tuple[dict[str, str], bytes]] = []

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        Receiver.got.append(({k: v for k, v in self.headers.items()}, body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver(server: Server) -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(server.cert, server.cert_key)
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    Receiver.got = []
    yield f"https://127.0.0.1:{httpd.server_address[1]}/hook"
    httpd.shutdown()
    httpd.server_close()


def test_real_deliveries_verify(client: jobbie.Client, receiver: str) -> None:
    wh = client.create_webhook(receiver, ["job.completed"], secret=True, description="py")
    secret = wh["secret"]
    assert secret.startswith("whsec_")
    assert wh["id"] in [w["id"] for w in client.list_webhooks()]
    assert client.get_webhook(wh["id"])["url"] == receiver
    attempt = client.test_webhook(wh["id"])
    assert attempt["ok"] is True, attempt
    hdrs, body = Receiver.got[-1]
    public = [k["public_key"] for k in client.signing_keys()]
    jobbie.verify_webhook(hdrs, body, public)
    jobbie.verify_webhook(hdrs, body, [secret])
    with pytest.raises(jobbie.WebhookUnverifiedError):
        jobbie.verify_webhook(hdrs, body.replace(b"}", b" }", 1), public + [secret])

    # After a rotation of the namespace's keys both sign: the new list verifies.
    client.rotate_signing_keys()
    rotated = [k["public_key"] for k in client.signing_keys()]
    assert len(rotated) == 2
    client.test_webhook(wh["id"])
    hdrs, body = Receiver.got[-1]
    jobbie.verify_webhook(hdrs, body, [rotated[-1]])
    jobbie.verify_webhook(hdrs, body, [rotated[0]])
    wait_for(lambda: client.webhook_deliveries(wh["id"]), "the delivery log")
    new_secret = client.rotate_webhook_secret(wh["id"])["secret"]
    assert new_secret != secret
    client.update_webhook(wh["id"], {"url": receiver, "events": ["*"], "enabled": False})
    assert client.get_webhook(wh["id"])["enabled"] is False
    client.delete_webhook(wh["id"])
    with pytest.raises(jobbie.NotFoundError):
        client.get_webhook(wh["id"])
