"""A proxy in front of the real jobbie dev that answers some requests
itself (a 503 or 429 with Retry-After), drops their connection before
they reach the server ("drop") or after the server answered
("drop_after": the answer is lost), and records every request's method,
path, Idempotency-Key and whether the server's answer was a replay: the
failures a client must retry, on demand."""

from __future__ import annotations

import http.client
import http.server
import threading
from dataclasses import dataclass, field
import socket
from typing import Iterator
from urllib.parse import urlsplit


@dataclass
class Seen:
    method: str
    path: str
    idempotency_key: str | None
    answered: str  # "proxied", "503", "429", "drop" or "drop_after"
    replayed: bool = False  # the server answered Idempotency-Replayed: true


@dataclass
class FaultProxy:
    target: str
    faults: dict[str, list[str]] = field(default_factory=dict)  # path -> faults to answer in turn
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def next_fault(self, method: str, path: str) -> str | None:
        with self.lock:
            todo = self.faults.get(f"{method} {path}")
            return todo.pop(0) if todo else None

    def calls(self, method: str, path: str) -> list[Seen]:
        with self.lock:
            return [s for s in self.seen if s.method == method and s.path == path]


def serve(target: str) -> Iterator[FaultProxy]:
    proxy = FaultProxy(target)
    u = urlsplit(target)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def handle_one(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            path = self.path.split("?")[0]
            fault = proxy.next_fault(self.command, path)
            seen = Seen(self.command, path, self.headers.get("Idempotency-Key"), fault or "proxied")
            with proxy.lock:
                proxy.seen.append(seen)
            if fault == "drop":
                self.close_connection = True
                self.connection.close()
                return
            if fault in ("503", "429"):
                msg = b'{"error":{"code":"%s","message":"injected","request_id":"req_proxy"}}' % (
                    b"no_leader" if fault == "503" else b"rate_limited")
                self.send_response(int(fault))
                self.send_header("Retry-After", "1")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(msg)))
                self.end_headers()
                self.wfile.write(msg)
                return
            conn = http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port, timeout=90)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            conn.request(self.command, self.path, body=body if body else None, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            conn.close()
            seen.replayed = resp.getheader("Idempotency-Replayed") == "true"
            if fault == "drop_after":
                self.close_connection = True
                self.connection.close()
                return
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("connection", "transfer-encoding", "content-length", "date", "server"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_one

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    proxy.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield proxy
    finally:
        httpd.shutdown()
        httpd.server_close()


class Relay:
    """A TCP relay to the server whose open connections can be cut at
    once, as a network failure mid-stream would."""

    def __init__(self, target: str) -> None:
        u = urlsplit(target)
        self.upstream = (u.hostname or "127.0.0.1", u.port or 80)
        self.lsock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.lsock.getsockname()[1]}"
        self.conns: list[socket.socket] = []
        self.accepted = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self.lsock.accept()
            except OSError:
                return
            up = socket.create_connection(self.upstream)
            with self.lock:
                self.conns += [c, up]
                self.accepted += 1
            for a, b in ((c, up), (up, c)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(2)
            except OSError:
                pass

    def cut(self) -> None:
        with self.lock:
            conns, self.conns = self.conns, []
        for s in conns:
            try:
                s.shutdown(2)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        self.lsock.close()
        self.cut()
