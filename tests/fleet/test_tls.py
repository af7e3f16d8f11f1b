"""A cluster a team can expose: ``--cluster tls://...`` with certificates of the team's
CA. The fleet runs on a real TLS ``dask scheduler`` and ``dask worker``; the host
table's own socket is TLS too (a plain or a foreign peer gets not a byte); a worker
whose certificate another CA signed never joins; no certificates is a usage error."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

import pytest

from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.errors import UsageError
from auditor.fleet import channel
from auditor.fleet.channel import DirectTable, TableServer
from auditor.fleet.gate import HostTable
from auditor.fleet.security import client_security
from tests.fleet.certs import Authority, Pair
from tests.fleet.servers import simulated
from tests.fleet.test_channel import kind_of_table_and_a_turn

PROJECT = str(Path(__file__).resolve().parents[2])
#: Seconds a Dask process of the test may take to start, join, or give up.
START = 60


@dataclass
class Certificates:
    """The cluster's CA and what it signed, and a certificate another CA signed."""

    ca_file: Path
    scheduler: Pair
    worker: Pair
    client: Pair
    foreign: Pair

    def client_options(self) -> list[str]:
        return ["--tls-ca-file", str(self.ca_file), "--tls-cert", str(self.client.cert),
                "--tls-key", str(self.client.key)]  # fmt: skip


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> Certificates:
    folder = tmp_path_factory.mktemp("certificates")
    cluster, other = Authority(folder, "cluster"), Authority(folder, "other")
    return Certificates(
        cluster.ca_file,
        cluster.issue("scheduler"),
        cluster.issue("worker"),
        cluster.issue("client"),
        other.issue("worker"),
    )


def _security(certificates: Certificates, pair: Pair, role: str = "client"):  # type: ignore[no-untyped-def]
    from distributed.security import Security

    return Security(
        require_encryption=True,
        tls_ca_file=str(certificates.ca_file),
        **{f"tls_{role}_cert": str(pair.cert), f"tls_{role}_key": str(pair.key)},
    )


# -- the table's socket over TLS, without a cluster -------------------------------------------


@pytest.fixture
def tls_served(certificates) -> Iterator[tuple[TableServer, object]]:
    """A table served over TLS with a worker's certificate; a worker's client context."""
    worker = _security(certificates, certificates.worker, "worker")
    server = TableServer(
        HostTable(0.0), "127.0.0.1", worker.get_listen_args("worker")["ssl_context"]
    )
    try:
        yield server, worker.get_connection_args("worker")["ssl_context"]
    finally:
        server.close()


def _what_a_plain_peer_gets(line: channel.Line) -> bytes:
    """What the table's socket sends a peer that talks the plain line (a challenge of its
    own), until it hangs up on it (a reset too: it closed with our bytes unread)."""
    got = b""
    with socket.create_connection((line.host, line.port), timeout=10) as plain:
        plain.sendall(b"\x00\x00\x00\x20" + b"\x00" * 32)  # a challenge, as the plain line sends
        try:
            while chunk := plain.recv(1024):
                got += chunk
        except ConnectionResetError:
            pass
    return got


def test_the_table_over_tls_is_the_same_table_for_a_certificate_of_the_ca(tls_served):
    server, context = tls_served
    assert server.line.tls
    table = DirectTable(server.line, 5.0, context)
    try:
        assert table.ask("example.com", "a", 30.0) == 0.0
        table.done("example.com", "a", 200, None, True)
        assert server.table.pages_fetched() == 1
    finally:
        table.close()


def test_a_plain_peer_of_the_tls_table_gets_not_a_byte_and_is_hung_up_on(tls_served):
    server, _ = tls_served
    assert _what_a_plain_peer_gets(server.line) == b""  # no challenge in clear
    with pytest.raises(ConnectionRefusedError, match="TLS"):  # a TLS line, no context here
        DirectTable(server.line, 5.0)


def test_a_peer_whose_certificate_another_ca_signed_is_refused(tls_served, certificates):
    server, good = tls_served
    foreign = _security(certificates, certificates.foreign, "worker")
    with pytest.raises(OSError):  # ssl.SSLError, or hung up on: the worker uses the actor
        DirectTable(server.line, 5.0, foreign.get_connection_args("worker")["ssl_context"])
    with pytest.raises(ConnectionRefusedError):  # a certificate of the CA, the key wrong
        DirectTable(replace(server.line, key="00" * 32), 5.0, good)
    DirectTable(server.line, 5.0, good).close()  # the server goes on


