"""A target never reached (refused, name not resolved, no TLS, no answer) from the command
line: its cause in plain words, a non-zero exit, and nothing saved as if it were audited.

The name that never resolves is under ``.invalid`` (RFC 2606), and the test session's
guard (tests/conftest.py) refuses every look-up off loopback anyway: nothing leaves it.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
from tests.history.conftest import backend, db_url
from tests.loopback import LoopbackServer

__all__ = ["backend", "db_url"]


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # reports land in ./reports: keep them out of the project
    return tmp_path


def _closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _runs(db: str) -> list[object]:
    with History.open(db) as history:
        return list(history.runs())


def _unreached(here: Path, db: str, target: str, capsys, *extra: str) -> str:
    """Audit ``target``, which is never reached: exit 1, no run, no report; its stderr."""
    assert main(["audit", target, "--db", db, "--delay", "0", *extra]) == 1
    out, err = capsys.readouterr()
    assert "re-verify" not in out + err and "INCONCLUSIVE" not in out
    assert _runs(db) == []
    assert not (here / "reports").exists()
    assert main(["reverify", "--db", db]) == 0
    assert "no site is due" in capsys.readouterr().out
    return err


def test_a_refused_connection_is_named_and_nothing_is_saved(here, db_url, capsys):
    target = f"http://127.0.0.1:{_closed_port()}"
    err = _unreached(here, db_url, target, capsys)
    assert f"auditor: could not reach {target}: connection refused" in err


def test_a_name_not_resolved_is_named(here, db_url, capsys):
    err = _unreached(here, db_url, "https://no-such-host.invalid", capsys)
    assert "could not reach https://no-such-host.invalid: name not resolved" in err


def test_no_tls_where_https_was_asked_is_named(here, capsys):
    with LoopbackServer() as server:  # plain HTTP
        target = server.origin.replace("http://", "https://")
        err = _unreached(here, str(here / "h.sqlite3"), target, capsys)
    assert f"could not reach {target}: TLS handshake failed" in err
    assert "no TLS" in err  # the server speaks plain HTTP: say so


def test_no_answer_within_the_timeout_is_named(here, capsys):
    hold = threading.Event()

    def silent(handler):
        hold.wait(5)

    server = LoopbackServer(routes={"/robots.txt": silent, "/sitemap.xml": silent})
    try:
        err = _unreached(here, str(here / "h.sqlite3"), server.origin, capsys, "--timeout", "0.5")
    finally:
        hold.set()
        server.close()
    assert f"could not reach {server.origin}: timed out after 0.5 s" in err


def test_with_json_the_failure_is_a_record_on_stdout(here, capsys):
    target = f"http://127.0.0.1:{_closed_port()}"
    assert main(["audit", target, "--db", str(here / "h.sqlite3"), "--json"]) == 1
    out, err = capsys.readouterr()
    record = json.loads(out)
    assert record["site"] == target and record["verdict"] is None
    assert record["failed"]["code"] == "unreachable"
    assert "connection refused" in record["failed"]["detail"]
    assert "could not reach" in err


def test_a_fleet_records_its_unreached_site_as_failed_and_saves_the_others(here, db_url, capsys):
    dead = f"http://127.0.0.1:{_closed_port()}"
    site = SimulatedSite("", {"pages": BEHAVIOURS["accurate-jsonld"]}, pages_per_section=20)
    with SiteServer(site) as server:
        code = main(["audit", server.origin, dead, "--db", db_url, "--delay", "0", "--json"])
    out, _err = capsys.readouterr()
    lines = {r["site"]: r for r in map(json.loads, out.splitlines())}
    assert code == 1  # a site failed
    assert lines[dead]["failed"]["code"] == "unreachable"
    assert "connection refused" in lines[dead]["failed"]["detail"]
    assert lines[server.origin]["verdict"] is not None
    assert {r.site for r in _runs(db_url)} == {server.origin}  # type: ignore[attr-defined]


def test_reverify_goes_on_past_a_site_now_unreached(here, capsys):
    """A site audited before, down today: said, nothing saved, the others still done."""
    db = str(here / "h.sqlite3")
    site = SimulatedSite("", {"pages": BEHAVIOURS["accurate-jsonld"]}, pages_per_section=20)
    with SiteServer(site) as server:
        origin = server.origin
        assert main(["audit", origin, "--db", db, "--delay", "0"]) == 0
    aged = (datetime.now(UTC) - timedelta(days=60)).isoformat(timespec="microseconds")
    with sqlite3.connect(db) as conn:  # its last run old enough to be due
        conn.execute("UPDATE runs SET started_at = ?, finished_at = ?", (aged, aged))
    capsys.readouterr()
    assert main(["reverify", "--db", db, "--delay", "0"]) == 1
    _out, err = capsys.readouterr()
    assert f"could not reach {origin}: connection refused" in err
    assert len(_runs(db)) == 1
