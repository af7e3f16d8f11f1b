"""Which reports a fleet draws (``--reports changed|all|none``), that every saved site's
line is printed whatever its report, that the index links every site (a report not
drawn through the page that says how), and ``auditor report --all``."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote

import pytest

from auditor.cli import main
from auditor.cli.fleet import wants_report
from auditor.demo.server import SiteServer
from auditor.history import History
from auditor.report import site_slug
from tests.fleet.servers import simulated

QUICK = ["--delay", "0.02", "--concurrency", "2", "--json"]


@pytest.fixture
def servers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    started = [SiteServer(simulated("accurate-jsonld", n), host=f"127.0.31.{n}") for n in (1, 2, 3)]
    yield started
    for server in started:
        server.close()


@pytest.fixture
def sites(servers):
    return [s.origin for s in servers]


def _fleet(sites, *extra, capsys):
    code = main(["audit", *sites, "--db", "h.sqlite3", *QUICK, *extra])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def _index_links(folder: Path) -> dict[str, str]:
    """site -> href, from the index's rows."""
    html = (folder / "index.html").read_text(encoding="utf-8")
    links = {}
    for row in html.split("<tr data-site=")[1:]:
        site = row.split('"')[1]
        links[site] = row.split('href="', 1)[1].split('"', 1)[0]
    return links


def test_a_first_fleet_draws_its_new_sites_reports_and_the_index_links_them(
    sites, tmp_path, capsys
):
    code, lines, err = _fleet(sites, "--sample", "4", capsys=capsys)

    assert code == 0 and sorted(r["site"] for r in lines) == sorted(sites)
    assert all(r["previous_verdict"] is None for r in lines)
    for line in lines:  # a first audit: a verdict that is new, drawn where its line says
        assert line["report"] == str(Path("reports") / site_slug(line["site"]) / "index.html")
        assert Path(line["report"]).is_file()
    links = _index_links(tmp_path / "reports")
    assert links == {s: f"{site_slug(s)}/index.html" for s in sites}
    summary = json.loads(err.strip().splitlines()[-1])["summary"]
    assert summary["reports"] == {"drawn": 3, "policy": "changed"}
    assert "--reports none to draw none" in err  # how a large first fleet skips them

    code, lines, err = _fleet(sites, "--sample", "4", capsys=capsys)  # no longer new
    redrawn = [r for r in lines if r["verdict"] != r["previous_verdict"]]
    assert code == 0 and all((r["report"] is None) == (r not in redrawn) for r in lines)
    assert f"reports: {len(redrawn)} drawn (--reports changed" in err
    assert all(href.endswith("/index.html") for href in _index_links(tmp_path / "reports").values())


def test_an_undrawn_site_links_the_page_that_says_how(sites, tmp_path, capsys):
    code, _, _ = _fleet(sites, "--sample", "3", "--reports", "none", capsys=capsys)
    assert code == 0
    links = _index_links(tmp_path / "reports")
    assert set(links) == set(sites)
    for site, href in links.items():  # the page that says how, the site in its fragment
        page, fragment = href.split("#")
        assert page == "not-drawn.html" and unquote(fragment) == site
    page = (tmp_path / "reports" / "not-drawn.html").read_text(encoding="utf-8")
    assert "auditor report --all --out reports" in page


def test_a_changed_verdict_draws_that_sites_report_and_the_rest_stay_undrawn(
    servers, sites, tmp_path, capsys
):
    _fleet(sites[:2], "--sample", "6", capsys=capsys)
    # the first site's generator changes: every lastmod is now the moment of generation
    servers[0].site = simulated("generation-time", 1)
    code, lines, err = _fleet(sites, "--sample", "6", capsys=capsys)

    assert code == 0
    by_site = {r["site"]: r for r in lines}
    changed = [s for s, r in by_site.items() if r["previous_verdict"] != r["verdict"]]
    assert changed == [sites[0], sites[2]], [(r["previous_verdict"], r["verdict"]) for r in lines]
    for site, line in by_site.items():  # the third is new: its verdict is too
        if site in changed:  # drawn by the time the command is done, where its line says
            assert line["report"] == str(Path("reports") / site_slug(site) / "index.html")
            assert Path(line["report"]).is_file()
        else:
            assert line["report"] is None
    assert f"reports: {len(changed)} drawn (--reports changed" in err


def test_reports_all_draws_every_site_and_none_draws_none(sites, tmp_path, capsys):
    code, lines, err = _fleet(sites, "--sample", "3", "--reports", "all", capsys=capsys)
    assert code == 0 and all(Path(r["report"]).is_file() for r in lines)
    assert "reports: 3 drawn (--reports all" in err
    assert set(_index_links(tmp_path / "reports").values()) == {
        f"{site_slug(s)}/index.html" for s in sites
    }

    other = tmp_path / "other"
    code, lines, err = _fleet(
        sites, "--sample", "3", "--reports", "none", "--out", str(other), capsys=capsys
    )
    assert code == 0 and all(r["report"] is None for r in lines)
    assert not any(p.is_dir() for p in other.iterdir())  # the index and its page only


def test_report_all_draws_every_site_of_the_history(sites, tmp_path, capsys):
    _fleet(sites, "--sample", "3", capsys=capsys)

    assert main(["report", "--all", "--db", "h.sqlite3"]) == 0
    printed = capsys.readouterr().out.split()
    assert sorted(printed) == sorted(f"reports/{site_slug(s)}/index.html" for s in sites)
    assert all(Path(p).is_file() for p in printed)
    links = _index_links(tmp_path / "reports")
    assert all(not href.startswith("not-drawn") for href in links.values())


def test_report_takes_sites_or_all_not_both(sites, capsys):
    _fleet(sites[:1], "--sample", "3", capsys=capsys)
    assert main(["report", "--db", "h.sqlite3"]) == 2
    assert main(["report", sites[0], "--all", "--db", "h.sqlite3"]) == 2
    assert "give SITE arguments or --all" in capsys.readouterr().err
    with History.open("h.sqlite3") as history:
        assert len(history.runs()) == 1


class _Result:
    def __init__(self, verdict, previous):
        self.verdict, self.previous_verdict = verdict, previous


@pytest.mark.parametrize(
    ("verdict", "previous", "policy", "drawn"),
    [
        ("trusted", None, "changed", True),  # a first run: a new verdict
        ("trusted", "trusted", "changed", False),
        ("untrusted", "trusted", "changed", True),
        ("trusted", None, "all", True),
        ("untrusted", "trusted", "none", False),
    ],
)
def test_which_results_a_policy_draws(verdict, previous, policy, drawn):
    assert wants_report(_Result(verdict, previous), policy) is drawn