def test_a_silent_tls_peer_is_dropped_after_the_handshake_timeout(tls_served, monkeypatch):
    monkeypatch.setattr(channel, "HANDSHAKE_TIMEOUT", 0.3)
    server, _ = tls_served
    with socket.create_connection((server.line.host, server.line.port), timeout=5) as silent:
        started = time.monotonic()
        assert silent.recv(1024) == b""
        assert time.monotonic() - started < 3.0


# -- the client's security --------------------------------------------------------------------


def test_certificates_come_from_the_options_or_else_from_dask_s_configuration(certificates):
    import dask

    assert client_security("tcp://127.0.0.1:8786", ca_file=None, cert=None, key=None) is None
    with pytest.raises(UsageError, match="--tls-cert: only for a --cluster tls://"):
        client_security(None, ca_file=None, cert=str(certificates.client.cert), key=None)
    with pytest.raises(UsageError, match="is TLS: give the cluster's CA certificate"):
        client_security("tls://127.0.0.1:8786", ca_file=None, cert=None, key=None)
    with pytest.raises(UsageError, match=r"--tls-key /nowhere/client\.key: cannot be read"):
        client_security(
            "tls://127.0.0.1:8786",
            ca_file=str(certificates.ca_file),
            cert=str(certificates.client.cert),
            key="/nowhere/client.key",
        )
    with pytest.raises(UsageError, match="the TLS certificates cannot be used"):
        client_security(  # another certificate's key
            "tls://127.0.0.1:8786",
            ca_file=str(certificates.ca_file),
            cert=str(certificates.client.cert),
            key=str(certificates.worker.key),
        )
    configured = {
        "distributed.comm.tls.ca-file": str(certificates.ca_file),
        "distributed.comm.tls.client.cert": str(certificates.client.cert),
        "distributed.comm.tls.client.key": str(certificates.client.key),
    }
    with dask.config.set(configured):
        security = client_security("tls://127.0.0.1:8786", ca_file=None, cert=None, key=None)
        assert security is not None and security.require_encryption
        assert security.tls_client_key == str(certificates.client.key)
        assert security.get_connection_args("client")["ssl_context"] is not None


# -- on a real TLS cluster --------------------------------------------------------------------


@dataclass
class TlsCluster:
    address: str
    certificates: Certificates
    logs: Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


#: Dask's own logging configuration, in the environment: auditor's warnings on a worker
#: (a table socket that cannot be reached, say) go to its log, beside Dask's.
_AUDITOR_WARNINGS_LOGGED = {"DASK_LOGGING__AUDITOR": "warning"}


class _Processes:
    """Dask processes of the test, each in its own process group, their output in files:
    all killed and waited for, and their files closed, at the end."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self._started: list[tuple[subprocess.Popen[bytes], IO[bytes]]] = []

    def start(self, name: str, *command: str) -> subprocess.Popen[bytes]:
        log = (self.logs / f"{name}.log").open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", *command],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "PYTHONPATH": PROJECT, **_AUDITOR_WARNINGS_LOGGED},
        )
        self._started.append((process, log))
        return process

    def end(self) -> None:
        while self._started:
            process, log = self._started.pop()
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            log.close()


def _worker(processes: _Processes, name: str, address: str, ca: Path, pair: Pair, *extra: str):  # type: ignore[no-untyped-def]
    return processes.start(
        name, "distributed.cli.dask_worker", address, "--name", name, "--nworkers", "1",
        "--nthreads", "2", "--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0",
        "--tls-ca-file", str(ca), "--tls-cert", str(pair.cert), "--tls-key", str(pair.key),
        *extra,
    )  # fmt: skip


@pytest.fixture(scope="module")
def tls_cluster(certificates, tmp_path_factory) -> Iterator[TlsCluster]:
    """A real ``dask scheduler`` on tls://127.0.0.1 and one ``dask worker`` (2 threads),
    each with its certificate of the cluster's CA."""
    from distributed import Client

    logs = tmp_path_factory.mktemp("dask-logs")
    processes = _Processes(logs)
    port = _free_port()
    address = f"tls://127.0.0.1:{port}"
    ca, own = certificates.ca_file, certificates.scheduler
    try:
        processes.start(
            "scheduler", "distributed.cli.dask_scheduler", "--protocol", "tls", "--host",
            "127.0.0.1", "--port", str(port), "--dashboard-address", "127.0.0.1:0",
            "--tls-ca-file", str(ca), "--tls-cert", str(own.cert), "--tls-key", str(own.key),
        )  # fmt: skip
        _worker(processes, "worker", address, ca, certificates.worker)
        with Client(
            address, security=_security(certificates, certificates.client), timeout=START
        ) as client:
            client.wait_for_workers(1, timeout=START)
        yield TlsCluster(address, certificates, logs)
    finally:
        processes.end()


