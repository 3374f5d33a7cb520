"""Encryption at rest of a namespace against a real jobbie dev (its own
master key): enable, a tenant key supplied and rotated with the payload
readable throughout and the key in no answer, revoked (the payload then
refused as encryption_key_revoked), another namespace untouched."""

from __future__ import annotations

import base64
import json
import os
import urllib.request
import uuid

import pytest

import jobbie
from conftest import Server


def _key() -> str:
    return base64.b64encode(os.urandom(32)).decode()


def test_encryption(server: Server, client: jobbie.Client) -> None:
    name, other_name = "pyenc" + uuid.uuid4().hex[:8], "pyenc" + uuid.uuid4().hex[:8]
    client.create_namespace(name)
    client.create_namespace(other_name)
    ns, other = client.with_namespace(name), client.with_namespace(other_name)
    assert ns.get_encryption()["key_source"] == "none"

    e = ns.set_encryption(enabled=True)
    assert (e["enabled"], e["search_decrypt"], e["key_source"], e["generation"]) == (True, False, "operator", 1)
    jid = ns.enqueue("charges", {"card": "4111"})["job_id"]
    assert ns.get_job(jid)["payload"] == {"card": "4111"}

    k1, k2 = _key(), _key()
    e = ns.set_encryption(tenant_key=k1)
    assert e["key_source"] == "tenant" and e["tenant_key_id"]
    first_id = e["tenant_key_id"]
    req = urllib.request.Request(server.url + "/api/v1/encryption",
                                 headers={"Authorization": "Bearer " + server.key, "X-Jobbie-Namespace": name})
    with urllib.request.urlopen(req) as res:
        raw = res.read().decode()
    assert k1 not in raw and json.loads(raw)["tenant_key_id"] == first_id

    with pytest.raises(jobbie.BadRequestError) as bad:
        ns.set_encryption(tenant_key="c2hvcnQ=")
    assert bad.value.field == "tenant_key"
    assert ns.get_encryption()["tenant_key_id"] == first_id

    e = ns.set_encryption(tenant_key=k2, search_decrypt=True)
    assert e["tenant_key_id"] != first_id and (e["generation"], e["search_decrypt"]) == (1, True)
    assert ns.get_job(jid)["payload"] == {"card": "4111"}

    other.set_encryption(enabled=True)
    kept = other.enqueue("charges", {"card": "5500"})["job_id"]

    e = ns.set_encryption(revoke_tenant_key=True)
    assert (e["key_source"], e["tenant_key_id"]) == ("revoked", None)
    assert [k["generation"] for k in e["revoked_keys"]] == [1]
    with pytest.raises(jobbie.ConflictError) as revoked:
        ns.get_job(jid)
    assert jobbie.is_encryption_key_revoked(revoked.value)
    assert revoked.value.code == "encryption_key_revoked"
    assert other.get_job(kept)["payload"] == {"card": "5500"}

    e = ns.set_encryption(tenant_key=_key())
    assert (e["key_source"], e["generation"]) == ("tenant", 2)
    client.delete_namespace(name, force=True)
    client.delete_namespace(other_name, force=True)
