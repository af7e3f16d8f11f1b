"""A list page's newest child, looked up in the inventory by the links it holds."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd

from auditor.sampler.children import ChildDates

SITE = "https://s.example"


def _entries(rows: list[tuple[str, str, str | None]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["loc", "segment", "lastmod"])
    frame["loc"] = SITE + frame["loc"]
    frame["sitemap"] = SITE + "/sitemap.xml"
    frame["lastmod"] = pd.to_datetime(frame["lastmod"], utc=True)
    return frame


POSTS = [("/p/1", "posts", "2026-03-01"), ("/p/2", "posts", "2026-05-01"),
         ("/p/3", "posts", "2026-04-01"), ("/p/4", "posts", None)]  # fmt: skip


def _newest(frame: pd.DataFrame, links: list[str], segment: str = "tags"):
    return ChildDates(frame).newest(SITE + "/tags/t", segment, [SITE + p for p in links])


def test_a_list_s_newest_dated_child_in_another_segment():
    frame = _entries([*POSTS, ("/tags/t", "tags", "2026-05-01"), ("/tags/u", "tags", "2026-09-09")])
    newest = _newest(frame, ["/p/1", "/p/2", "/p/3", "/p/4", "/tags/u", "/nowhere"])
    assert newest == datetime(2026, 5, 1, tzinfo=UTC)  # /tags/u is a list like it: left out


def test_children_that_do_not_date_a_list():
    frame = _entries([*POSTS, ("/p/5", "posts", "2026-05-01"), ("/p/6", "posts", "2026-05-01")])
    assert _newest(frame, ["/p/1"]) is None  # one child is no list
    assert _newest(frame, ["/p/2", "/p/5"]) is None  # one moment for all: stamped
    assert _newest(frame, ["/p/1", "/p/2", "/p/5"]) is None  # the newest held by most
    assert _newest(frame, ["/p/1", "/p/2"], segment="posts") is None  # its own segment
    assert _newest(frame, ["/p/4", "/nowhere"]) is None  # undated or not listed


def test_each_page_is_looked_up_once():
    lookup = ChildDates(_entries(POSTS))
    links = [SITE + "/p/1", SITE + "/p/2"]
    first = lookup.newest(SITE + "/tags/t", "tags", links)
    assert lookup.newest(SITE + "/tags/t", "tags", []) == first
