"""The event stream over Server-Sent Events, resumed with Last-Event-ID."""

from __future__ import annotations

import itertools
import threading

import faultproxy
import jobbie
from conftest import Server, wait_for


def take(events, n: int, queue: str) -> list[jobbie.Event]:  # type: ignore[no-untyped-def]
    """The first n events of the stream about queue."""
    return list(itertools.islice((e for e in events if e.data.get("queue") == queue), n))


def test_events_resume_after_the_last_id(server: Server, queue: str) -> None:
    c = jobbie.Client(server.url, server.key)
    stream = c.events()
    first: list[jobbie.Event] = []
    reader = threading.Thread(target=lambda: first.extend(take(stream, 2, queue)))
    reader.start()
    # The stream starts with the next event: enqueue until the reader has two
    # (the first enqueue may come before the stream is open).
    ids: list[str] = []
    while reader.is_alive() and len(ids) < 50:
        ids.append(c.enqueue(queue, len(ids))["job_id"])
        reader.join(0.2)
    reader.join(30)
    assert [e.type for e in first] == ["enqueued", "enqueued"]
    assert first[0].id and first[0].id != first[1].id
    stream.close()

    later = [c.enqueue(queue, "later")["job_id"] for _ in range(3)]
    resumed = take(c.events(first[1].id), 3 + len(ids) - (ids.index(first[1].data["job_id"]) + 1), queue)
    got = [e.data["job_id"] for e in resumed]
    after = ids[ids.index(first[1].data["job_id"]) + 1:] + later
    assert got == after, "every event after the id, in order, none twice"
    assert all(not e.missed for e in resumed)


def test_a_broken_stream_is_reopened_from_the_last_event(server: Server, queue: str) -> None:
    relay = faultproxy.Relay(server.url)
    try:
        c = jobbie.Client(server.url, server.key)
        stream = jobbie.Client(relay.url, server.key).events()
        got: list[jobbie.Event] = []

        def read() -> None:
            for e in stream:
                if e.data.get("queue") == queue:
                    got.append(e)
                    if len(got) == 6:
                        return

        reader = threading.Thread(target=read)
        reader.start()
        ids: list[str] = []
        while not got and len(ids) < 50:  # until the stream is surely open
            ids.append(c.enqueue(queue, len(ids))["job_id"])
            reader.join(0.2)
        first = got[0].data["job_id"]
        relay.cut()
        wait_for(lambda: relay.accepted >= 2, "the stream to be opened again")
        ids += [c.enqueue(queue, "after the cut")["job_id"] for _ in range(6)]
        reader.join(30)
        assert not reader.is_alive()
        want = ids[ids.index(first):][:6]
        assert [e.data["job_id"] for e in got] == want, "in order, none missed, none twice"
        stream.close()
    finally:
        relay.close()
