"""A worker process for the shutdown tests: python worker_main.py URL KEY
QUEUE GRACE GO_FILE. Its handler prints "started <job id>", then waits
for GO_FILE to exist ("obey") or forever ("ignore" in the payload), and
returns {"done": true}. It prints "stopping" when it begins to stop (a
signal), so a test knows the signal was taken before it goes on."""

from __future__ import annotations

import asyncio
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import jobbie  # noqa: E402


class Worker(jobbie.Worker):
    def stop(self) -> None:
        print("stopping", flush=True)
        super().stop()


async def main() -> None:
    url, key, queue, grace, go = sys.argv[1:6]

    async def handler(job: jobbie.Job) -> object:
        print("started", job.id, flush=True)
        while job.payload == "ignore" or not os.path.exists(go):
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                if job.payload == "ignore":
                    raise
        return {"done": True}

    w = Worker(jobbie.Client(url, key), [queue], handler, concurrency=2, shutdown_grace=float(grace),
                      fetch_timeout=5)
    await w.run()
    print("stopped", flush=True)


asyncio.run(main())
