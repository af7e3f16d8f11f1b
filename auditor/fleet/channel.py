"""A direct line to the fleet's host table: one socket a site, beside Dask's actor.

Every request of every site costs two calls to the table (:mod:`auditor.fleet.gate`).
Through Dask's actor machinery a call costs about 2.2 ms of CPU in all (measured on a
local cluster of two worker processes: 32,000 calls, ``ask`` and ``done``), a quarter
of what a small site's whole audit costs its worker. So the actor that holds the table
also serves it on a socket of its own (:class:`TableServer`), and each site
talks to it over one connection (:class:`DirectTable`): about 0.34 ms a call.

- **Same table, same semantics.** The socket calls the very methods the actor would,
  under the table's own lock; the table's life (started with the fleet, lost with its
  worker, started again) is still the actor's, so nothing else changes.
- **Only those who hold the key.** Each table has a random key; a connection proves it
  knows it (HMAC of a fresh challenge, both ways) before its first call, and messages
  are JSON (a method name and plain values), never pickles.
- **TLS on a TLS cluster.** When the table's worker talks TLS, so does its socket, with
  the worker's own Dask certificates (:mod:`auditor.fleet.security`): both ends prove
  a certificate of the cluster's CA before the key's handshake, and a site whose worker
  has none uses the actor; no call goes in clear. A :class:`Line` says which it is.
- **Bounded.** A peer silent during the handshake is dropped after
  :data:`HANDSHAKE_TIMEOUT`; a call unanswered within the table's timeout, a reset
  connection or a refused one is :class:`~auditor.fleet.gate.GateLost`, as for the actor.
- **One connection a worker thread**, kept from one site to the next
  (:func:`thread_table`): a site of its own host makes two or three calls
  (:mod:`auditor.fleet.gate`), fewer than a connection's handshakes.
- **Where the socket cannot be reached** (a firewall that lets only Dask's own ports
  through), a worker uses the actor instead and remembers it
  (:meth:`auditor.fleet.cluster.GateRef.table`).

Touches: the network.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import socket
import ssl
import struct
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

from auditor.fleet.gate import GateLost, HostTable

__all__ = [
    "CONNECT_TIMEOUT",
    "HANDSHAKE_TIMEOUT",
    "DirectTable",
    "Line",
    "RemoteTable",
    "TableServer",
    "thread_table",
]

#: Seconds to connect to a table's socket before the worker falls back to the actor.
CONNECT_TIMEOUT = 5.0
#: Seconds a peer may take over its half of the handshake.
HANDSHAKE_TIMEOUT = 5.0
#: The table's methods a connection may call.
METHODS = frozenset(
    {"ask", "hold", "renew", "end", "done", "leave", "honour_crawl_delay", "delay_for", "slow_down"}
)
_NONCE = 32
_LONGEST_MESSAGE = 64 * 1024
_HEADER = struct.Struct("!I")  # a message's length, before it
_READ_AHEAD = 16 * 1024


@dataclass(frozen=True)
class Line:
    """Where a table's socket listens, its key (hex), and whether it talks TLS."""

    host: str
    port: int
    key: str
    tls: bool = False


class TableServer:
    """Serves ``table``'s methods on ``host`` (a free port), a thread a connection; over
    TLS with ``tls`` (a server context that requires the peer's certificate)."""

    def __init__(self, table: HostTable, host: str, tls: ssl.SSLContext | None = None) -> None:
        self.table = table
        self._key = os.urandom(32)
        self._tls = tls
        self._socket = socket.create_server((host, 0))
        self.line = Line(host, self._socket.getsockname()[1], self._key.hex(), tls is not None)
        self._closed = threading.Event()
        threading.Thread(target=self._accept, name="host-table-line", daemon=True).start()

    def close(self) -> None:
        """Stop taking connections; those open end at their next call."""
        self._closed.set()
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept
        self._socket.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                peer, _ = self._socket.accept()
            except OSError:  # closed
                return
            peer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(peer,), daemon=True).start()

    def _serve(self, peer: socket.socket) -> None:
        try:
            peer = self._secured(peer)  # closed below whatever happens, TLS or not
            with _Framed(peer) as connection:
                if not _handshake(connection, self._key):
                    return
                while True:
                    method, args = json.loads(connection.recv(_LONGEST_MESSAGE, None))
                    if self._closed.is_set() or method not in METHODS:
                        return
                    answer = json.dumps(getattr(self.table, method)(*args)).encode()
                    connection.send(answer, None)
        except (EOFError, OSError, ValueError, TypeError):  # ssl.SSLError is an OSError
            return  # the site hung up, or sent what no site sends (no certificate of ours)
        finally:
            peer.close()

    def _secured(self, peer: socket.socket) -> socket.socket:
        """``peer`` itself, or over TLS once its certificate is verified (a handshake
        bounded by :data:`HANDSHAKE_TIMEOUT`, here in the connection's own thread)."""
        if self._tls is None:
            return peer
        secured = self._tls.wrap_socket(peer, server_side=True, do_handshake_on_connect=False)
        try:
            secured.settimeout(HANDSHAKE_TIMEOUT)
            secured.do_handshake()
        except OSError:  # not TLS, no certificate of the CA, silent: hung up on
            secured.close()
            raise
        return secured


