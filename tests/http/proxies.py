"""Real proxies on loopback, logging every request they relay.

:class:`ForwardProxy` is an HTTP forward proxy: absolute-URI requests (``GET
http://host:port/path``) are relayed to the upstream and answered with its status,
headers and body; ``CONNECT host:port`` opens a tunnel (an https target). :class:`Socks5Proxy`
speaks SOCKS5 (no authentication, CONNECT, IPv4, IPv6 and domain names). Both reach
their upstream through ``resolve(host, port)``: by default only a loopback address is
reached as written, and a name (``bücher.example``'s A-label, say) is mapped by the
test to a loopback server, so no test resolves a name beyond loopback.
"""

from __future__ import annotations

import http.client
import select
import socket
import socketserver
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = ["ForwardProxy", "Relayed", "Socks5Proxy"]

Resolve = Callable[[str, int], tuple[str, int]]
_HOP = frozenset({"connection", "proxy-connection", "keep-alive", "transfer-encoding", "te"})


@dataclass
class Relayed:
    """One request a proxy relayed: its method, target as asked, headers, and when."""

    method: str
    target: str  # the absolute URI, "host:port" for CONNECT and SOCKS
    headers: dict[str, str] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)


def _loopback_only(host: str, port: int) -> tuple[str, int]:
    if host not in ("127.0.0.1", "::1", "localhost"):
        raise OSError(f"the test proxy reaches loopback only, not {host!r}")
    return host, port


class _Service:
    def __init__(self, server: socketserver.BaseServer, resolve: Resolve | None) -> None:
        self.resolve = resolve or _loopback_only
        self.log: list[Relayed] = []
        self._server = server
        host, port = server.server_address[:2]  # type: ignore[misc]
        self.address = (str(host), int(port))
        self._thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ProxyHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: ForwardProxy

    def handle_error(self, request: object, client_address: object) -> None:
        pass


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _ProxyHTTPServer

    def do_GET(self) -> None:
        owner = self.server.owner
        owner.log.append(Relayed("GET", self.path, dict(self.headers.items())))
        parts = urlsplit(self.path)
        host, port = owner.resolve(parts.hostname or "", parts.port or 80)
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        upstream = http.client.HTTPConnection(host, port, timeout=10)
        try:  # closed whatever the upstream does: a socket left open warns in a later test
            upstream.request("GET", path, headers=headers, encode_chunked=False)
            answer = upstream.getresponse()
            body = answer.read()
        finally:
            upstream.close()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in _HOP and name.lower() not in (
                "content-length",
                "date",
                "server",
            ):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_CONNECT(self) -> None:
        owner = self.server.owner
        owner.log.append(Relayed("CONNECT", self.path, dict(self.headers.items())))
        name, _, port = self.path.rpartition(":")
        upstream = socket.create_connection(owner.resolve(name.strip("[]"), int(port)), timeout=10)
        try:
            self.send_response(200, "Connection established")
            self.end_headers()
            self.wfile.flush()
        except OSError:
            upstream.close()
            raise
        _relay(self.connection, upstream)
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        pass


class ForwardProxy(_Service):
    """An HTTP forward proxy on 127.0.0.1 (``url``), relaying GET and CONNECT."""

    def __init__(self, resolve: Resolve | None = None) -> None:
        server = _ProxyHTTPServer(("127.0.0.1", 0), _ProxyHandler)
        server.owner = self
        super().__init__(server, resolve)
        self.url = f"http://127.0.0.1:{self.address[1]}"


class _SocksServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: Socks5Proxy

    def handle_error(self, request: object, client_address: object) -> None:
        pass


class _SocksHandler(socketserver.BaseRequestHandler):
    server: _SocksServer
    request: socket.socket

    def handle(self) -> None:
        sock = self.request
        version, count = _exactly(sock, 2)
        methods = _exactly(sock, count)
        if version != 5 or 0 not in methods:
            sock.sendall(b"\x05\xff")
            return
        sock.sendall(b"\x05\x00")
        _, command, _, kind = _exactly(sock, 4)
        host = _socks_address(sock, kind)
        (port,) = struct.unpack("!H", _exactly(sock, 2))
        owner = self.server.owner
        owner.log.append(
            Relayed("SOCKS-CONNECT" if command == 1 else str(command), f"{host}:{port}")
        )
        try:
            upstream = socket.create_connection(owner.resolve(host, port), timeout=10)
        except OSError:
            sock.sendall(b"\x05\x04\x00\x01" + bytes(6))  # host unreachable
            return
        sock.sendall(b"\x05\x00\x00\x01" + bytes(6))
        _relay(sock, upstream)


def _socks_address(sock: socket.socket, kind: int) -> str:
    if kind == 1:
        return socket.inet_ntop(socket.AF_INET, _exactly(sock, 4))
    if kind == 4:
        return socket.inet_ntop(socket.AF_INET6, _exactly(sock, 16))
    (length,) = _exactly(sock, 1)
    return _exactly(sock, length).decode("ascii")


class Socks5Proxy(_Service):
    """A SOCKS5 proxy on 127.0.0.1 (``url("socks5h")`` or ``url("socks5")``)."""

    def __init__(self, resolve: Resolve | None = None) -> None:
        server = _SocksServer(("127.0.0.1", 0), _SocksHandler)
        server.owner = self
        super().__init__(server, resolve)

    def url(self, scheme: str = "socks5h") -> str:
        return f"{scheme}://127.0.0.1:{self.address[1]}"


def _exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("the client hung up")
        data += chunk
    return data


def _relay(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until either side closes (or 30 s of silence)."""
    try:
        while True:
            ready, _, _ = select.select([a, b], [], [], 30)
            if not ready:
                return
            for sock in ready:
                data = sock.recv(65_536)
                if not data:
                    return
                (b if sock is a else a).sendall(data)
    except OSError:
        return
    finally:
        b.close()
