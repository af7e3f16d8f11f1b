"""The daily replay bench's pure parts (tests/benchmarks/dailybench): which snapshot a
server holds at an instant, and which days a page's text changed, failed loads skipped.
No real data needed: the bench itself reads it from a folder outside the repository."""

from __future__ import annotations

import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest

from auditor.demo.clock import SimulatedClock
from tests.benchmarks.dailybench.site import ReplayServer, ReplaySite
from tests.benchmarks.dailybench.snapshots import (
    change_days,
    load_window,
    served_days,
    snapshot_at,
)

INSTANTS = [31_440, 118_000, 204_300]  # three snapshots, the first at 08:44 of day 0


@pytest.mark.parametrize(
    ("s", "expected"),
    [
        (-3_600, 0),  # before the first snapshot: the first one's content
        (31_439, 0),
        (31_440, 0),
        (117_999, 0),
        (118_000, 1),  # the switch happens at the snapshot instant itself
        (204_299, 1),
        (204_300, 2),
        (10**9, 2),
    ],
)
def test_the_snapshot_in_force_switches_at_its_instant(s: int, expected: int) -> None:
    assert snapshot_at(INSTANTS, s) == expected


def test_a_failed_load_is_no_observation_and_the_next_good_text_is_compared_to_the_last() -> None:
    texts = ["a", "a", None, "b", "b", None, "b", "c"]
    assert change_days(texts) == [3, 7]
    assert served_days(texts) == [0, 1, 1, 3, 4, 4, 6, 7]


def test_a_page_whose_first_days_failed_serves_its_first_good_copy() -> None:
    texts = [None, None, "a", "b"]
    assert change_days(texts) == [3]
    assert served_days(texts) == [2, 2, 2, 3]


def test_an_empty_text_after_a_real_one_is_a_change() -> None:
    assert change_days(["a", "", ""]) == [1]


def _day(base: Path, day: str, committed: str, pages: dict[str, tuple[str, str]]) -> None:
    folder = base / day / "pages"
    folder.mkdir(parents=True)
    rows = ["loc\turl\tfile\tpage_updated\tguide_id\tpage_id\tguide_updated"]
    for pid, (body, updated) in pages.items():
        name = f"Page-{pid}--g-1-p-{pid}.html"
        (folder / name).write_text(body)
        loc = f"https://example.edu/c.php?g=1&p={pid}"
        rows.append(f"{loc}\t{loc}\t{name}\t{updated}\t1\t{pid}\t2024-01-01 00:00:00")
    (base / day / "urls.tsv").write_text("\n".join(rows) + "\n")
    with open(base / "commits.tsv", "a") as fh:
        fh.write(f"{day}\tc{day}\t{committed}\t{len(pages)}\n")


def test_a_window_loads_pages_present_every_day_with_their_changes(tmp_path: Path) -> None:
    (tmp_path / "commits.tsv").write_text("day\tcommit\tcommitted\tpage_files\n")
    html = "<div><p>{}</p></div>"
    _day(
        tmp_path,
        "2024-10-03",
        "2024-10-03T08:44:05+00:00",
        {
            "1": (html.format("one"), "2024-10-01 10:00:00"),
            "2": (html.format("two"), "2020-01-01 00:00:00"),
        },
    )
    _day(
        tmp_path,
        "2024-10-04",
        "2024-10-04T08:40:00+00:00",
        {
            "1": ("Timeout 30000ms exceeded.", "2024-10-01 10:00:00"),
            "2": (html.format("two"), "2020-01-01 00:00:00"),
        },
    )
    _day(
        tmp_path,
        "2024-10-05",
        "2024-10-04T08:40:00+00:00",  # no commit that day: the previous one carried
        {
            "1": (html.format("one, edited"), "2024-10-04 20:00:00"),
            "2": (html.format("two"), "2020-01-01 00:00:00"),
            "3": (html.format("three"), "2024-10-05 01:00:00"),  # not there every day
        },
    )
    window = load_window(tmp_path, days=3, measure="text")
    assert [p.page_id for p in window.pages] == ["1", "2"]
    one, two = window.pages
    assert window.instants[0] == 8 * 3600 + 44 * 60 + 5
    assert window.instants[1] == 86_400 + 8 * 3600 + 40 * 60
    assert window.instants[2] == 2 * 86_400 + 8 * 3600 + 40 * 60  # 08:40 of a carried day
    assert one.events.tolist() == [window.instants[2]]
    assert two.events.tolist() == []
    assert one.path == "/c.php?g=1&p=1"
    assert one.version_at(window.instants[2] - 1) == 0 and one.version_at(window.instants[2]) == 1
    assert "one, edited" not in one.body_at(window.instants[1])  # failed load: last good copy
    assert "one, edited" in one.body_at(window.instants[2])
    assert one.lastmod_at(window.instants[2] - 1) < one.lastmod_at(window.instants[2])


def test_the_replay_server_switches_copies_and_lastmods_at_the_snapshot_instants(
    tmp_path: Path,
) -> None:
    (tmp_path / "commits.tsv").write_text("day\tcommit\tcommitted\tpage_files\n")
    _day(
        tmp_path,
        "2024-10-03",
        "2024-10-03T08:44:05+00:00",
        {"7": ("<p>old</p>", "2024-09-01 00:00:00")},
    )
    _day(
        tmp_path,
        "2024-10-04",
        "2024-10-04T08:44:05+00:00",
        {"7": ("<p>new</p>", "2024-10-03 21:00:00")},
    )
    window = load_window(tmp_path, measure="text")
    site = ReplaySite(window)
    clock = SimulatedClock(site.at(window.instants[1] - 60))
    with ReplayServer(site, clock.now) as server:
        page = server.url("/c.php?g=1&p=7")
        before = urllib.request.urlopen(page).read().decode()
        sitemap_before = urllib.request.urlopen(server.url("/sitemap.xml")).read().decode()
        clock.advance(timedelta(seconds=60))
        after = urllib.request.urlopen(page).read().decode()
        sitemap_after = urllib.request.urlopen(server.url("/sitemap.xml")).read().decode()
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(server.url("/c.php?g=1&p=8"))
    assert "old" in before and "new" in after and "<main" in after
    assert [s.version for s in server.served] == [0, 1]
    assert "2024-09-01T00:00:00+00:00" in sitemap_before
    assert "2024-10-03T21:00:00+00:00" in sitemap_after
    assert "c.php?g=1&amp;p=7" in sitemap_after