class RemoteTable:
    """A :class:`~auditor.fleet.gate.HostTable` elsewhere, with its plain (blocking)
    methods; a subclass says how a call reaches it, and raises
    :class:`~auditor.fleet.gate.GateLost` when it does not."""

    def _call(self, method: str, *args: object) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        """Let the table go."""

    def site_over(self) -> None:
        """The site that used the table is over: let it go (a subclass may keep it for
        the thread's next site)."""
        self.close()

    def ask(self, host: str, holder: str, lease: float) -> float:
        """See :meth:`HostTable.ask`."""
        return float(self._call("ask", host, holder, lease))

    def hold(self, host: str, holder: str, lease: float) -> tuple[float, float, float]:
        """See :meth:`HostTable.hold`."""
        wait, delay, base = self._call("hold", host, holder, lease)
        return float(wait), float(delay), float(base)

    def renew(self, host: str, holder: str, lease: float, pages: int = 0) -> str:
        """See :meth:`HostTable.renew`."""
        return str(self._call("renew", host, holder, lease, pages))

    def end(self, host: str, holder: str, delay: float, ready_in: float, pages: int = 0) -> None:
        """See :meth:`HostTable.end`."""
        self._call("end", host, holder, delay, ready_in, pages)

    def done(
        self,
        host: str,
        holder: str,
        status: int | None = None,
        retry_after: float | None = None,
        page: bool = False,
    ) -> None:
        """See :meth:`HostTable.done`."""
        self._call("done", host, holder, status, retry_after, page)

    def leave(self, host: str, holder: str) -> None:
        """See :meth:`HostTable.leave`."""
        self._call("leave", host, holder)

    def honour_crawl_delay(self, host: str, crawl_delay: float | None) -> None:
        """See :meth:`HostTable.honour_crawl_delay`."""
        self._call("honour_crawl_delay", host, crawl_delay)

    def delay_for(self, host: str) -> float:
        """See :meth:`HostTable.delay_for`."""
        return float(self._call("delay_for", host))

    def slow_down(self, host: str, retry_after: float | None) -> float:
        """See :meth:`HostTable.slow_down`."""
        return float(self._call("slow_down", host, retry_after))


class DirectTable(RemoteTable):
    """The table over its socket, over TLS with ``tls`` (a client context with this
    worker's certificate) when the line is TLS; connecting raises OSError (unreachable,
    a TLS line and no context, a certificate or the key refused)."""

    def __init__(self, line: Line, timeout: float, tls: ssl.SSLContext | None = None) -> None:
        self.line = line
        self.timeout = timeout
        self.kept = False  # kept for its thread's next site (:func:`thread_table`)
        self.broken = False  # a call failed: the connection is not to be used again
        self._timeout = timeout
        if line.tls and tls is None:
            raise ConnectionRefusedError("the host table's socket is TLS: no certificate here")
        peer = socket.create_connection((line.host, line.port), timeout=CONNECT_TIMEOUT)
        try:
            peer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if line.tls and tls is not None:  # the handshake within CONNECT_TIMEOUT
                peer = tls.wrap_socket(peer, server_hostname=line.host)
            self._connection = _Framed(peer)
            if not _handshake(self._connection, bytes.fromhex(line.key)):
                raise ConnectionRefusedError("the host table refused the key")
        except OSError:
            peer.close()
            raise
        except EOFError as exc:  # hung up on (a TLS server refusing our certificate)
            peer.close()
            raise ConnectionResetError("the host table hung up during the handshake") from exc

    def close(self) -> None:
        """Hang up."""
        self.broken = True
        self._connection.close()

    def site_over(self) -> None:
        """Hang up, unless kept for the thread's next site and still sound."""
        if self.broken or not self.kept:
            self.close()

    def _call(self, method: str, *args: object) -> Any:
        try:
            self._connection.send(json.dumps([method, args]).encode(), self._timeout)
            return json.loads(self._connection.recv(_LONGEST_MESSAGE, self._timeout))
        except (EOFError, OSError, ValueError) as exc:  # TimeoutError is an OSError
            self.broken = True  # a message may be half sent or half read: never again
            raise GateLost(
                f"the fleet's host table did not answer ({method}): {type(exc).__name__}: {exc}"
            ) from exc


