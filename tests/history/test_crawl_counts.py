"""The crawl log counted per segment (auditor.history.crawlcounts), on SQLite and
PostgreSQL: a file split into groups is read URL by URL and each group gets its own URLs'
counts; a file read whole adds up the same; whole counts of a split file are no group's."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest

from auditor.crawl.resolve import resolve, resolve_walk
from auditor.dispersion.groups import find_groups
from auditor.dispersion.segments import Segmenter, segment_key
from auditor.history import History
from auditor.history.crawl import CrawlLogRow
from auditor.history.crawlcounts import FIGURES, CrawlCounts, CrawlLogCounts
from tests.history.helpers import save

SITE = "https://example.com"
BLOG, NEWS = f"{SITE}/blog.xml", f"{SITE}/news.xml"
POSTS = [f"{SITE}/posts/p-{i}.html" for i in range(30)]
TAGS = [f"{SITE}/tags/t-{j}.html" for j in range(12)]
STORIES = [f"{SITE}/news/s-{k}.html" for k in range(5)]
DAY1 = datetime(2026, 11, 30, 8, tzinfo=UTC)
DAY4 = DAY1 + timedelta(days=3)


def _segmenter() -> Segmenter:
    """The blog's groups as an audit learns them: posts with their own dates, tags all
    stamped with one build moment."""
    locs = POSTS + TAGS
    build = int(datetime(2026, 11, 1, tzinfo=UTC).timestamp())
    seconds = [build - 86_400 * (3 + 7 * i) for i in range(len(POSTS))] + [build] * len(TAGS)
    grouping = find_groups(locs, np.array(seconds, dtype=np.int64), np.ones(len(locs), bool))
    assert {g.pattern for g in grouping.groups} == {"/posts/*", "/tags/*"}
    return Segmenter({BLOG: grouping})


def _row(loc: str, sitemap: str, at: datetime, changed=None, advanced=None, agrees=None):  # type: ignore[no-untyped-def]
    compared = changed is not None
    return CrawlLogRow(loc, sitemap, at, 200, "h", None, changed, advanced,
                       3.0 if compared else None, agrees)  # fmt: skip


def _log() -> list[CrawlLogRow]:
    """Two fetches of every URL: a third of the posts changed and their lastmod moved; the
    tags re-stamped unchanged; the stories changed unseen. Each post's dateModified was
    checked twice, wrong on the first fetch and right on the newest."""
    rows = [_row(loc, BLOG, DAY1, agrees=False) for loc in POSTS]
    rows += [_row(loc, BLOG, DAY1) for loc in TAGS] + [_row(loc, NEWS, DAY1) for loc in STORIES]
    rows += [_row(loc, BLOG, DAY4, i % 3 == 0, i % 3 == 0, True) for i, loc in enumerate(POSTS)]
    rows += [_row(loc, BLOG, DAY4, False, True) for loc in TAGS]
    return rows + [_row(loc, NEWS, DAY4, True, False) for loc in STORIES]


@pytest.fixture
def history(db_url):  # type: ignore[no-untyped-def]
    with History.open(db_url) as opened:
        save(opened, SITE)
        site_id = opened.site_id(SITE)
        assert site_id is not None
        opened.save_fetches(site_id, [], _log(), DAY4 + timedelta(hours=1))
        yield opened


def _figures(counts: CrawlCounts) -> tuple[float, ...]:
    return tuple(getattr(counts, name) for name in FIGURES)


def test_a_split_file_read_url_by_url_gives_each_group_its_own_counts(history):
    read = history.crawl_log_counts(SITE, DAY1, by_url=[BLOG])
    keyed = read.attributed(_segmenter()).keyed

    posts, tags = segment_key(BLOG, "/posts/*"), segment_key(BLOG, "/tags/*")
    assert set(keyed) == {posts, tags, NEWS}
    # compared, changed, advanced, both, days, each post's newest date check once, pending
    assert _figures(keyed[posts]) == (30, 10, 10, 10, 90.0, 30, 30, 0)
    assert _figures(keyed[tags]) == (12, 0, 12, 0, 36.0, 0, 0, 0)
    assert _figures(keyed[NEWS]) == (5, 5, 0, 0, 15.0, 0, 0, 0)  # read whole, not split
    again = pickle.loads(pickle.dumps(read)).attributed(_segmenter())  # a fleet's worker's
    assert {k: _figures(c) for k, c in again.keyed.items()} == {
        k: _figures(c) for k, c in keyed.items()
    }


def test_a_file_read_url_by_url_adds_up_to_its_whole_count_when_not_split(history):
    whole = history.crawl_counts(SITE, DAY1)
    by_url = history.crawl_log_counts(SITE, DAY1, by_url=[BLOG, NEWS])
    assert by_url.keyed == {} and len(by_url.locs) == len(POSTS + TAGS + STORIES)
    summed = by_url.attributed(Segmenter()).keyed
    assert {k: _figures(c) for k, c in summed.items()} == {k: _figures(c) for k, c in whole.items()}
    assert _figures(whole[BLOG]) == (42, 10, 22, 10, 126.0, 30, 30, 0)


def test_whole_counts_of_a_file_split_now_are_no_groups_and_attributing_twice_is_once(history):
    segmenter = _segmenter()
    once = history.crawl_log_counts(SITE, DAY1).attributed(segmenter)  # read before the split
    assert set(once.keyed) == {NEWS}
    split = history.crawl_log_counts(SITE, DAY1, by_url=[BLOG]).attributed(segmenter)
    twice = split.attributed(segmenter)
    assert {k: _figures(c) for k, c in twice.keyed.items()} == {
        k: _figures(c) for k, c in split.keyed.items()
    }


def test_the_window_bounds_what_is_read_by_url(history):
    before = history.crawl_log_counts(SITE, DAY1 - timedelta(days=1), DAY4, by_url=[BLOG])
    keyed = before.attributed(_segmenter()).keyed
    # the first fetches: nothing compared yet, the posts' dateModified checked (wrong)
    assert set(keyed) == {segment_key(BLOG, "/posts/*")}
    assert _figures(keyed[segment_key(BLOG, "/posts/*")]) == (0, 0, 0, 0, 0.0, 30, 0, 0)
    assert not history.crawl_log_counts(SITE, DAY4 + timedelta(days=1), by_url=[BLOG])
    assert not history.crawl_log_counts("https://unknown.example", DAY1, by_url=[BLOG])


def _walk(advanced: set[str]) -> pd.DataFrame:
    """A walk of the blog made after DAY4: the ``advanced`` posts' lastmod moved to DAY2,
    the others' stayed long before DAY1."""
    day2, old = DAY1 + timedelta(days=1), DAY1 - timedelta(days=30)
    return pd.DataFrame(
        {
            "loc": POSTS + TAGS,
            "lastmod": pd.to_datetime([day2 if u in advanced else old for u in POSTS + TAGS]),
            "lastmod_precision": pd.Categorical(["second"] * len(POSTS + TAGS)),
            "sitemap": pd.Categorical([BLOG] * len(POSTS + TAGS)),
        }
    )