@pytest.fixture
def tls_client(tls_cluster) -> Iterator[object]:
    from distributed import Client

    security = _security(tls_cluster.certificates, tls_cluster.certificates.client)
    with Client(tls_cluster.address, security=security, timeout=START) as client:
        yield client


@pytest.fixture
def db(tmp_path, monkeypatch) -> str:
    monkeypatch.chdir(tmp_path)  # reports land in ./reports
    return str(tmp_path / "history.sqlite3")


def test_a_fleet_runs_on_a_tls_cluster_with_the_client_s_certificates(tls_cluster, db, capsys):
    servers = [SiteServer(simulated("no-lastmod", n), host=f"127.0.47.{n}") for n in (1, 2, 3)]
    try:
        code = main(
            ["audit", *(s.origin for s in servers), "--db", db, "--delay", "0", "--sample", "4",
             "--cluster", tls_cluster.address, *tls_cluster.certificates.client_options()]
        )  # fmt: skip
        out, err = capsys.readouterr()
    finally:
        for server in servers:
            server.close()
    assert code == 0, err
    assert sorted(out.splitlines()[:3]) == sorted(f"{s.origin}: no-lastmod" for s in servers)
    assert "3 of 3 sites done: 3 no-lastmod; 0 failed" in out
    worker_said = (tls_cluster.logs / "worker.log").read_text(errors="replace")
    assert "Listening to:" in worker_said  # the worker's log is there
    assert "cannot be reached" not in worker_said  # sites used the TLS socket, not the actor


def test_on_a_tls_cluster_the_host_table_s_socket_is_tls_and_sites_use_it(tls_client):
    from auditor.fleet.cluster import start_gate

    ref, alive = start_gate(tls_client, 0.0)
    try:
        assert ref.line is not None and ref.line.tls and ref.address.startswith("tls://")
        kind, wait = tls_client.submit(kind_of_table_and_a_turn, ref, pure=False).result()
        assert (kind, wait) == ("DirectTable", 0.0)  # over TLS, with the worker's certificate
        assert _what_a_plain_peer_gets(ref.line) == b""  # not a byte in clear
    finally:
        alive.result(timeout=30).close().result(timeout=30)
        alive.release()


def test_a_worker_whose_certificate_another_ca_signed_never_joins(tls_cluster, tls_client):
    processes = _Processes(tls_cluster.logs)
    certificates = tls_cluster.certificates
    scheduler_log = tls_cluster.logs / "scheduler.log"
    before = scheduler_log.stat().st_size
    try:
        rogue = _worker(processes, "rogue", tls_cluster.address, certificates.ca_file,
                        certificates.foreign, "--death-timeout", "20")  # fmt: skip
        ends = time.monotonic() + START
        seen: set[str] = set()
        while rogue.poll() is None and time.monotonic() < ends:
            seen |= {w["name"] for w in tls_client.scheduler_info()["workers"].values()}
            time.sleep(0.2)
        seen |= {w["name"] for w in tls_client.scheduler_info()["workers"].values()}
    finally:
        processes.end()
    assert rogue.returncode not in (None, 0)  # it gave up
    assert seen == {"worker"}  # the scheduler never counted it: it never got work
    with scheduler_log.open("rb") as log:
        log.seek(before)
        said = log.read().decode(errors="replace")
    assert "TLS handshake failed" in said and "certificate verify failed" in said, said


def test_a_tls_cluster_without_certificates_or_with_foreign_ones_is_said_clearly(
    tls_cluster, db, capsys
):
    site = ["audit", "http://127.0.47.9", "--db", db, "--cluster", tls_cluster.address]
    assert main(site) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"auditor: --cluster {tls_cluster.address} is TLS: give the "), err
    assert "Traceback" not in err

    certificates = tls_cluster.certificates
    foreign = ["--tls-ca-file", str(certificates.ca_file),
               "--tls-cert", str(certificates.foreign.cert),
               "--tls-key", str(certificates.foreign.key)]  # fmt: skip
    started = time.monotonic()
    assert main([*site, *foreign]) == 1
    err = capsys.readouterr().err
    assert f"auditor: cannot reach the Dask scheduler at {tls_cluster.address}: " in err, err
    assert time.monotonic() - started < 30
