"""An audit of a site that keeps answering 503: the sample stops early and says so."""

from __future__ import annotations

import json

import pytest

from auditor.cli import main
from tests.loopback import send

PAGES = 12


def _overloaded_site(serve):
    """A site whose sitemap reads fine and whose every page answers 503."""

    def sitemap(handler) -> None:
        origin = f"http://{handler.headers['Host']}"
        locs = "".join(
            f"<url><loc>{origin}/p/{i}.html</loc><lastmod>2026-01-0{1 + i % 9}</lastmod></url>"
            for i in range(PAGES)
        )
        xmlns = "http://www.sitemaps.org/schemas/sitemap/0.9"
        send(handler, 200, f'<urlset xmlns="{xmlns}">{locs}</urlset>'.encode())

    routes = {f"/p/{i}.html": lambda h: send(h, 503, b"busy", "text/plain") for i in range(PAGES)}
    routes["/robots.txt"] = lambda h: send(h, 404, b"", "text/plain")
    routes["/sitemap.xml"] = sitemap
    return serve(routes=routes)


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # reports land in ./reports
    return str(tmp_path / "history.sqlite3")


def test_an_overloaded_site_stops_the_sample_and_the_result_says_so(serve, db, capsys):
    server = _overloaded_site(serve)
    assert main(["audit", server.origin, "--db", db, "--delay", "0", "--json"]) == 0
    sample = json.loads(capsys.readouterr().out)["sample"]

    assert sample["stopped"] == "overloaded"
    assert sample["requested"] == 1 and sample["fetched"] == 0  # one page, asked three times
    # Sampling is sequential in an audit: once the host is given up, the page whose turn
    # came is recorded as not asked and no other is chosen.
    assert sample["skipped_overloaded"] == 1 and sample["skipped_time_budget"] == 0
    assert sample["skipped_robots"] == 0  # the contract's keys are all still there
    assert len([r for r in server.log if r.path.startswith("/p/")]) == 3

    assert main(["audit", server.origin, "--db", db, "--delay", "0"]) == 0
    summary = capsys.readouterr().out
    assert "sampling stopped early (overloaded)" in summary
    assert "the site kept answering 429/503; no page more was asked for" in summary
