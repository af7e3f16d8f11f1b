"""Every command that takes --db, against a PostgreSQL history (--db and AUDITOR_DB)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from auditor.cli import main
from auditor.demo import demo_sites
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
from tests.history.backends import raw


def _site(seed: int) -> SimulatedSite:
    sections = {"products": BEHAVIOURS["generation-time"], "blog": BEHAVIOURS["accurate-jsonld"]}
    return SimulatedSite("mixed", sections, pages_per_section=40, seed=seed)


def test_the_history_commands_on_postgresql(postgres_server, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # reports land in ./reports
    url = postgres_server.new_database("auditor")
    site = _site(1)
    with SiteServer(site) as server:
        assert main(["audit", server.origin, "--db", url, "--delay", "0", "--json"]) == 0
        first = json.loads(capsys.readouterr().out)
        assert (first["run_id"], first["verdict"]) == (1, "partial")

        monkeypatch.setenv("AUDITOR_DB", url)  # from here on, the environment names it
        assert main(["history", "--json"]) == 0
        (run,) = json.loads(capsys.readouterr().out)
        assert (run["run_id"], run["site"]) == (1, server.origin)

        since = (site.clock - timedelta(days=100)).isoformat()
        assert main(["changed", server.origin, "--since", since]) == 0
        urls = capsys.readouterr().out.split()
        assert len([u for u in urls if "/products/" in u]) == 40  # untrusted: every URL

        assert main(["report", server.origin, "--out", "out"]) == 0
        assert Path(capsys.readouterr().out.strip()).is_file()
        assert main(["export", "--format", "csv", "--out", "export"]) == 0
        exported = capsys.readouterr().out.split()
        assert sorted(Path(p).name for p in exported) == [
            "coverage.csv", "coverage_findings.csv", "extensions.csv", "pages.csv", "runs.csv",
            "segments.csv", "sites.csv",
        ]  # fmt: skip

        aged = (datetime.now(UTC) - timedelta(days=60)).isoformat(timespec="microseconds")
        raw(url, "UPDATE runs SET started_at = ?, finished_at = ?", (aged, aged))
        assert main(["reverify", "--delay", "0", "--json"]) == 0
        (line,) = capsys.readouterr().out.splitlines()  # JSON Lines: one site was due
        second = json.loads(line)
        assert (second["run_id"], second["previous_verdict"]) == (2, "partial")
        assert second["changes"]["compared"] > 0  # the panel was read back from PostgreSQL


def test_the_demo_saves_into_a_postgresql_history(postgres_server, tmp_path, capsys):
    url = postgres_server.new_database("auditor")
    assert main(["demo", "--out", str(tmp_path), "--db", url]) == 0
    assert "Open the fleet index" in capsys.readouterr().out
    assert not (tmp_path / "history.sqlite3").exists()  # no history of its own
    with History.open(url) as history:
        sites = history.sites()
        assert len(sites) == len(demo_sites()) and {s.runs for s in sites} == {2}
