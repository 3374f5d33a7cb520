"""A real `jobbie dev` for the whole session: bin/jobbie (or $JOBBIE_BIN)
on random 127.0.0.1 ports with a temporary data directory, trusting a
self-signed certificate of 127.0.0.1 for webhook deliveries to the tests'
own HTTPS receiver."""

from __future__ import annotations

import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from typing import Callable, Iterator

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import jobbie  # noqa: E402

ROOT = HERE.parent.parent.parent
LONG_POLLS_PER_KEY = 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    key: str
    dir: pathlib.Path
    cert: pathlib.Path
    cert_key: pathlib.Path


def _self_signed(dir: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    cert, key = dir / "receiver.crt", dir / "receiver.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True)
    return cert, key


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    binary = os.environ.get("JOBBIE_BIN") or str(ROOT / "bin" / "jobbie")
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no jobbie binary at {binary}: run `make python-test` or go build -o bin/jobbie ./cmd/jobbie")
    dir = pathlib.Path(tempfile.mkdtemp(prefix="jobbie-py-"))
    cert, cert_key = _self_signed(dir)
    gw = f"127.0.0.1:{free_port()}"
    log = open(dir / "dev.log", "wb")
    proc = subprocess.Popen(
        [binary, "dev", "--data-dir", str(dir / "data"), "--addr", gw,
         "--control-addr", f"127.0.0.1:{free_port()}", "--shard-addr", f"127.0.0.1:{free_port()}",
         "--bulk-sync-max", "5", "--max-long-polls-per-key", str(LONG_POLLS_PER_KEY),
         "--push-allow-private", "--push-ca-file", str(cert)],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while b"Jobbie is running" not in (dir / "dev.log").read_bytes():
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("jobbie dev did not start:\n" + (dir / "dev.log").read_text(errors="replace")[-4000:])
            time.sleep(0.1)
        key = (dir / "data" / "owner.key").read_text().strip()
        yield Server(f"http://{gw}", key, dir, cert, cert_key)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(dir, ignore_errors=True)


@pytest.fixture
def client(server: Server) -> Iterator[jobbie.Client]:
    c = jobbie.Client(server.url, server.key)
    yield c
    c.close()


@pytest.fixture
def queue() -> str:
    """A queue of the test's own."""
    return "py." + uuid.uuid4().hex[:12]


@pytest.fixture
def new_client(server: Server, client: jobbie.Client) -> Callable[..., jobbie.Client]:
    """A client with a key of its own (long-polls are limited per key)."""
    def make(role: str = "admin", **kwargs: object) -> jobbie.Client:
        k = client.create_key("py-" + uuid.uuid4().hex[:8], role, namespaces=["*"])
        return jobbie.Client(server.url, k["key"], **kwargs)  # type: ignore[arg-type]
    return make


def wait_for(cond: Callable[[], object], what: str, timeout: float = 30.0, every: float = 0.05) -> object:
    """Poll cond until it returns something true, within a generous bound."""
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)
