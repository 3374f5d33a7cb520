"""A small asyncio HTTP/1.1 transport for the worker runtime: keep-alive
connections in a pool, and requests that can be cancelled mid-flight (a
cancelled long-poll closes its connection, so the server leases nothing
to a worker that went away)."""

from __future__ import annotations

import asyncio
from typing import Any

from ._transport import MAX_ERROR_BODY, Backoff, Config, Response, decode, encode, should_retry
from .errors import JobbieError, NetworkError, error_from_response

_Conn = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class AsyncTransport:
    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.idle: list[_Conn] = []

    def _release(self, conn: _Conn, reuse: bool) -> None:
        if reuse and len(self.idle) < 16:
            self.idle.append(conn)
        else:
            conn[1].close()

    async def close(self) -> None:
        idle, self.idle = self.idle, []
        for _, w in idle:
            w.close()

    async def once(self, method: str, path: str, body: Any = None, *, idempotency_key: str | None = None,
                   timeout: float | None = None) -> Response:
        data = encode(body)
        h = self.cfg.request_headers(data is not None, idempotency_key, None)
        h["Host"] = f"{self.cfg.host}:{self.cfg.port}"
        h["Content-Length"] = str(len(data or b""))
        head = f"{method} {self.cfg.prefix + path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items()) + "\r\n"
        t = self.cfg.timeout if timeout is None else timeout
        for tried in range(2):
            reused = tried == 0 and bool(self.idle)
            try:
                conn = self.idle.pop() if reused else await self._new()
            except OSError as e:
                raise NetworkError(f"{method} {path}: {e.__class__.__name__}: {e}") from e
            try:
                status, rh, raw, keep = await asyncio.wait_for(self._exchange(conn, head.encode() + (data or b"")), t)
            except asyncio.CancelledError:
                conn[1].close()
                raise
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError) as e:
                conn[1].close()
                if reused and self._was_idle_close(e):
                    continue  # the server closed an idle connection: once more on a new one
                raise NetworkError(f"{method} {path}: {e.__class__.__name__}: {e}") from e
            self._release(conn, keep)
            if not 200 <= status < 300:
                raise error_from_response(status, rh, raw[:MAX_ERROR_BODY])
            return Response(status, rh, decode(status, raw))
        raise NetworkError(f"{method} {path}: no connection")  # not reached: the second try raises

    async def _new(self) -> _Conn:
        return await asyncio.open_connection(self.cfg.host, self.cfg.port, ssl=self.cfg.ssl_context)

    @staticmethod
    def _was_idle_close(e: BaseException) -> bool:
        return isinstance(e, (ConnectionResetError, BrokenPipeError, asyncio.IncompleteReadError))

    async def _exchange(self, conn: _Conn, request: bytes) -> tuple[int, dict[str, str], bytes, bool]:
        reader, writer = conn
        writer.write(request)
        await writer.drain()
        line = await reader.readuntil(b"\r\n")
        parts = line.decode("latin-1").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
            raise ValueError(f"bad status line {line!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        while True:
            hl = await reader.readuntil(b"\r\n")
            if hl == b"\r\n":
                break
            k, _, v = hl.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":
                        pass
                    break
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
            raw = b"".join(chunks)
        elif "content-length" in headers:
            raw = await reader.readexactly(int(headers["content-length"]))
        elif status in (204, 304):
            raw = b""
        else:
            raw = await reader.read()
            headers["connection"] = "close"
        keep = headers.get("connection", "").lower() != "close"
        return status, headers, raw, keep

    async def call(self, method: str, path: str, body: Any = None, *, timeout: float | None = None,
                   retries: int | None = None) -> Response:
        """A logical call, retried on 429, 502-504 and network errors (the
        worker's calls take no Idempotency-Key: acks and fails are made
        safe to repeat by their lease token)."""
        key = None
        limit = self.cfg.retries if retries is None else retries
        bo = Backoff()
        attempt = 0
        while True:
            try:
                return await self.once(method, path, body, idempotency_key=key, timeout=timeout)
            except JobbieError as e:
                attempt += 1
                if attempt > limit or not should_retry(e):
                    raise
                await asyncio.sleep(bo.next(e))
