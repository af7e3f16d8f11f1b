"""The host table's direct line: the same table over a socket of its own, for those who
hold its key, bounded against silent or odd peers; on a cluster, sites use it, and a
worker that cannot reach it uses the actor."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest

from auditor.fleet import channel
from auditor.fleet.channel import DirectTable, TableServer
from auditor.fleet.gate import GateLost, HostTable


@pytest.fixture
def served() -> Iterator[tuple[HostTable, TableServer]]:
    table = HostTable(0.5)
    server = TableServer(table, "127.0.0.1")
    try:
        yield table, server
    finally:
        server.close()


def test_the_table_over_its_socket_is_the_same_table(served):
    table, server = served
    first, second = DirectTable(server.line, 5.0), DirectTable(server.line, 5.0)
    try:
        assert first.ask("example.com", "a", 30.0) == 0.0  # free: a's turn
        assert second.ask("example.com", "b", 30.0) > 0  # held: b waits
        first.done("example.com", "a", 200, None, True)
        assert table.pages_fetched() == 1
        assert second.ask("example.com", "b", 30.0) == pytest.approx(0.5, abs=0.1)  # the delay
        second.honour_crawl_delay("example.com", 2.0)
        assert first.delay_for("example.com") == 2.0 == table.delay_for("example.com")
        assert first.slow_down("example.com", 5.0) > 0
        second.leave("example.com", "b")
    finally:
        first.close()
        second.close()


def test_a_peer_without_the_key_is_refused(served):
    _, server = served
    wrong = replace(server.line, key="00" * 32)
    with pytest.raises(ConnectionRefusedError):
        DirectTable(wrong, 5.0)
    DirectTable(server.line, 5.0).close()  # the server goes on


def test_a_silent_peer_holds_nobody_up_and_is_dropped(served, monkeypatch):
    monkeypatch.setattr(channel, "HANDSHAKE_TIMEOUT", 0.3)
    _, server = served
    with socket.create_connection((server.line.host, server.line.port)) as silent:
        table = DirectTable(server.line, 5.0)  # served meanwhile
        assert table.ask("example.org", "a", 30.0) == 0.0
        table.close()
        silent.settimeout(5.0)
        started = time.monotonic()
        while silent.recv(1024):  # the challenge, then the end of the connection
            pass
        assert time.monotonic() - started < 3.0


def test_a_call_that_is_not_the_table_s_ends_the_connection(served):
    _, server = served
    table = DirectTable(server.line, 5.0)
    try:
        with pytest.raises(GateLost, match="__init__"):
            table._call("__init__", 1.0)
        with pytest.raises(GateLost):  # hung up on
            table.ask("example.com", "a", 30.0)
    finally:
        table.close()


def test_a_closed_table_answers_no_more_calls(served):
    _, server = served
    table = DirectTable(server.line, 5.0)
    assert table.ask("example.com", "a", 30.0) == 0.0
    server.close()
    with pytest.raises(GateLost):
        table.done("example.com", "a", 200)
    with pytest.raises(OSError):
        DirectTable(server.line, 5.0)
    table.close()


def test_a_worker_thread_s_sites_share_one_connection_and_a_broken_one_is_made_again(served):
    import threading

    _, server = served
    first = channel.thread_table(server.line, 5.0)
    assert first.hold("example.com", "a", 30.0)[0] == 0.0
    first.site_over()  # kept for this thread's next site
    assert channel.thread_table(server.line, 5.0) is first
    assert first.end("example.com", "a", 0.5, 0.0) is None  # still connected
    elsewhere: list[object] = []
    worker = threading.Thread(
        target=lambda: elsewhere.append(channel.thread_table(server.line, 5.0))
    )
    worker.start()
    worker.join()
    assert elsewhere[0] is not first  # another thread, its own connection
    elsewhere[0].close()  # type: ignore[attr-defined]
    first._connection.close()  # the connection breaks
    with pytest.raises(GateLost):
        first.delay_for("example.com")
    first.site_over()
    again = channel.thread_table(server.line, 5.0)
    assert again is not first and again.delay_for("example.com") == 0.5
    again.site_over()


def test_an_unanswered_call_is_a_lost_table_within_the_timeout():
    with socket.create_server(("127.0.0.1", 0)) as mute:  # accepts, never answers
        host, port = mute.getsockname()
        with pytest.raises(OSError):  # not even the handshake: the worker uses the actor
            DirectTable(channel.Line(host, port, "00" * 32), 5.0)


# -- on a cluster ----------------------------------------------------------------------------


def kind_of_table_and_a_turn(ref):  # type: ignore[no-untyped-def]
    """On a worker: the kind of table a site gets from ``ref``, and a turn's answer
    (tests/fleet/test_tls.py runs it too)."""
    table = ref.table()
    try:
        return type(table).__name__, table.ask("example.net", "site", 30.0)
    finally:
        table.close()


def test_on_a_cluster_sites_use_the_socket_and_fall_back_to_the_actor(cluster_client):
    from auditor.fleet.cluster import start_gate

    ref, alive = start_gate(cluster_client, 0.0)
    try:
        assert ref.line is not None and ref.line.host == "127.0.0.1"
        kind, wait = cluster_client.submit(kind_of_table_and_a_turn, ref, pure=False).result()
        assert (kind, wait) == ("DirectTable", 0.0)

        with socket.create_server(("127.0.0.1", 0)) as closed_port:
            unreachable = replace(ref.line, port=closed_port.getsockname()[1])
        kind, _ = cluster_client.submit(
            kind_of_table_and_a_turn, replace(ref, line=unreachable), pure=False
        ).result()
        assert kind == "ActorTable"
    finally:
        alive.release()


def test_a_thread_s_kept_connection_is_closed_when_the_thread_ends(served):
    import gc
    import threading

    _, server = served
    kept: list[DirectTable] = []
    worker = threading.Thread(target=lambda: kept.append(channel.thread_table(server.line, 5.0)))
    worker.start()
    worker.join()
    del worker
    gc.collect()
    assert kept[0]._connection._peer.fileno() == -1  # closed, not left to the collector
