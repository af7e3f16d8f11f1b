"""The audit commands from the command line, against simulated loopback sites."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History

PROJECT = str(Path(__file__).resolve().parents[2])


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # reports land in ./reports: keep them out of the project
    return str(tmp_path / "history.sqlite3")


def _site(behaviour: str, seed: int = 1, **sections) -> SimulatedSite:
    chosen = sections or {"pages": BEHAVIOURS[behaviour]}
    return SimulatedSite(behaviour, chosen, pages_per_section=60, seed=seed)


def test_audit_json_history_and_changed(db, capsys):
    site = _site("", products=BEHAVIOURS["generation-time"], blog=BEHAVIOURS["accurate-jsonld"])
    with SiteServer(site) as server:
        assert main(["audit", server.origin, "--db", db, "--delay", "0", "--json"]) == 0
        result = json.loads(capsys.readouterr().out)

        assert result["schema"] == 1 and result["run_id"] == 1
        assert result["site"] == server.origin and result["verdict"] == "partial"
        assert result["changes"] is None
        assert {s["verdict"] for s in result["segments"]} == {"trusted", "untrusted"}
        sample, segments = result["sample"], result["segments"]
        assert sample["requested"] == sample["fetched"] == sum(s["requested"] for s in segments)
        assert sample["requested"] < 50  # both sub-sitemaps decided before the budget ran out
        assert Path(result["report"]).is_file() and Path(result["report"]).name == "index.html"

        assert main(["history", "--db", db, "--json"]) == 0
        (run,) = json.loads(capsys.readouterr().out)
        assert (run["run_id"], run["site"], run["verdict"]) == (1, server.origin, "partial")

        since = (site.clock - timedelta(days=100)).isoformat()  # the site's virtual time
        assert main(["changed", server.origin, "--since", since, "--db", db]) == 0
        urls = capsys.readouterr().out.split()
        products = [u for u in urls if "/products/" in u]
        blog = [u for u in urls if "/blog/" in u]
        assert len(products) == 60  # not trusted: everything
        newer = [
            p
            for p in site.pages.values()
            if p.section == "blog" and p.modified > datetime.fromisoformat(since)
        ]
        assert len(blog) == len(newer) < 60  # trusted: only what changed since

        assert (
            main(["changed", server.origin, "--since", since, "--db", db, "--format", "jsonl"]) == 0
        )
        items = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert {i["why"] for i in items} == {"not-trusted", "lastmod-newer"}


def test_audit_text_summary_names_the_verdict_and_what_to_do(db, capsys):
    with SiteServer(_site("generation-time")) as server:
        assert main(["audit", server.origin, "--db", db, "--delay", "0"]) == 0
    out = capsys.readouterr().out

    assert f"{server.origin}: UNTRUSTED: lastmod cannot be trusted" in out
    assert "- generation-time [/sitemap.xml]:" in out
    assert "re-verify in" in out
    report = out.rsplit("report: ", 1)[1].split()[0]  # where its report went
    assert Path(report).is_file() and server.origin in Path(report).read_text(encoding="utf-8")


def test_reverify_audits_only_the_sites_that_are_due(db, capsys):
    first, second = _site("accurate-jsonld", 1), _site("no-lastmod", 2)
    with SiteServer(first) as a, SiteServer(second) as b:
        for origin in (a.origin, b.origin):
            assert main(["audit", origin, "--db", db, "--delay", "0", "--json"]) == 0
        capsys.readouterr()
        assert main(["reverify", "--db", db]) == 0
        assert "no site is due" in capsys.readouterr().out

        aged = (datetime.now(UTC) - timedelta(days=60)).isoformat(timespec="microseconds")
        with sqlite3.connect(db) as conn:  # make one site's last run old enough to be due
            conn.execute(
                "UPDATE runs SET started_at = ?, finished_at = ? "
                "WHERE site_id = (SELECT id FROM sites WHERE origin = ?)",
                (aged, aged, a.origin),
            )
        assert main(["reverify", "--db", db, "--delay", "0", "--json"]) == 0
        (result,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    assert result["site"] == a.origin and result["run_id"] == 3
    assert Path(result["report"]).is_file()  # the report is refreshed too
    assert result["changes"]["compared"] > 0  # the panel was re-fetched
    assert result["previous_verdict"] == "trusted"


def test_usage_errors(db, capsys, tmp_path):
    page = tmp_path / "sitemap.xml"
    page.write_text("<urlset/>")
    assert main(["audit", str(page), "--db", db]) == 2
    assert "needs a site" in capsys.readouterr().err
    assert main(["changed", "http://127.0.0.1:1", "--since", "2026-01-01", "--db", db]) == 2
    assert "no audit of http://127.0.0.1:1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["changed", "http://127.0.0.1:1", "--since", "yesterday", "--db", db])


def test_a_newer_database_is_refused_and_left_alone(db, capsys):
    History.open(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 999")
    before = Path(db).read_bytes()

    assert main(["history", "--db", db]) == 1
    assert "newer auditor" in capsys.readouterr().err
    assert Path(db).read_bytes() == before


def test_an_audit_killed_mid_run_leaves_the_history_as_it_was(db, capsys):
    site = _site("accurate-jsonld")
    with SiteServer(site) as server:
        assert main(["audit", server.origin, "--db", db, "--delay", "0", "--json"]) == 0
        first_pages = json.loads(capsys.readouterr().out)["sample"]["requested"]
        started = len(server.requests)
        child = subprocess.Popen(
            [sys.executable, "-m", "auditor", "audit", server.origin, "--db", db, "--delay", "0.2"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": PROJECT},
        )
        deadline = time.monotonic() + 30
        while len(server.requests) < started + 10 and time.monotonic() < deadline:
            time.sleep(0.05)  # until it is well into sampling pages
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)

    assert len(server.requests) >= started + 10
    with History.open(db) as history:
        assert [r.run_id for r in history.runs()] == [1]
        assert len(history.latest_pages(server.origin)) == first_pages
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_an_unreadable_site_says_so_and_exits_1(db, serve, capsys):
    """A site that answers, but with no sitemap anywhere (every path 404s): a finding,
    saved (a site never reached is not: tests/audit/test_cli_unreachable.py)."""
    origin = serve(routes={}).origin
    assert main(["audit", origin, "--db", db, "--delay", "0", "--timeout", "2"]) == 1
    out = capsys.readouterr().out
    assert f"{origin}: INCONCLUSIVE: no sitemap could be read" in out
    assert "- sitemap-unreadable: no sitemap could be read" in out
    with History.open(db) as history:
        assert [r.verdict for r in history.runs()] == ["inconclusive"]
