"""A client that sends what a browser never does: a body declared far larger than it sends, a
chunked body without end. Used by ``tests/test_bodies.py`` and ``benchmarks/bench_bodies.py``
against a real server (``xattn/server/bodies.py`` bounds both).

Plain sockets, because ``http.client`` writes the whole body before it reads the answer, and
a server that answers 413 and closes mid-body makes that write fail before the status can
be read.
"""

from __future__ import annotations

import select
import socket
import time
from typing import NamedTuple

__all__ = ["Reply", "declared", "chunked", "post"]


class Reply(NamedTuple):
    """The server's status (0: it closed without one), its body, and the bytes of body this
    client got out before the answer came (or the connection closed)."""

    status: int
    body: str
    sent: int


def _head(method: str, path: str, port: int, headers: dict[str, str]) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", *(
        f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _complete(data: bytes) -> bool:
    """Whether ``data`` holds a whole response (its head and Content-Length bytes of body)."""
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(rest) >= int(value)
    return False                        # a body read to the connection's close


def _answer(sock: socket.socket, timeout: float) -> tuple[int, str]:
    data, end = b"", time.monotonic() + timeout
    while time.monotonic() < end and not _complete(data):
        ready, _, _ = select.select([sock], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            break
        try:
            piece = sock.recv(65536)
        except OSError:
            break
        if not piece:
            break
        data += piece
    status = data.split(b" ", 2)[1] if data.startswith(b"HTTP/") else b"0"
    return int(status), data.partition(b"\r\n\r\n")[2].decode("utf-8", "replace")


def _stream(sock: socket.socket, pieces, timeout: float) -> Reply:
    """Send ``pieces`` until the server answers or closes; its reply."""
    sent = 0
    for piece in pieces:
        readable, _, _ = select.select([sock], [], [], 0)
        if readable:
            break
        try:
            sock.sendall(piece)
        except OSError:                 # the server answered and closed mid-body
            break
        sent += len(piece)
    status, body = _answer(sock, timeout)
    return Reply(status, body, sent)


def declared(port: int, path: str, size: int, *, method: str = "POST", send: int = 0,
             headers: dict[str, str] | None = None, timeout: float = 30.0) -> Reply:
    """A request that declares a body of ``size`` bytes and sends ``send`` of them (zeros,
    64 kB at a time) unless the server answers first."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(_head(method, path, port, {"Content-Type": "application/json",
                                                "Content-Length": str(size), **(headers or {})}))
        chunk = b"0" * 65536
        pieces = (chunk[:min(65536, send - k)] for k in range(0, send, 65536))
        return _stream(sock, pieces, timeout)


def chunked(port: int, path: str, most: int, *, method: str = "POST",
            headers: dict[str, str] | None = None, timeout: float = 30.0) -> Reply:
    """A chunked body of up to ``most`` bytes (64 kB chunks of JSON-ish text), sent until
    the server answers or closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(_head(method, path, port, {"Content-Type": "application/json",
                                                "Transfer-Encoding": "chunked",
                                                **(headers or {})}))
        piece = b"10000\r\n" + b"[" * 65536 + b"\r\n"
        return _stream(sock, (piece for _ in range(most // 65536)), timeout)


def post(port: int, path: str, body: bytes, *, headers: dict[str, str] | None = None,
         timeout: float = 30.0) -> Reply:
    """An ordinary POST of ``body`` and the server's reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(_head("POST", path, port, {"Content-Type": "application/json",
                                                "Content-Length": str(len(body)),
                                                **(headers or {})}) + body)
        status, text = _answer(sock, timeout)
        return Reply(status, text, len(body))
