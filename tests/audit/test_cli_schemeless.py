"""A target written without a scheme, from the command line: https first; where the server
there speaks no TLS (a plain-HTTP server on that port), http, said on stderr; a certificate
refused is never a reason to fall back. The site is named one way, its origin with its
scheme, by every command, and the commands that read the history find it by that name.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from tests.history.conftest import backend, db_url
from tests.loopback import LoopbackServer

__all__ = ["backend", "db_url"]


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # reports land in ./reports: keep them out of the project
    return tmp_path


@pytest.fixture(scope="module")
def plain():
    """A plain-HTTP site, its origin and its virtual clock."""
    site = SimulatedSite("", {"pages": BEHAVIOURS["accurate-jsonld"]}, pages_per_section=20)
    with SiteServer(site) as server:
        yield server, site


def _bare(origin: str) -> str:
    return origin.split("://", 1)[1]


def test_inspect_falls_back_to_http_and_says_so(plain, capsys):
    server, _ = plain
    bare = _bare(server.origin)
    assert main(["inspect", bare, "--json"]) == 0
    out, err = capsys.readouterr()
    assert f"{bare}: no TLS there, using {server.origin}" in err
    assert json.loads(out)["site"] == server.origin
    assert "SSLError" not in err and "WRONG_VERSION_NUMBER" not in err


def test_walk_falls_back_to_http(plain, capsys):
    server, _ = plain
    assert main(["walk", _bare(server.origin)]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 20
    assert f"using {server.origin}" in err


def test_audit_and_the_history_commands_name_it_by_its_origin(plain, here, db_url, capsys):
    server, site = plain
    bare = _bare(server.origin)
    assert main(["audit", bare, "--db", db_url, "--delay", "0", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["site"] == server.origin
    assert f"using {server.origin}" in err

    assert main(["history", bare, "--db", db_url, "--json"]) == 0
    assert [r["site"] for r in json.loads(capsys.readouterr().out)] == [server.origin]
    since = (site.clock - timedelta(days=1000)).isoformat()
    assert main(["changed", bare, "--since", since, "--db", db_url]) == 0
    assert len(capsys.readouterr().out.split()) == 20
    assert main(["report", bare, "--db", db_url]) == 0
    path = capsys.readouterr().out.strip()
    assert server.origin in Path(path).read_text(encoding="utf-8")
    assert main(["plan", bare, "--db", db_url, "--format", "jsonl"]) == 0
    assert main(["coverage", bare, "--db", db_url]) in (0, 1)
    assert "not in the history" not in capsys.readouterr().err


def test_a_certificate_refused_is_no_reason_to_fall_back(here, capsys):
    with LoopbackServer(tls=True) as server:  # self-signed: not trusted here
        bare = _bare(server.origin)
        assert main(["inspect", bare]) == 1
    err = capsys.readouterr().err
    assert f"could not reach https://{bare}: TLS handshake failed: certificate" in err
    assert "using http://" not in err


def test_a_fleet_keeps_https_for_a_bare_name_and_says_what_to_write(plain, here, capsys):
    server, _ = plain
    other = SimulatedSite("", {"pages": BEHAVIOURS["no-lastmod"]}, pages_per_section=10)
    with SiteServer(other) as second:
        code = main(["audit", _bare(server.origin), second.origin, "--db", "h.sqlite3",
                     "--delay", "0", "--json"])  # fmt: skip
    lines = {r["site"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert code == 1
    failed = lines["https://" + _bare(server.origin)]["failed"]
    assert failed["code"] == "unreachable"
    assert f"try {server.origin}" in failed["detail"]