_THREAD = threading.local()  # .table: this thread's DirectTable, kept between sites;
# .keeper: what closes it when the thread is over (see thread_table)


class _Keeper:
    """Lives in a thread's locals beside its kept table: collected when the thread
    ends, it closes that table's connection (a weakref finalizer), rather than leave
    the socket open until the collector finds it."""

    __slots__ = ("__weakref__",)


def thread_table(line: Line, timeout: float, tls: ssl.SSLContext | None = None) -> DirectTable:
    """This thread's connection to the table at ``line``, made on its first site and kept
    for its next ones (:meth:`DirectTable.site_over`): a connection, its TLS and key
    handshakes and a thread of the table's worker a site cost more than the two or three
    calls a site now makes. Made again after a failed call, or for another table (one
    started again, another fleet's); raises OSError as :class:`DirectTable` does."""
    kept: DirectTable | None = getattr(_THREAD, "table", None)
    if kept is not None and not kept.broken and (kept.line, kept.timeout) == (line, timeout):
        return kept
    if kept is not None:
        _THREAD.table = None
        kept.close()
    made = DirectTable(line, timeout, tls)
    made.kept = True
    _THREAD.table = made
    _THREAD.keeper = keeper = _Keeper()
    weakref.finalize(keeper, made.close)
    return made


class _Framed:
    """Messages over a socket (plain or TLS): each its length (4 bytes, big-endian), then
    its bytes, as :class:`multiprocessing.connection.Connection` frames them, which
    cannot go over TLS (it reads the socket's file descriptor itself)."""

    def __init__(self, peer: socket.socket) -> None:
        self._peer = peer
        self._read = bytearray()  # received, not yet taken

    def __enter__(self) -> _Framed:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the socket."""
        self._peer.close()

    def send(self, message: bytes, timeout: float | None) -> None:
        """Send one message within ``timeout`` seconds (None: however long)."""
        self._peer.settimeout(timeout)
        self._peer.sendall(_HEADER.pack(len(message)) + message)

    def recv(self, longest: int, timeout: float | None) -> bytes:
        """The next message, no longer than ``longest``, within ``timeout`` seconds
        (None: however long); EOFError when the peer hung up, TimeoutError on time."""
        ends = None if timeout is None else time.monotonic() + timeout
        (size,) = _HEADER.unpack(self._exactly(_HEADER.size, ends, timeout))
        if size > longest:
            raise OSError(f"a message of {size} bytes, more than {longest}")
        return self._exactly(size, ends, timeout)

    def _exactly(self, size: int, ends: float | None, timeout: float | None) -> bytes:
        """``size`` bytes, read ahead as far as the socket has them (a message and its
        header in one read, most often)."""
        while len(self._read) < size:
            left = None if ends is None else ends - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError(f"no answer within {timeout:g} s")
            self._peer.settimeout(left)
            try:
                chunk = self._peer.recv(_READ_AHEAD)
            except TimeoutError as exc:  # socket.timeout
                raise TimeoutError(f"no answer within {timeout:g} s") from exc
            if not chunk:
                raise EOFError("the peer hung up")
            self._read += chunk
        taken = bytes(self._read[:size])
        del self._read[:size]
        return taken


def _handshake(connection: _Framed, key: bytes) -> bool:
    """Each side sends a fresh challenge and checks the other's HMAC of it; False when
    the peer does not know ``key``, TimeoutError when it is silent too long."""
    mine = os.urandom(_NONCE)
    connection.send(mine, HANDSHAKE_TIMEOUT)
    theirs = connection.recv(_NONCE, HANDSHAKE_TIMEOUT)
    connection.send(_mac(key, theirs), HANDSHAKE_TIMEOUT)
    return hmac.compare_digest(connection.recv(_NONCE, HANDSHAKE_TIMEOUT), _mac(key, mine))


def _mac(key: bytes, challenge: bytes) -> bytes:
    return hmac.new(key, challenge, hashlib.sha256).digest()
