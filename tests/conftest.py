"""Shared fixtures: loopback servers, and a guard that keeps every test off the network."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.contract import checked_outputs
from tests.loopback import FIXTURES, LoopbackServer
from tests.pgserver import PostgresServer, running_server

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _is_loopback(host: object) -> bool:
    if host in ("localhost", "localhost.", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def _guard_address(address: object) -> None:
    if isinstance(address, tuple) and not _is_loopback(address[0]):
        raise OSError(f"test tried to reach the network: {address!r} (only loopback allowed)")


def _guarded_connect(self: socket.socket, address: object) -> None:
    _guard_address(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    _guard_address(address)
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: object, *args: object, **kwargs: object) -> list:
    if not _is_loopback(host):
        raise socket.gaierror(socket.EAI_NONAME, f"test tried to resolve {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach beyond loopback: connections and name look-ups are refused."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", _guarded_getaddrinfo)


@pytest.fixture
def serve() -> Iterator[Callable[..., LoopbackServer]]:
    """Start loopback servers: ``serve("sites/basic")`` serves ``fixtures/sites/basic``."""
    servers: list[LoopbackServer] = []

    def start(folder: str | None = None, routes: dict | None = None) -> LoopbackServer:
        server = LoopbackServer(FIXTURES / folder if folder else None, dict(routes or {}))
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def corpus() -> Path:
    """The shared real-world corpus; the test is skipped when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not present at {CORPUS}")
    return CORPUS


@pytest.fixture(scope="module")
def site() -> Iterator[Callable[[str], LoopbackServer]]:
    """``site("fmt-x")``: one server per ``fixtures/sites`` folder for the whole module.

    Tests that look at a server's log take the slice of requests made during their walk.
    """
    servers: dict[str, LoopbackServer] = {}

    def get(folder: str) -> LoopbackServer:
        if folder not in servers:
            servers[folder] = LoopbackServer(FIXTURES / "sites" / folder)
        return servers[folder]

    yield get
    closers = [threading.Thread(target=s.close) for s in servers.values()]
    for closer in closers:
        closer.start()
    for closer in closers:
        closer.join()


@pytest.fixture
def hold() -> Iterator[threading.Event]:
    """An event slow routes wait on; set after the test so no handler lingers."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server of the test session: started in a temporary folder on a free
    loopback port (Debian's initdb and pg_ctl), stopped at the end. Skips, saying why,
    where there are no server binaries or no psycopg."""
    with running_server() as server:
        yield server


@pytest.fixture(autouse=True, scope="session")
def _outputs_follow_the_contract() -> Iterator[None]:
    """Every AuditResult, plan line and walk line made in the session is validated against
    its JSON Schema (tests/contract.py)."""
    with checked_outputs():
        yield
