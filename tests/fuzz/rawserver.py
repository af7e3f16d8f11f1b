"""A loopback TCP server that misbehaves as no ``http.server`` handler can.

Each connection reads the request head, then plays a *script*: a list of
steps, each sending bytes, pausing, hanging up, resetting the connection
(an RST, not a FIN) or hanging until the client goes away. Garbage status
lines, lying Content-Length, broken chunk framing, drips and resets are all
just scripts.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from auditor.demo.loopback import LoggedRequest, LoopbackService

__all__ = ["Close", "Endless", "Hang", "Pause", "RawServer", "Reset", "Script", "Send", "Step"]


@dataclass(frozen=True)
class Send:
    """Write these bytes (``pieces`` > 1: in that many writes, ``gap`` seconds apart)."""

    data: bytes
    pieces: int = 1
    gap: float = 0.0


@dataclass(frozen=True)
class Endless:
    """Write these bytes again and again until the client hangs up (or the server stops)."""

    data: bytes


@dataclass(frozen=True)
class Pause:
    seconds: float


@dataclass(frozen=True)
class Close:
    """Hang up politely (FIN)."""


@dataclass(frozen=True)
class Reset:
    """Hang up rudely (RST): ``SO_LINGER`` with a zero timeout, then close."""


@dataclass(frozen=True)
class Hang:
    """Send nothing more until the client hangs up or the server stops."""


Step = Send | Endless | Pause | Close | Reset | Hang
#: A connection's script, given the request head (bytes up to the blank line).
Script = Callable[[bytes], Sequence[Step]]


def _hang_up(_request: bytes) -> Sequence[Step]:
    return [Close()]


class RawServer(LoopbackService):
    """Listens on 127.0.0.1; ``script`` decides what every new connection gets."""

    def __init__(self, script: Script = _hang_up) -> None:
        self.script = script
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)  # closing a socket does not wake a blocked accept()
        super().__init__(self._listener)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)  # accepted sockets inherit the listener's timeout
            thread = threading.Thread(target=self._play_script, args=(conn,), daemon=True)
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            thread.start()

    def _play_script(self, conn: socket.socket) -> None:
        with conn:
            head = _read_head(conn, self._stop)
            if head is None:
                return
            request = _logged(head)
            self.log.append(request)
            try:
                for step in self.script(head):
                    if not self._play(conn, step):
                        return
                conn.shutdown(socket.SHUT_WR)
                _drain(conn, self._stop)
            except OSError:
                return  # the client hung up first (its deadline, its cap): fine
            finally:
                request.answered = time.monotonic()

    def _play(self, conn: socket.socket, step: Step) -> bool:
        """Play one step; False when the connection is finished."""
        if isinstance(step, Send):
            size = max(1, -(-len(step.data) // max(step.pieces, 1)))
            for start in range(0, len(step.data), size):
                if start and step.gap and self._stop.wait(step.gap):
                    return False
                conn.sendall(step.data[start : start + size])
            return True
        if isinstance(step, Endless):
            conn.settimeout(2)  # a client that stops reading without hanging up: give up
            while not self._stop.is_set():
                conn.sendall(step.data)
            return False
        if isinstance(step, Pause):
            return not self._stop.wait(step.seconds)
        if isinstance(step, Reset):
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return False
        if isinstance(step, Hang):
            _drain(conn, self._stop)
            return False
        return False  # Close

    def _halt(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._listener.close()

    def close(self) -> None:
        """Stop accepting, end every connection's script, and wait for them."""
        super().close()
        for thread in self._threads:
            thread.join(timeout=5)


def _logged(head: bytes) -> LoggedRequest:
    """The log's record of a request head (our own client's, read leniently)."""
    line, *fields = head.decode("latin-1").split("\r\n")
    method, path, *_ = [*line.split(" "), "", ""]
    pairs = (f.partition(":") for f in fields)
    headers = {name.strip(): value.strip() for name, colon, value in pairs if colon}
    return LoggedRequest(method, path, headers, time.monotonic())


def _read_head(conn: socket.socket, stop: threading.Event) -> bytes | None:
    """The request head, or None if the client leaves (or the server stops) first."""
    conn.settimeout(0.05)
    data = b""
    while b"\r\n\r\n" not in data:
        if stop.is_set():
            return None
        try:
            chunk = conn.recv(65_536)
        except TimeoutError:
            continue
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    conn.settimeout(10)
    return data.split(b"\r\n\r\n", 1)[0]


def _drain(conn: socket.socket, stop: threading.Event) -> None:
    """Wait until the client closes its end (or the server stops), discarding what it sends."""
    conn.settimeout(0.05)
    while not stop.is_set():
        try:
            if not conn.recv(65_536):
                return
        except TimeoutError:
            continue
        except OSError:
            return
