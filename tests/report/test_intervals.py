"""One interval, said once: a report's "What to do" gives the interval the plan's own
figures give (its segments table the same, beside re-check), and the site's re-verify
days are the table's."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from auditor.audit import AuditOptions, audit_site
from auditor.demo.clock import SimulatedClock
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
from auditor.report import load_report_data, write_report
from auditor.sampler import SampleOptions

WEEK = timedelta(days=7)
_REFETCH = re.compile(
    r"re-fetch (?:their pages|the others) about every (?:day|(\d+) days) on average "
    r"\(([\d,.]+) fetch(?:es)? a day for ([\d,]+) pages, as auditor plan schedules them\)"
)


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """A site whose products lastmod is the generation time and whose blog's is right,
    audited twice a week apart on a simulated clock: (report HTML, latest result)."""
    folder = tmp_path_factory.mktemp("intervals")
    start = datetime.now(UTC) - 2 * WEEK
    clock = SimulatedClock(start)
    sections = {"products": BEHAVIOURS["generation-time"], "blog": BEHAVIOURS["accurate-jsonld"]}
    site = SimulatedSite("mixed", sections, pages_per_section=60, seed=5, clock=start)
    options = AuditOptions(sample=SampleOptions(sample=40, delay=0.0), seed=5, clock=clock.now)
    with SiteServer(site, clock.now) as server, History.open(folder / "h.sqlite3") as history:
        audit_site(server.origin, history, options)
        clock.advance(WEEK)
        site.tick(WEEK)
        audit_site(server.origin, history, options)
        path = write_report(history, server.origin, folder / "out")
        latest = load_report_data(history, server.origin).latest
    return path.read_text(encoding="utf-8"), latest


def _section(html: str, name: str) -> str:
    found = re.search(rf'<section id="{name}">(.*?)</section>', html, re.S)
    assert found, name
    return found.group(1)


def _table_rows(html: str) -> list[dict[str, str]]:
    """The segments table as dicts, heading to cell text."""
    table = _section(html, "segments")
    heads = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<th[^>]*>(.*?)</th>", table)]
    rows = []
    for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], re.S):
        cells = [
            re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        ]
        rows.append(dict(zip(heads, cells, strict=True)))
    return rows


def test_the_advice_gives_the_interval_of_the_plans_own_figures(reported):
    html, latest = reported
    todo = re.sub(r"\s+", " ", _section(html, "todo"))
    found = _REFETCH.search(todo)
    assert found, todo
    days, fetches, pages = found.groups()
    planned = {(s["sitemap"], s["group"]): s for s in latest["savings"]["segments"]}
    others = [s for s in latest["segments"] if s["urls"] and s["verdict"] != "trusted"]
    assert others
    mine = [planned[(s["sitemap"], (s.get("group") or {}).get("pattern"))] for s in others]
    assert int(pages.replace(",", "")) == sum(s["urls"] for s in mine)
    per_day = sum(s["fetches_per_day"] for s in mine)
    assert float(fetches.replace(",", "")) == pytest.approx(per_day, abs=0.05)
    interval = sum(s["urls"] for s in mine) / per_day
    assert (int(days) if days else 1) == max(1, round(interval))


def test_the_segments_table_shows_the_plans_interval_beside_re_check(reported):
    html, latest = reported
    rows = _table_rows(html)
    planned = latest["savings"]["segments"]
    assert len(rows) == len(latest["segments"]) and planned
    intervals = [r["plan: a page every (days)"] for r in rows]
    for row, segment in zip(rows, latest["segments"], strict=True):
        key = (segment["sitemap"], (segment.get("group") or {}).get("pattern"))
        figures = next((p for p in planned if (p["sitemap"], p["group"]) == key), None)
        shown = row["plan: a page every (days)"]
        if figures is None or figures["interval_days"] is None:
            assert shown == "-", (row, figures)
        else:
            assert float(shown) == pytest.approx(figures["interval_days"], abs=0.05), row
    assert any(i != "-" for i in intervals)


def test_re_verify_days_are_the_tables(reported):
    html, latest = reported
    rows = _table_rows(html)
    todo = re.sub(r"\s+", " ", _section(html, "todo"))
    found = re.search(r"Re-verify this site in (\d+) days?", todo)
    assert found, todo
    shown = [int(re.match(r"\d+", r["re-check (days)"]).group()) for r in rows
             if re.match(r"\d+", r["re-check (days)"])]  # fmt: skip
    assert shown, rows
    assert int(found.group(1)) == min(shown) == round(latest["recheck_days"])


@pytest.mark.parametrize(
    ("fetches", "said"),
    [
        (120.0, "120 fetches a day"),
        (2.5, "2.5 fetches a day"),
        (1.0, "1 fetch a day"),
        (1200.0, "1,200 fetches a day"),
    ],
)
def test_the_advice_says_whole_fetches_without_a_decimal(fetches, said):
    from auditor.report.site import _refetch

    segment = {"sitemap": "https://s.example/sitemap.xml", "group": None}
    figures = {**segment, "urls": 120, "fetches_per_day": fetches, "interval_days": 1.0}
    advice = _refetch({"savings": {"segments": [figures]}}, [segment])
    assert f"({said} for 120 pages," in advice
