"""Groups of one split file lifted by the file's change evidence (issue 31, item 4).

A file split by URL shape into groups too small to earn trust alone may pool the groups'
across-runs change evidence for its verdict; dates stay per group (pooled dates wrongly
lifted an evidence-less tag group), and a group with contrary evidence of its own is
judged on it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from auditor.models import SitemapEntry
from tests.scorer.helpers import NOW, WEEK, dispersion, lastmod_of, page, run_score

FILE = "site.xml"
EARLIER = NOW - WEEK


def _entries(groups: tuple[str, ...], count: int = 60) -> list[SitemapEntry]:
    return [
        SitemapEntry(f"https://s.example/{g}/{i}", lastmod_of(i), "second", "x", FILE)
        for g in groups
        for i in range(count)
    ]


def _pair(group: str, i: int, *, changed: bool, advanced: bool, dated: bool = False):
    """Page ``i`` of ``group`` fetched a week ago and now (content and lastmod as told)."""
    loc = f"https://s.example/{group}/{i}"
    offset = 0.0 if dated else None
    before = replace(page(i, fp=f"v1-{i}", fetched=EARLIER, dm_offset=offset), loc=loc)
    lastmod = lastmod_of(i) + (timedelta(days=5) if advanced else timedelta())
    now = page(i, fp=f"v2-{i}" if changed else f"v1-{i}", lastmod=lastmod, dm_offset=offset)
    return replace(before, sitemap=FILE), replace(now, loc=loc, sitemap=FILE)


def _panel(group: str, count: int, changes: int, *, lying: int = 0):
    """``count`` panel pages of ``group``: ``changes`` changed with lastmod, ``lying``
    more whose lastmod advanced while they did not change."""
    pairs = [
        _pair(group, i, changed=i < changes, advanced=i < changes + lying) for i in range(count)
    ]
    return [b for b, _ in pairs], [a for _, a in pairs]


def _by_group(result):
    return {s.group.pattern: s for s in result.segments if s.group is not None}


def test_groups_of_one_file_pool_their_change_evidence():
    posts_before, posts_now = _panel("posts", 12, changes=1)
    docs_before, docs_now = _panel("docs", 12, changes=2)
    analysis = dispersion(_entries(("posts", "docs")))
    result = run_score(analysis, posts_now + docs_now, [(EARLIER, posts_before + docs_before)])

    groups = _by_group(result)
    assert {g.verdict for g in groups.values()} == {"trusted"}  # 24 compared, 3 changed
    assert result.verdict == "trusted"
    alone = run_score(analysis, posts_now, [(EARLIER, posts_before)])
    assert _by_group(alone)["/posts/*"].verdict == "inconclusive"  # 1 change: too few alone


def test_a_group_without_change_evidence_of_its_own_is_not_lifted():
    posts_before, posts_now = _panel("posts", 16, changes=4)
    tags_now = [replace(p, loc=p.loc.replace("posts", "tags")) for p in posts_now[:3]]
    tags_now = [replace(p, date_modified=None, date_modified_credible=None) for p in tags_now]
    analysis = dispersion(_entries(("posts", "tags")))
    result = run_score(analysis, posts_now + tags_now, [(EARLIER, posts_before)])

    groups = _by_group(result)
    assert groups["/posts/*"].verdict == "trusted"
    assert groups["/tags/*"].verdict == "inconclusive"  # fetched fresh: nothing compared


def test_dates_stay_per_group():
    """Credible dates earn trust for their own group only: a group whose pages were read
    but compared with nothing is not lifted by its sibling's agreeing dates."""
    dated = [replace(page(i), loc=f"https://s.example/posts/{i}", sitemap=FILE) for i in range(20)]
    bare = [
        replace(page(i, dm_offset=None), loc=f"https://s.example/tags/{i}", sitemap=FILE)
        for i in range(4)
    ]
    result = run_score(dispersion(_entries(("posts", "tags"))), dated + bare)

    groups = _by_group(result)
    assert groups["/posts/*"].verdict == "trusted"
    assert groups["/tags/*"].verdict == "inconclusive"


def test_a_group_with_contrary_evidence_of_its_own_is_judged_on_it():
    posts_before, posts_now = _panel("posts", 20, changes=5)
    tags_before, tags_now = _panel("tags", 12, changes=1, lying=4)
    analysis = dispersion(_entries(("posts", "tags")))
    result = run_score(analysis, posts_now + tags_now, [(EARLIER, posts_before + tags_before)])

    groups = _by_group(result)
    assert groups["/posts/*"].verdict == "trusted"
    assert groups["/tags/*"].verdict == "untrusted"
    assert "lastmod-without-change" in {r.code for r in groups["/tags/*"].reasons}
    assert result.verdict == "partial"


def test_a_leftover_group_neither_lifts_nor_sinks_its_file():
    """The leftover ``other`` group (the home page, under the material share) is judged on
    its own: its one changed page that lastmod missed does not hold the file's material
    groups back, and it is not lifted by them."""
    posts_before, posts_now = _panel("posts", 12, changes=1)
    docs_before, docs_now = _panel("docs", 12, changes=2)
    home_before, home_now = _pair("", 0, changed=True, advanced=False)
    home_before = replace(home_before, loc="https://s.example/")
    home_now = replace(home_now, loc="https://s.example/")
    entries = _entries(("posts", "docs"))
    entries.append(SitemapEntry("https://s.example/", lastmod_of(0), "second", "x", FILE))
    result = run_score(
        dispersion(entries),
        posts_now + docs_now + [home_now],
        [(EARLIER, posts_before + docs_before + [home_before])],
    )

    groups = _by_group(result)
    assert groups["/posts/*"].verdict == groups["/docs/*"].verdict == "trusted"
    assert groups["other"].verdict == "inconclusive"
    assert result.verdict == "trusted"  # the leftover does not decide the site
