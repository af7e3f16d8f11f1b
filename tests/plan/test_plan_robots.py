"""robots.txt is part of the plan: a URL it disallows for auditor is never planned nor
put in a frontier, with a fresh walk or on the stored one, and the plan's summary says
how many (loopback sites, a real history on SQLite and PostgreSQL)."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from auditor.audit import audit_site
from auditor.cli import main
from auditor.crawl.record import record_fetches
from auditor.history import History
from auditor.planner.frontier import Frontier
from tests.crawl.sites import OPTIONS, crawl
from tests.loopback import LoopbackServer, send

_ROBOTS = "User-agent: *\nDisallow: /private/\n\nSitemap: {{origin}}/sitemap.xml\n"
_SITEMAP = """<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{}</urlset>"""
PRIVATE = [f"/private/s{n}.html" for n in range(8)]
PUBLIC = [f"/pub/p{n:02}.html" for n in range(16)]
BUDGET = 12  # fewer than the allowed pages: the plan is full of them


def _site(root: Path) -> None:
    """A site whose robots.txt disallows /private/, and whose sitemap lists those URLs
    first (the plan's ties go to a site's pages in sitemap order)."""
    for path in PRIVATE + PUBLIC:
        page = root / path.lstrip("/")
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"<html><body><main><h1>{path}</h1></main></body></html>")
    urls = "".join(f"<url><loc>{{{{origin}}}}{p}</loc></url>" for p in PRIVATE + PUBLIC)
    (root / "sitemap.xml").write_text(_SITEMAP.format(urls))
    (root / "robots.txt").write_text(_ROBOTS)


def _plan(capsys, db_url: str, origin: str, form: str, *more: str) -> tuple[list[str], str]:
    """The URLs ``auditor plan`` lists (paths) in ``form``, and its summary (stderr)."""
    args = ["plan", origin, "--db", db_url, "--budget", str(BUDGET), "--format", form, *more]
    assert main(args) == 0
    captured = capsys.readouterr()
    if form == "jsonl":
        urls = [json.loads(line)["url"] for line in captured.out.splitlines()]
    elif form == "csv":
        urls = [row["url"] for row in csv.DictReader(io.StringIO(captured.out))]
    else:
        urls = captured.out.split()
    return [u.removeprefix(origin) for u in urls], captured.err


@pytest.fixture
def audited(tmp_path, db_url):
    """The site on loopback, audited once (its sample skips /private/)."""
    _site(tmp_path)
    with LoopbackServer(root=tmp_path) as server:
        with History.open(db_url) as history:
            audit_site(server.origin, history, OPTIONS)
        yield server


@pytest.mark.parametrize("form", ["jsonl", "csv", "text"])
def test_disallowed_urls_are_never_planned_and_the_budget_goes_to_allowed_pages(
    audited, db_url, capsys, form
):
    planned, summary = _plan(capsys, db_url, audited.origin, form)

    assert not set(planned) & set(PRIVATE)
    assert len(planned) == BUDGET and set(planned) <= set(PUBLIC)
    assert "8 URLs disallowed by robots.txt, not planned" in summary


def test_a_plan_on_the_stored_walk_reads_the_robots_txt_kept_with_it(audited, db_url, capsys):
    planned, summary = _plan(capsys, db_url, audited.origin, "jsonl", "--no-walk")
    requests = len(audited.log)
    again, _ = _plan(capsys, db_url, audited.origin, "jsonl", "--no-walk")

    assert len(planned) == BUDGET and set(planned) <= set(PUBLIC)
    assert "8 URLs disallowed by robots.txt, not planned" in summary
    assert again == planned and len(audited.log) == requests  # no request made


def test_the_next_days_plan_still_leaves_them_out(audited, db_url, capsys):
    first, _ = _plan(capsys, db_url, audited.origin, "jsonl")
    yesterday = datetime.now(UTC) - timedelta(days=1)
    with History.open(db_url) as history:
        allowed = [p for p in first if not p.startswith("/private/")]  # as a crawler obeys
        record_fetches(history, crawl(audited.origin, allowed, yesterday))
    second, summary = _plan(capsys, db_url, audited.origin, "jsonl")
    third, _ = _plan(capsys, db_url, audited.origin, "jsonl", "--no-walk")

    assert set(PUBLIC) - set(first) <= set(second)  # the allowed pages not fetched yet
    assert not (set(second) | set(third)) & set(PRIVATE)
    assert "8 URLs disallowed by robots.txt, not planned" in summary


def test_a_frontier_leaves_them_out_and_counts_them(audited, db_url):
    with History.open(db_url) as history:
        frontier = Frontier.load(history, [audited.origin], budget=BUDGET)

    assert len(frontier) == BUDGET
    assert not any(frontier.fetch(audited.origin + p) for p in PRIVATE)
    assert not any(frontier.is_due(audited.origin + p) for p in PRIVATE)  # listed, not due
    assert frontier.disallowed == {audited.origin: len(PRIVATE)}


def _answer(status: int):
    return lambda handler: send(handler, status, b"", "text/plain")


def test_robots_txt_unavailable_allows_all_and_unreachable_disallows_all(audited, db_url, capsys):
    """As the sampler reads it (RFC 9309): a 404 is no robots.txt, a 503 forbids all."""
    audited.routes["/robots.txt"] = _answer(404)
    allowed, summary = _plan(capsys, db_url, audited.origin, "jsonl", "--budget", "100")
    assert set(allowed) == set(PUBLIC + PRIVATE)
    assert "disallowed" not in summary

    audited.routes["/robots.txt"] = _answer(503)
    forbidden, summary = _plan(capsys, db_url, audited.origin, "jsonl", "--budget", "100")
    kept, kept_summary = _plan(capsys, db_url, audited.origin, "jsonl", "--no-walk")
    assert forbidden == [] and kept == []
    expected = (
        "24 URLs disallowed by robots.txt, not planned "
        "(robots.txt answered HTTP 503, read as disallowing every URL)"
    )
    assert expected in summary and expected in kept_summary


def test_a_stored_walk_with_no_robots_txt_kept_is_planned_unchecked_and_says_so(
    audited, db_url, capsys
):
    """A history from before auditor kept robots.txt: nothing to leave out by, said."""
    with History.open(db_url) as history, history._db.write():
        history._db.execute("DELETE FROM site_robots")
    planned, summary = _plan(capsys, db_url, audited.origin, "jsonl", "--no-walk")
    walked, walked_summary = _plan(capsys, db_url, audited.origin, "jsonl")  # keeps it again
    kept, _ = _plan(capsys, db_url, audited.origin, "jsonl", "--no-walk")

    assert "robots.txt not checked (none kept for the stored walk" in summary
    assert len(planned) == BUDGET  # as before auditor kept it
    assert not (set(walked) | set(kept)) & set(PRIVATE)
    assert "8 URLs disallowed by robots.txt, not planned" in walked_summary
