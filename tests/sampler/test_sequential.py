"""Sequential sampling on a loopback site: robots.txt still rules, the judge stops it.

The pauses between pages (the site's Crawl-delay) run on a simulated clock."""

from __future__ import annotations

from dataclasses import replace

import pytest

from auditor.sampler import SampleOptions, sample_site
from auditor.sampler.choose import DECIDED
from auditor.walker.inventory import load_inventory
from tests.sampler.faketime import FakeTime

ALLOWED = {f"/blog/{c}.html" for c in "abcdefg"} | {"/private/ok.html"}


def _page_paths(server) -> set[str]:
    return {r.path for r in server.log if r.path not in ("/robots.txt", "/sitemap.xml")}


def test_disallowed_pages_are_never_requested_and_do_not_spend_the_budget(serve):
    server, time = serve("sites/sample-polite"), FakeTime()
    entries = load_inventory(server.origin).entries
    options = SampleOptions(sample=8, delay=0.01)
    run = sample_site(
        server.origin, entries, options, seed=7, judge=lambda pages: {}, pacer=time.pacer(0.01)
    )

    assert _page_paths(server) == ALLOWED
    assert run.requested == 8 and 0 < run.skipped_robots <= 4
    assert time.sleeps == pytest.approx([0.3] * 7)  # the Crawl-delay, one page at a time


def test_the_judge_stops_the_run_before_the_budget(serve):
    server = serve("sites/sample-polite")
    entries = load_inventory(server.origin).entries
    sitemaps = set(entries["sitemap"].astype(str))

    def judge(pages):
        fetched = sum(e.ok for _, e in pages)
        return dict.fromkeys(sitemaps, DECIDED) if fetched >= 3 else {}

    options = SampleOptions(sample=8, delay=0.01)
    sequential, time = FakeTime(), FakeTime()  # a pacer each, as each run has its own
    run = sample_site(
        server.origin, entries, options, seed=7, judge=judge, pacer=sequential.pacer(0.01)
    )
    assert run.fetched == 3 and len(_page_paths(server)) == 3
    assert sequential.sleeps == pytest.approx([0.3] * 2)
    fixed = sample_site(
        server.origin,
        entries,
        replace(options, sequential=False),
        seed=7,
        judge=judge,
        pacer=time.pacer(0.01),
    )
    assert fixed.requested == 8  # sequential=False: the judge is not asked
    assert time.sleeps == pytest.approx([0.3] * 7)
