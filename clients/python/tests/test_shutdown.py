"""Graceful shutdown on SIGTERM, in a worker process of its own: running
jobs finish within the grace period and nothing new is fetched; a job
still running when it ends is failed with worker_shutdown, to be retried
elsewhere."""

from __future__ import annotations

import pathlib
import signal
import subprocess
import sys
import threading
from typing import Iterator

import pytest

import jobbie
from conftest import Server, wait_for

MAIN = pathlib.Path(__file__).resolve().parent / "worker_main.py"


class Proc:
    def __init__(self, args: list[str]) -> None:
        self.p = subprocess.Popen([sys.executable, str(MAIN), *args], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            self.lines.append(line.strip())

    def started(self) -> list[str]:
        return [ln.split()[1] for ln in self.lines if ln.startswith("started ")]


@pytest.fixture
def procs() -> Iterator[list[Proc]]:
    made: list[Proc] = []
    yield made
    for p in made:
        if p.p.poll() is None:
            p.p.kill()
            p.p.wait()


def test_sigterm_lets_running_jobs_finish_and_fetches_nothing_more(
        server: Server, client: jobbie.Client, queue: str, tmp_path: pathlib.Path, procs: list[Proc]) -> None:
    go = tmp_path / "go"
    jid = client.enqueue(queue, "obey")["job_id"]
    p = Proc([server.url, server.key, queue, "30", str(go)])
    procs.append(p)
    wait_for(lambda: p.started() == [jid], "the job to start")
    p.p.send_signal(signal.SIGTERM)
    # A job enqueued before the worker took the signal may rightly be
    # fetched: wait until it did.
    wait_for(lambda: "stopping" in p.lines, "the worker to take the signal")
    later = client.enqueue(queue, "obey")["job_id"]
    wait_for(lambda: client.get_job(jid)["state"] == "active", "the job still running")
    go.touch()
    assert p.p.wait(30) == 0, p.lines
    assert p.lines[-1] == "stopped"
    j = client.get_job(jid)
    assert (j["state"], j["result"], j["attempt"]) == ("completed", {"done": True}, 1)
    assert client.get_job(later)["state"] == "pending", "nothing fetched after SIGTERM"
    assert p.started() == [jid]


def test_a_job_outliving_the_grace_period_is_failed_for_a_retry(
        server: Server, client: jobbie.Client, queue: str, tmp_path: pathlib.Path, procs: list[Proc]) -> None:
    jid = client.enqueue(queue, "ignore", retry_backoff="none")["job_id"]
    p = Proc([server.url, server.key, queue, "0.5", str(tmp_path / "never")])
    procs.append(p)
    wait_for(lambda: p.started() == [jid], "the job to start")
    p.p.send_signal(signal.SIGTERM)
    assert p.p.wait(30) == 0, p.lines
    j = client.get_job(jid)
    assert j["state"] == "pending" and j["errors"][0]["error"] == "worker_shutdown", j
    # Another worker takes it up at once.
    got = client.fetch([queue], timeout=5)
    assert got is not None and got["job_id"] == jid and got["attempt"] == 2
