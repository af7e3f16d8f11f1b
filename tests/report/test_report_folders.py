"""Where reports go, from the command line: one folder per origin (scheme, host and port),
so two origins that differ in their scheme alone never overwrite each other's report."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite


def test_two_origins_differing_in_scheme_get_two_report_folders(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    site = SimulatedSite("", {"pages": BEHAVIOURS["accurate-jsonld"]}, pages_per_section=20)
    with SiteServer(site) as server:
        plain = server.origin
        secure = "https://" + plain.removeprefix("http://")
        assert main(["audit", plain, "--db", "h.sqlite3", "--delay", "0"]) == 0
        with sqlite3.connect("h.sqlite3") as conn:  # that run is now the https origin's
            conn.execute("UPDATE sites SET origin = ? WHERE origin = ?", (secure, plain))
        assert main(["audit", plain, "--db", "h.sqlite3", "--delay", "0"]) == 0
    capsys.readouterr()

    assert main(["report", "--all", "--db", "h.sqlite3"]) == 0
    printed = capsys.readouterr().out.split()
    assert len(set(printed)) == 2
    pages = {Path(p).read_text(encoding="utf-8") for p in printed}
    assert any(f"{secure}<" in page or f"{secure} " in page for page in pages)
    index = (tmp_path / "reports" / "index.html").read_text(encoding="utf-8")
    for path in printed:
        assert Path(path).parent.name + "/index.html" in index
