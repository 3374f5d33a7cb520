"""Server-Sent Events: a parser of the stream's lines into messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

MISSED = "events were missed"


@dataclass
class Message:
    """One Server-Sent Events message. ``missed`` is set on the first
    message after the server said events were missed (the stream resumed
    from an id older than what it keeps)."""

    id: str
    event: str
    data: str
    missed: bool = False


def parse(lines: Iterable[bytes]) -> Iterator[Message]:
    """Messages of a stream's lines. Comments are skipped (the one saying
    events were missed marks the next message); a named event without data
    is delivered, as a bare ``event: done`` means something."""
    mid, event, missed = "", "", False
    data: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8", "replace")
        if line == "":
            if data or event:
                yield Message(mid, event or "message", "\n".join(data), missed)
                missed = False
            mid, event, data = "", "", []
            continue
        if line.startswith(":"):
            if MISSED in line:
                missed = True
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "id":
            mid = value
        elif name == "event":
            event = value
        elif name == "data":
            data.append(value)
