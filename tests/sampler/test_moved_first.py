"""A moved lastmod is the first thing to check: the panel pages whose lastmod moved since
their last fetch are re-fetched first, and pages whose lastmod moved since the previous walk
but were never fetched come first among the fresh picks (so the next run can compare them)."""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd

from auditor.models import SitemapEntry
from auditor.sampler.choose import (
    MOVED_FRESH_SHARE,
    MOVED_PANEL_SHARE,
    PANEL_SHARE,
    SequentialPlan,
    choose_sample,
)
from auditor.sampler.moved import MOVED, lastmod_moved, with_moved
from auditor.sampler.order import lead
from auditor.walker.inventory import entries_to_dataframe

BASE = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)
PANEL = {"panel", "panel-moved"}


def _frame(sizes: dict[str, int]) -> pd.DataFrame:
    """Sub-sitemaps of pages dated an hour apart (page i of each: BASE + i hours)."""
    entries = [
        SitemapEntry(f"https://s.example/{name}/{i}", BASE + i * HOUR, "second", None, name)
        for name, size in sizes.items()
        for i in range(size)
    ]
    return entries_to_dataframe(entries)


def _marked(frame: pd.DataFrame, locs: list[str]) -> pd.DataFrame:
    return frame.assign(**{MOVED: frame["loc"].isin(locs).to_numpy()})


def _drive(plan: SequentialPlan) -> list:
    taken = []
    while (page := plan.next_page({})) is not None:
        plan.record(page, requested=True)
        taken.append(page)
    return taken


# -- which lastmods moved -------------------------------------------------------------
def _walk(rows: dict[str, datetime | None]) -> pd.DataFrame:
    return pd.DataFrame(
        {"loc": list(rows), "lastmod": pd.to_datetime(list(rows.values()), utc=True)}
    )


def test_a_lastmod_moved_when_it_is_later_or_appeared_never_when_new_or_earlier():
    before = _walk({"a": BASE, "b": BASE, "c": None, "d": BASE, "f": BASE})
    now = _walk({"a": BASE + HOUR, "b": BASE, "c": BASE, "d": BASE - HOUR, "e": BASE, "f": None})

    moved = lastmod_moved(now, before)
    assert dict(zip(now["loc"], moved.tolist(), strict=True)) == {
        "a": True,  # later
        "b": False,  # the same
        "c": True,  # appeared
        "d": False,  # went back: not an advance
        "e": False,  # a new URL: nothing to compare with
        "f": False,  # gone
    }
    assert moved.dtype == np.bool_ and not lastmod_moved(now, None).any()


def test_a_fetched_page_moved_since_its_fetch_whatever_the_walk_says():
    before = _walk({"a": BASE, "b": BASE, "c": BASE})
    now = _walk({"a": BASE + HOUR, "b": BASE, "c": BASE, "b2": BASE})
    fetched = [("a", BASE + HOUR), ("b", BASE - HOUR), ("b2", None)]

    moved = lastmod_moved(now, before, fetched)
    assert moved.tolist() == [False, True, False, True]
    assert lastmod_moved(now, None, fetched).tolist() == [False, True, False, True]


def test_every_row_of_a_url_listed_twice_is_judged():
    before = _walk({"a": BASE})
    now = _walk({"a": BASE}).pipe(lambda f: pd.concat([f, _walk({"a": BASE + HOUR})]))
    assert with_moved(now, before, ())[MOVED].tolist() == [False, True]


# -- fixed sampling -------------------------------------------------------------------
def _at_most_their_share(pages, kind: str, share: float, until: int) -> bool:
    """Every first n of ``pages`` (n up to ``until``) holds at most ``share`` of ``kind``."""
    return all(
        sum(p.stratum == kind for p in pages[:n]) <= math.ceil(n * share - 1e-9)
        for n in range(1, until + 1)
    )


def test_panel_pages_whose_lastmod_moved_are_refetched_first():
    frame = _frame({"a.xml": 500})
    earlier = [p.loc for p in choose_sample(frame, 30, seed=1)]
    moved = earlier[24:27]  # fetched last on the previous run: outside the old panel
    later = choose_sample(_marked(frame, moved), 30, seed=2, panel=earlier)
    panel = [p for p in later if p.stratum in PANEL]

    assert len(panel) == int(30 * PANEL_SHARE)
    assert [p.loc for p in panel if p.stratum == "panel-moved"] == moved
    assert [i for i, p in enumerate(panel) if p.stratum == "panel-moved"] == [0, 3, 6]
    assert [p.loc for p in panel if p.stratum == "panel"] == earlier[: len(panel) - 3]
    assert len({p.loc for p in later}) == 30


def test_moved_panel_pages_keep_to_their_share_while_unmoved_ones_last():
    frame = _frame({"a.xml": 500})
    earlier = [p.loc for p in choose_sample(frame, 30, seed=1)]
    later = choose_sample(_marked(frame, earlier[6:]), 30, seed=2, panel=earlier)
    panel = [p for p in later if p.stratum in PANEL]
    unmoved = [p.loc for p in panel if p.stratum == "panel"]

    assert len(panel) == int(30 * PANEL_SHARE)
    assert unmoved == earlier[:6]  # every unmoved one comes
    last_unmoved = max(i for i, p in enumerate(panel) if p.stratum == "panel")
    assert _at_most_their_share(panel, "panel-moved", MOVED_PANEL_SHARE, last_unmoved + 1)
    assert [p.loc for p in panel if p.stratum == "panel-moved"] == earlier[6:18]  # then the rest


