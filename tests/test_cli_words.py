"""What the commands and reports say reads as plain English: one site (not "1 sites"),
an empty crawl list named as such, an audit that read no page saying what it weighed
instead, instants to the second, and a missing chart said in one sentence."""

from __future__ import annotations

import re
from dataclasses import replace
from html import unescape

import pytest

from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.scorer.result import AuditResult, CrawlFigures, SampleFigures
from auditor.terminal import audit_summary
from tests.fleet.servers import simulated
from tests.history.helpers import result


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_one_site_and_one_run_are_said_in_the_singular(tmp_path, capsys):
    db, copy = str(tmp_path / "h.sqlite3"), str(tmp_path / "copy.sqlite3")
    with SiteServer(simulated("generation-time", 1, pages=8)) as server:
        args = ["--delay", "0", "--sample", "3", "--concurrency", "1", "--out", str(tmp_path)]
        code, out, err = _run(capsys, "audit", server.origin, "--db", db, *args)
    assert code == 0, err
    assert "auditor: 1 of 1 site done: " in out and "1 of 1 sites" not in out + err, out
    code, out, err = _run(capsys, "db", "copy", "--from", db, "--to", copy)
    assert code == 0 and "copied 1 run of 1 site from" in out, out
    (page,) = tmp_path.glob("*/index.html")
    assert "in 1 sitemap file " in _text(page.read_text(encoding="utf-8"))


def test_an_empty_crawl_list_is_named_as_empty(tmp_path, capsys):
    listing = tmp_path / "sites.txt"
    listing.write_text("# nothing yet\n\n", encoding="utf-8")
    code, _, err = _run(capsys, "audit", "--sites", str(listing), "--db", str(tmp_path / "h"))
    assert code == 2
    assert f"{listing} lists no site" in err and "give SITE arguments" not in err, err
    code, _, err = _run(capsys, "audit", "--db", str(tmp_path / "h"))
    assert code == 2 and "give SITE arguments or --sites FILE" in err, err


def _crawl_only() -> AuditResult:
    """A result whose sample asked for no page: the crawler's fetches were its evidence."""
    base = result()
    crawled = CrawlFigures(compared=40, changed=6, lastmod_advanced=5, both=5,
                           with_date_modified=12, agree=11)  # fmt: skip
    segments = tuple(replace(s, crawled=crawled) for s in base.segments)
    return replace(
        base,
        sample=SampleFigures(
            requested=0, fetched=0, with_date_modified=0, agree=0, disagree=0, skipped_robots=0
        ),
        segments=segments,
        changes=replace(base.changes, from_crawl=crawled) if base.changes else None,
    )


def test_an_audit_that_read_no_page_says_what_it_weighed_instead():
    said = audit_summary(_crawl_only())
    assert "0 of 0 pages read" not in said
    assert "sample: no page read: the crawler's fetches stood in" in said, said
    assert "80 fetches compared" in said, said  # both segments' 40


@pytest.fixture
def no_lastmod(tmp_path, capsys):  # type: ignore[no-untyped-def]
    """A site without lastmod audited once: its history and its report's HTML."""
    db = str(tmp_path / "h.sqlite3")
    with SiteServer(simulated("no-lastmod", 2, pages=8)) as server:
        args = ["--delay", "0", "--sample", "3", "--out", str(tmp_path / "out")]
        code, _, err = _run(capsys, "audit", server.origin, "--db", db, *args)
        assert code == 0, err
        (page,) = (tmp_path / "out").glob("*/index.html")
        yield db, server.origin, page.read_text(encoding="utf-8")


def test_the_report_shows_instants_to_the_second_and_missing_charts_in_a_sentence(
    no_lastmod,
):
    _, _, html = no_lastmod
    assert not re.search(r"\d\d:\d\d:\d\d\.\d+", html), "an instant shown below the second"
    missing = re.findall(r"No chart of [^<]+", html)
    assert missing, "the no-lastmod site has charts it cannot draw"
    for sentence in missing:  # "No chart of X: why." -- one sentence, not two run on
        assert sentence.count(":") == 1 and sentence.endswith("."), sentence
        assert not re.search(r": [A-Z]", sentence), sentence


def test_the_report_of_an_audit_that_read_no_page_says_what_it_weighed(no_lastmod):
    """The report of the same run, had its sample asked for no page and the crawler's
    fetches stood in."""
    from auditor.history import History
    from auditor.report.data import load_report_data
    from auditor.report.site import render_site

    db, origin, _ = no_lastmod
    with History.open(db) as history:
        data = load_report_data(history, origin)
    crawled = {"compared": 40, "changed": 6, "lastmod_advanced": 5, "both": 5,
               "with_date_modified": 12, "agree": 11, "pending": 0}  # fmt: skip
    latest = dict(data.latest)
    latest["sample"] = {**latest["sample"], "requested": 0, "fetched": 0}
    latest["segments"] = [{**s, "crawled": crawled} for s in latest["segments"]]
    data = replace(data, latest=latest, pages=[])
    said = _text(render_site(data, {"dispersion": [], "sample": [], "history": []}))
    assert "0 of 0 pages read" not in said
    assert "No page read: the crawler's fetches stood in (auditor crawled): 40 fetches" in said


def test_the_fleet_index_of_one_site_says_one_site(no_lastmod, tmp_path, capsys):
    db, _, _ = no_lastmod
    code, _, err = _run(capsys, "report", "--all", "--db", db, "--out", str(tmp_path / "all"))
    assert code == 0, err
    said = _text((tmp_path / "all" / "index.html").read_text(encoding="utf-8"))
    assert "1 site · made" in said and "1 of 1 site shown" in said, said[:300]
    assert "1 sites" not in said


def test_a_plan_of_an_empty_crawl_list_is_a_usage_error_naming_it(tmp_path, capsys):
    listing = tmp_path / "sites.txt"
    listing.write_text("\n# later\n", encoding="utf-8")
    db = str(tmp_path / "h.sqlite3")
    code, out, err = _run(capsys, "plan", "--sites", str(listing), "--db", db, "--no-walk")
    assert code == 2 and out == "", out
    assert f"no site to plan: {listing} lists no site" in err, err
