"""The own-frame excuse survives a sitewide template change (issue 31, item 2).

A documentation site changed its footer's copyright year on every page between two runs,
while three stub pages' lastmod moved with an edit of their own frame only (a breadcrumb
label). Those three are neither for nor against lastmod; before, the sitewide template
change switched the excuse off and they condemned the group as lastmod-without-change.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from auditor.scorer.tally import tally_pages
from tests.scorer.helpers import SPREAD, earlier, lastmod_of, page


def _pages(own_frame: bool | None):
    now = []
    for i in range(12):
        moved = i < 3
        observed = page(i, dm_offset=None, lastmod=lastmod_of(i) + timedelta(days=moved * 4))
        now.append(
            replace(
                observed,
                content_changed=False,
                change_share=0.0,
                template_changed=True,  # the footer year, on every page
                template_regions="footer" + (", navigation" if moved else ""),
                own_frame_changed=own_frame
                if moved
                else (False if own_frame is not None else None),
                change_method="blocks",
            )
        )
    before = earlier([page(i, dm_offset=None) for i in range(12)])
    return now, before


def test_pages_whose_own_frame_moved_are_ambiguous_despite_a_sitewide_template_change():
    now, before = _pages(own_frame=True)
    tally = tally_pages(now, before)[SPREAD]
    assert tally.ambiguous == 3
    assert tally.lastmod_without_change == 0
    assert tally.compared == 9


def test_pages_whose_frame_moved_only_with_the_template_count_against_lastmod():
    now, before = _pages(own_frame=False)
    tally = tally_pages(now, before)[SPREAD]
    assert tally.ambiguous == 0
    assert tally.lastmod_without_change == 3


def test_older_rows_without_the_own_frame_are_judged_as_before():
    now, before = _pages(own_frame=None)
    tally = tally_pages(now, before)[SPREAD]
    assert tally.lastmod_without_change == 3  # the template changed on most pages: no excuse