def test_pages_moved_but_never_fetched_come_first_among_fresh_picks():
    frame = _frame({"a.xml": 500})
    earlier = [p.loc for p in choose_sample(frame, 30, seed=1)]
    old = [loc for loc in frame["loc"][:100] if loc not in earlier][:4]  # old lastmods
    later = choose_sample(_marked(frame, old), 30, seed=2, panel=earlier)
    fresh = [p for p in later if p.stratum not in PANEL]
    strata = Counter(p.stratum for p in fresh)

    assert sorted(p.loc for p in fresh if p.stratum == "moved") == sorted(old)
    assert [i for i, p in enumerate(fresh) if p.stratum == "moved"] == [0, 2, 4, 6]
    assert strata["newest"] and strata["older"]  # the stratified picks still come
    assert len(fresh) == 30 - int(30 * PANEL_SHARE) and len(later) == 30


def test_moved_fresh_picks_are_capped_so_stratified_ones_still_come():
    frame = _frame({"a.xml": 500})
    earlier = [p.loc for p in choose_sample(frame, 30, seed=1)]
    everything = list(frame["loc"])  # every lastmod moved (a panel of moved pages, too)
    later = choose_sample(_marked(frame, everything), 30, seed=2, panel=earlier)
    fresh = [p for p in later if p.stratum not in PANEL]
    strata = Counter(p.stratum for p in fresh)

    assert len(later) == 30 and strata["moved"] == math.ceil(len(fresh) * MOVED_FRESH_SHARE)
    assert strata["newest"] + strata["older"] == len(fresh) - strata["moved"]
    assert _at_most_their_share(fresh, "moved", MOVED_FRESH_SHARE, len(fresh))
    assert [p.loc for p in later if p.stratum in PANEL] == earlier[: int(30 * PANEL_SHARE)]


def test_without_movement_the_sample_is_the_same():
    frame = _frame({"a.xml": 400, "b.xml": 60})
    earlier = [p.loc for p in choose_sample(frame, 30, seed=1)]
    still = _marked(frame, [])

    for seed in (2, 3):
        plain = choose_sample(frame, 30, seed=seed, panel=earlier)
        assert choose_sample(still, 30, seed=seed, panel=earlier) == plain
        assert _drive(SequentialPlan(still, 30, seed=seed, panel=earlier)) == _drive(
            SequentialPlan(frame, 30, seed=seed, panel=earlier)
        )


# -- sequential sampling --------------------------------------------------------------
def test_each_segment_queue_starts_with_its_moved_panel_pages():
    frame = _frame({"a.xml": 300, "b.xml": 300})
    earlier = [p.loc for p in choose_sample(frame, 40, seed=1)]
    by_segment = {
        name: [loc for loc in earlier if f"/{name}/" in loc] for name in ("a.xml", "b.xml")
    }
    moved_panel = {name: locs[-2:] for name, locs in by_segment.items()}  # fetched last
    never = [loc for loc in frame["loc"] if loc not in earlier and loc.endswith(("/3", "/7"))]
    marked = _marked(frame, [*moved_panel["a.xml"], *moved_panel["b.xml"], *never])
    taken = _drive(SequentialPlan(marked, 40, seed=2, panel=earlier))

    assert len(taken) == 40 and len(never) == 4
    for name in ("a.xml", "b.xml"):
        mine = [p for p in taken if p.sitemap == name]
        panel = [p for p in mine if p.stratum in PANEL]
        assert [p.loc for p in panel if p.stratum == "panel-moved"] == moved_panel[name]
        assert [i for i, p in enumerate(panel) if p.stratum == "panel-moved"] == [0, 3]
        unmoved = [loc for loc in by_segment[name] if loc not in moved_panel[name]]
        assert [p.loc for p in panel if p.stratum == "panel"] == unmoved[: len(panel) - 2]
        fresh = [p for p in mine if p.stratum not in PANEL]
        mine_never = [loc for loc in never if f"/{name}/" in loc]
        assert sorted(p.loc for p in fresh if p.stratum == "moved") == sorted(mine_never)
        assert [i for i, p in enumerate(fresh) if p.stratum == "moved"] == [0, 2][: len(mine_never)]
    assert {p.loc for p in taken if p.stratum == "moved"} == set(never)


def test_lead_pulls_a_kind_forward_to_its_share_never_later_than_its_turn():
    def kinds(order: str, share: float) -> str:
        items = [(i, "m" if c == "m" else "r") for i, c in enumerate(order)]
        return "".join(kind for _, kind in lead(items, "m", share))

    assert kinds("rrrrrrrmmmmm", 1 / 3) == "mrrmrrmrrmrm"  # the rest out: the moved follow
    assert kinds("rrrrrrrmmmmm", 0.5) == "mrmrmrmrmrrr"
    assert kinds("mmmmmrrrrrrr", 1 / 3) == "mmmmmrrrrrrr"  # already first: as they came
    assert kinds("rmrrrrrrrrm", 1 / 3) == "mrrmrrrrrrr"  # each pulled no later than its turn
    items = [(i, "r") for i in range(4)]
    assert lead(items, "m", 0.5) == items and lead([], "m", 0.5) == []


def test_panel_pages_that_moved_keep_their_turn_when_they_come_early_anyway():
    frame = _frame({"a.xml": 500})
    earlier = [p.loc for p in choose_sample(frame, 30, seed=1)]
    later = choose_sample(_marked(frame, earlier[:10]), 30, seed=2, panel=earlier)
    panel = [p for p in later if p.stratum in PANEL]

    assert [p.loc for p in panel] == earlier[: int(30 * PANEL_SHARE)]  # most moved: as before
    assert [p.stratum for p in panel[:11]] == ["panel-moved"] * 10 + ["panel"]
