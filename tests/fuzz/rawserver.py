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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

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


@dataclass(repr=False)
class RawServer:
    """Listens on 127.0.0.1; ``script`` decides what every new connection gets."""

    script: Script = field(default=lambda _request: [Close()])
    requests: list[bytes] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:  # Hypothesis' reports
        printer.text(repr(self))  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"RawServer({self.origin})"

    def url(self, path: str) -> str:
        return self.origin + path

    def _accept(self) -> None:
        self._listener.settimeout(0.05)  # closing a socket does not wake a blocked accept()
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)  # accepted sockets inherit the listener's timeout
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            request = _read_head(conn, self._stop)
            if request is None:
                return
            self.requests.append(request)
            try:
                for step in self.script(request):
                    if not self._play(conn, step):
                        return
                conn.shutdown(socket.SHUT_WR)
                _drain(conn, self._stop)
            except OSError:
                return  # the client hung up first (its deadline, its cap): fine

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

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        self._accepting.join(timeout=5)
        for thread in self._threads:
            thread.join(timeout=5)

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
