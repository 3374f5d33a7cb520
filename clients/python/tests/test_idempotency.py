"""The creates that take an Idempotency-Key, against the dev server: the
SDK's list is the OpenAPI document's, a caller's key gives back the first
namespace, key, role or backup, another body under it is the typed 422,
and a retry after a lost answer reuses the call's key."""

from __future__ import annotations

import json
import uuid
from typing import Any, Iterator

import pytest

import faultproxy
import jobbie
from conftest import ROOT, Server, wait_for
from jobbie._transport import IDEMPOTENT_ROUTES


@pytest.fixture
def proxy(server: Server) -> Iterator[faultproxy.FaultProxy]:
    yield from faultproxy.serve(server.url)


def short() -> str:
    return uuid.uuid4().hex[:8]


def test_the_sdk_keys_exactly_the_routes_the_openapi_document_does() -> None:
    doc = json.loads((ROOT / "docs" / "api" / "openapi.json").read_text())
    keyed = set()
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            params: list[dict[str, Any]] = op.get("parameters") or [] if isinstance(op, dict) else []
            if any(p.get("$ref") == "#/components/parameters/IdempotencyKey"
                   or (p.get("in") == "header" and p.get("name") == "Idempotency-Key") for p in params):
                assert method == "post", path
                keyed.add(path)
    assert keyed == IDEMPOTENT_ROUTES


def test_a_namespace_create_under_the_callers_key_is_made_once(client: jobbie.Client) -> None:
    key, name = "py-" + uuid.uuid4().hex, "py-" + short()
    first = client.create_namespace(name, description="once", idempotency_key=key)
    assert client.create_namespace(name, description="once", idempotency_key=key) == first
    with pytest.raises(jobbie.IdempotencyKeyReusedError) as e:
        client.create_namespace("py-" + short(), idempotency_key=key)
    assert (e.value.status, e.value.code, e.value.field) == (422, "idempotency_key_reused", "Idempotency-Key")
    assert [n["name"] for n in client.list_namespaces()].count(name) == 1


def test_a_key_create_under_the_callers_key_gives_back_a_token_that_works(
        server: Server, client: jobbie.Client, queue: str) -> None:
    key, name = "py-" + uuid.uuid4().hex, "py-" + short()
    first = client.create_key(name, "producer", namespaces=["default"], idempotency_key=key)
    again = client.create_key(name, "producer", namespaces=["default"], idempotency_key=key)
    assert (again["id"], again["key"]) == (first["id"], first["key"])
    with jobbie.Client(server.url, again["key"]) as c:
        jid = c.enqueue(queue, 1)["job_id"]
    assert client.get_job(jid)["queue"] == queue
    assert [k["name"] for k in client.list_keys()].count(name) == 1
    with pytest.raises(jobbie.IdempotencyKeyReusedError):
        client.create_key(name, "viewer", namespaces=["default"], idempotency_key=key)
    client.revoke_key(first["id"])


def test_a_role_create_under_the_callers_key_is_made_once(client: jobbie.Client) -> None:
    key, name = "py-" + uuid.uuid4().hex, "py-role-" + short()
    perms = [{"actions": ["job.read"], "namespaces": ["*"], "queues": ["*"]}]
    first = client.create_role(name, perms, idempotency_key=key)
    again = client.create_role(name, perms, idempotency_key=key)
    assert (again["name"], again["permissions"]) == (first["name"], first["permissions"])
    with pytest.raises(jobbie.IdempotencyKeyReusedError):
        client.create_role(name, perms, description="other", idempotency_key=key)
    client.delete_role(name)


def test_a_backup_create_under_the_callers_key_starts_one_backup(client: jobbie.Client, queue: str) -> None:
    ns = "py-" + short()
    client.create_namespace(ns)
    client.with_namespace(ns).enqueue(queue, 1)
    key = "py-" + uuid.uuid4().hex
    first = client.create_backup(ns, idempotency_key=key)
    assert first["state"] == "running"
    assert client.create_backup(ns, idempotency_key=key)["id"] == first["id"]
    assert [b["id"] for b in client.list_backups(ns)] == [first["id"]]
    with pytest.raises(jobbie.IdempotencyKeyReusedError):
        client.create_backup("default", idempotency_key=key)
    done = wait_for(lambda: (b := client.get_backup(first["id"]))["state"] != "running" and b, "the backup to end")
    assert done["state"] == "completed"  # type: ignore[index]


@pytest.mark.parametrize("path", ["/api/v1/namespaces", "/api/v1/keys"])
def test_a_create_whose_answer_was_lost_is_retried_under_its_key_and_replayed(
        server: Server, proxy: faultproxy.FaultProxy, path: str) -> None:
    c = jobbie.Client(proxy.url, server.key)
    proxy.faults["POST " + path] = ["drop_after"]
    name = "py-" + short()
    if path == "/api/v1/keys":
        made = c.create_key(name, "viewer", namespaces=["*"])
        assert [k["name"] for k in c.list_keys()].count(name) == 1
        with jobbie.Client(server.url, made["key"]) as viewer:
            viewer.list_queues()  # the token of the replayed answer works
    else:
        assert c.create_namespace(name)["name"] == name
        assert [n["name"] for n in c.list_namespaces()].count(name) == 1
    calls = proxy.calls("POST", path)
    assert [(s.answered, s.replayed) for s in calls] == [("drop_after", False), ("proxied", True)]
    assert calls[0].idempotency_key is not None and calls[0].idempotency_key == calls[1].idempotency_key


def test_an_empty_key_is_sent_and_refused_naming_the_header(client: jobbie.Client, queue: str) -> None:
    # An explicit "" is the caller's key, not "none": the server refuses
    # it (as it does the TypeScript SDK's) and nothing is made.
    name = "py-" + short()
    with pytest.raises(jobbie.BadRequestError) as e:
        client.create_namespace(name, idempotency_key="")
    assert (e.value.status, e.value.field) == (400, "Idempotency-Key")
    assert name not in [n["name"] for n in client.list_namespaces()]
    with pytest.raises(jobbie.BadRequestError) as e:
        client.enqueue(queue, 1, idempotency_key="")
    assert e.value.field == "Idempotency-Key"
    assert client.search({"queue": queue})["jobs"] == []