def test_fetches_pending_a_walk_are_counted_so_and_resolved_as_the_worker_counts_them(db_url):
    """A fetch waiting for a walk after it is counted as pending, in its group; the counts
    an audit's worker makes of a walk's resolution are those read once it is kept."""
    with History.open(db_url) as history:
        save(history, SITE)
        site_id = history.site_id(SITE)
        assert site_id is not None
        rows = [
            CrawlLogRow(loc, BLOG, DAY4, 200, "h", None, i % 3 == 0, None, 3.0, None,
                        pending=True, change_method="hash")
            for i, loc in enumerate(POSTS)
        ]  # fmt: skip
        history.save_fetches(site_id, [], rows, DAY4 + timedelta(hours=1))
        segmenter, posts = _segmenter(), segment_key(BLOG, "/posts/*")
        read = history.crawl_log_counts(SITE, DAY1, by_url=[BLOG]).attributed(segmenter)
        assert _figures(read.keyed[posts]) == (0, 0, 0, 0, 0.0, 0, 0, 30)
        assert not history.crawl_log_counts(SITE, DAY1, by_url=[BLOG], pending=False)

        pending = history.pending_fetches(site_id)
        assert len(pending) == 30 and len(history.pending_fetches(site_id, DAY4)) == 30
        assert not len(history.pending_fetches(site_id, DAY4 + timedelta(seconds=1)))
        walk, walked = _walk(set(POSTS[::2])), DAY4 + timedelta(hours=2)
        codes = resolve(pending, walk, walked)
        worker = CrawlLogCounts().plus(pending.counted(codes, DAY1, by_url=[BLOG]))
        assert resolve_walk(history, SITE, walked, walk) == 30
        kept = history.crawl_log_counts(SITE, DAY1, by_url=[BLOG]).attributed(segmenter)
        assert not len(history.pending_fetches(site_id))

    mine = worker.attributed(segmenter).keyed[posts]
    assert _figures(kept.keyed[posts]) == _figures(mine)
    # a third changed, half advanced: both where i is a multiple of 6
    assert _figures(mine) == (30, 10, 15, 5, 90.0, 0, 0, 0)


def test_a_pending_fetch_whose_row_moved_since_it_was_read_stays_pending(db_url):
    """A judgement is written back by the row's key only while that key still finds the
    row read (same URL and time): a key pointing elsewhere changes nothing."""
    with History.open(db_url) as history:
        save(history, SITE)
        site_id = history.site_id(SITE)
        assert site_id is not None
        rows = [
            CrawlLogRow(loc, BLOG, DAY4, 200, "h", None, True, None, 3.0, None,
                        pending=True, change_method="hash")
            for loc in POSTS[:4]
        ]  # fmt: skip
        history.save_fetches(site_id, [], rows, DAY4 + timedelta(hours=1))
        pending = history.pending_fetches(site_id)
        moved = np.roll(pending.keys, 1)  # each key now another row's
        decided = zip([True] * 4, moved, pending.locs, pending.fetched, strict=True)
        history.save_resolution(site_id, decided)
        assert len(history.pending_fetches(site_id)) == 4
        right = zip([True] * 4, pending.keys, pending.locs, pending.fetched, strict=True)
        history.save_resolution(site_id, right)
        assert not len(history.pending_fetches(site_id))
