"""A page's own frame, told apart from the site's template (issue 31, item 2).

A sitewide footer-year change moves the template of every page; a stub page whose only
edit is its breadcrumb label moved its *own* frame. The scorer excuses a lastmod that
moved with a page's own frame (neither for nor against it), so the comparison must tell
the two apart even when both happen between the same two runs.
"""

from __future__ import annotations

from auditor.evidence.fingerprint import fingerprint_tree
from auditor.evidence.page import parse_html
from auditor.evidence.runs import Fetch, compare_runs

TOPICS = ["install", "configure", "upgrade", "backup", "restore", "monitor", "tune", "debug"]


def _page(topic: str, crumb: str, year: int, aside: str = "") -> str:
    return (
        f"<html><body><header>Example Docs</header>{aside}<main>"
        f"<nav class='breadcrumb'><a href='/'>Docs</a> / <a href='/{topic}'>{crumb}</a></nav>"
        f"<h1>How to {topic}</h1><p>This page explains how to {topic} the server in a few"
        f" steps, with the commands to run and what each of them prints.</p></main>"
        f"<footer>© {year} Example Project. All rights reserved.</footer></body></html>"
    )


def _fetches(
    year: int, crumbs: dict[str, str] | None = None, asides: dict[str, str] | None = None
) -> list[Fetch]:
    crumbs, asides = crumbs or {}, asides or {}
    out = []
    for topic in TOPICS:
        html = _page(topic, crumbs.get(topic, topic.title()), year, asides.get(topic, ""))
        fp = fingerprint_tree(parse_html(html.encode()))
        out.append(Fetch(f"/{topic}", "docs", fp.exact, fp.simhash, fp.blocks))
    return out


def test_a_breadcrumb_edit_is_the_page_s_own_frame_beside_a_sitewide_footer_year():
    result = compare_runs(_fetches(2025, {"tune": "Tuning"}), _fetches(2024))

    assert not any(c.changed for c in result.pages.values())
    assert all(c.template_changed for c in result.pages.values())  # the footer, everywhere
    assert result.template is not None and "footer" in result.template.regions
    own = {key for key, c in result.pages.items() if c.own_frame_changed}
    assert own == {"/tune"}


def test_without_a_template_change_the_own_frame_is_the_frame():
    result = compare_runs(_fetches(2024, {"tune": "Tuning"}), _fetches(2024))
    assert {key for key, c in result.pages.items() if c.own_frame_changed} == {"/tune"}
    assert {key for key, c in result.pages.items() if c.template_changed} == {"/tune"}


def test_whole_text_comparisons_do_not_know_the_own_frame():
    old = [Fetch(f.key, f.group, f.exact, f.simhash, None) for f in _fetches(2024)]
    result = compare_runs(_fetches(2025), old)
    assert {c.own_frame_changed for c in result.pages.values()} == {None}


def test_a_difference_several_pages_share_is_no_page_s_own_frame():
    """A tag cloud reordered on the three pages that carry it (too few of the panel to be
    the site's template, or shared by most re-fetched pages) moved with a template of
    their own kind: not any one page's own frame."""
    tagged = TOPICS[:3]
    before = {t: "<aside class='tags'>alpha beta gamma delta</aside>" for t in tagged}
    after = {t: "<aside class='tags'>gamma beta delta alpha</aside>" for t in tagged}
    result = compare_runs(_fetches(2025, asides=after), _fetches(2024, asides=before))

    assert all(result.pages[f"/{t}"].template_changed for t in tagged)
    assert not any(c.own_frame_changed for c in result.pages.values())


def test_a_slot_whose_text_differs_on_most_pages_is_no_page_s_own_frame():
    """A "trending now" box drawn at random on every request differs on every page, each
    time with other words: the slot is restless, and its differences are nobody's own;
    a breadcrumb edited on one page still is."""
    words = ["kettle", "lamp", "river", "stone", "garden", "window", "harbour", "meadow"]
    before = {
        t: f"<aside class='trending'>Trending now: {words[i]}</aside>" for i, t in enumerate(TOPICS)
    }
    after = {
        t: f"<aside class='trending'>Trending now: {words[(i + 3) % 8]}</aside>"
        for i, t in enumerate(TOPICS)
    }
    new, old = _fetches(2024, {"tune": "Tuning"}, asides=after), _fetches(2024, asides=before)
    steady = {f"/{t}" for t in TOPICS} - {"/tune"}  # by their lastmod, unchanged
    result = compare_runs(new, old, steady)

    assert all(c.template_changed for c in result.pages.values())
    assert {key for key, c in result.pages.items() if c.own_frame_changed} == {"/tune"}
    unknown = compare_runs(new, old)  # without lastmod, a random word is a page's own
    assert len([c for c in unknown.pages.values() if c.own_frame_changed]) > 1
