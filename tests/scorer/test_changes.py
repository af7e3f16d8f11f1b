"""The tally counts a change only where the page's main content changed, template left out;
pages saved before blocks existed are compared on their whole-text hash, as before."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from auditor.evidence.fingerprint import fingerprint_tree
from auditor.evidence.page import parse_html
from auditor.scorer.changes import compare_pages, template_notes
from auditor.scorer.result import PageObservation
from auditor.scorer.tally import tally_pages

SITEMAP = "https://example.com/sitemap.xml"
THEN = datetime(2026, 10, 1, tzinfo=UTC)
NOW = THEN + timedelta(days=30)
TOPICS = ["bridges", "trams", "buses", "parks", "roads", "rivers"]


def html(topic: str, year: int, extra: str = "") -> str:
    return (
        f"<html><body><div class='top'>City news</div><main><h1>All about {topic}</h1>"
        f"<p>This story is about {topic} and nothing else, told at length.</p>{extra}</main>"
        f"<div class='bottom'>Copyright {year} City news</div></body></html>"
    )


def observe(topic: str, html_text: str, at: datetime, lastmod: datetime) -> PageObservation:
    fp = fingerprint_tree(parse_html(html_text.encode()))
    return PageObservation(
        loc=f"https://example.com/{topic}",
        sitemap=SITEMAP,
        stratum="panel",
        fetched_at=at,
        lastmod=lastmod,
        lastmod_precision="second",
        status=200,
        fp_exact=fp.exact,
        fp_simhash=fp.simhash,
        fp_blocks=fp.blocks,
    )


def runs(edited: str | None = None) -> tuple[list[PageObservation], list[PageObservation]]:
    before = [observe(t, html(t, 2025), THEN, THEN) for t in TOPICS]
    after = []
    for t in TOPICS:
        extra = "<p>An update was added to this story.</p>" if t == edited else ""
        lastmod = NOW - timedelta(days=1) if t == edited else THEN
        after.append(observe(t, html(t, 2026, extra), NOW, lastmod))
    return after, before


def test_a_new_footer_year_on_every_page_is_no_change_and_is_noted():
    current, previous = runs(edited="parks")
    tally = tally_pages(current, previous)[SITEMAP]
    assert (tally.compared, tally.changed, tally.advanced, tally.both) == (6, 1, 1, 1)
    assert tally.template_only == 5
    (note,) = template_notes(current, previous)
    assert note.code == "template-change"
    assert note.detail.startswith("the site's template changed between runs: page body")


def test_compared_pages_carry_their_change():
    current, previous = runs(edited="parks")
    compared = {p.loc.rsplit("/", 1)[1]: p for p in compare_pages(current, previous)}
    assert compared["parks"].content_changed is True
    assert compared["parks"].change_summary == "+1 paragraph in the article body"
    assert compared["roads"].content_changed is False
    assert compared["roads"].change_summary == "template only: page body"
    assert compared["roads"].template_regions == "page body"
    assert tally_pages(list(compared.values()), previous)[SITEMAP].changed == 1


def test_pages_saved_before_blocks_existed_use_the_whole_text_hash():
    current, previous = runs(edited="parks")
    previous = [replace(p, fp_blocks=None) for p in previous]
    compared = compare_pages(current, previous)
    assert {p.change_method for p in compared} == {"exact"}
    tally = tally_pages(current, previous)[SITEMAP]
    assert tally.changed == 1  # the footer is outside <main>: the main-text hash never saw it
    assert template_notes(current, previous) == ()
