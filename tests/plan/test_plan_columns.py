"""The plan at fleet scale reads its columns without a Python object a row: each fast
path gives what the plain one gave, to the last bit and character (a plan of 100,000
sites is the same plan, only sooner)."""

from __future__ import annotations

import csv
import io
import json
import math
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest

from auditor.audit import audit_site
from auditor.crawl.record import record_fetches
from auditor.crawl.records import FetchRecord
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History, decode_state, encode_state
from auditor.history.state import state_columns
from auditor.planner import plan
from auditor.planner.columns import Listed, instants, segment_sums, texts
from auditor.planner.lines import csv_rows, json_lines
from auditor.planner.make import PlannedFetch, plan_site, weighted_mean
from auditor.planner.schedule import schedule_host
from auditor.walker.inventory import entry_rows
from tests.crawl.sites import OPTIONS
from tests.history.helpers import large_inventory, save

COLUMNS = ("url", "site", "sitemap", "due_at", "reason", "priority", "p_changed", "lastmod",
           "verdict")  # fmt: skip


def test_segment_sums_are_the_masked_sums_to_the_bit():
    rng = np.random.default_rng(7)
    for n, segments in ((0, 3), (1, 1), (37, 5), (1_000, 20), (5_000, 300)):
        segment = rng.integers(0, segments, size=n).astype(np.intp)
        columns = [rng.random(n) * 10.0 ** rng.integers(-3, 4), rng.integers(0, 9, n) * 1.0]
        sums = segment_sums(segment, segments, *columns)
        for column, summed in zip(columns, sums, strict=True):
            expected = [column[segment == code].sum() for code in range(segments)]
            assert summed.tolist() == expected  # equal floats, not close ones


def test_weighted_mean_is_numpys_average_to_the_bit():
    rng = np.random.default_rng(3)
    for _ in range(2_000):
        k = int(rng.integers(1, 4))
        values = (rng.random(k) * 10.0 ** rng.integers(-4, 2, size=k)).tolist()
        weights = (rng.random(k) * 10.0 ** rng.integers(0, 4, size=k)).tolist()
        assert weighted_mean(values, weights) == float(np.average(values, weights=weights))


def _entry_lastmods(column: pd.Series) -> list[datetime | None]:
    frame = pd.DataFrame({"loc": "u", "sitemap": "s", "lastmod": column,
                          "lastmod_precision": None})  # fmt: skip
    return [lastmod for _, _, lastmod, _ in entry_rows(frame)]


@pytest.mark.parametrize("unit", ["us", "ns"])
def test_lastmods_are_the_inventorys_datetimes(unit):
    stored = decode_state(encode_state(large_inventory(500)))["lastmod"]
    extra = pd.Series(
        pd.to_datetime(["1969-07-20T20:17:40.000001Z", "2038-01-19T03:14:08Z"], format="ISO8601")
    )
    column = pd.concat([stored, extra.dt.tz_convert("UTC")], ignore_index=True)
    column = column.astype(f"datetime64[{unit}, UTC]")
    days, lastmods = instants(column)
    expected = _entry_lastmods(column)
    assert list(lastmods) == expected and len(lastmods) == len(expected)
    assert [d and (d.isoformat(), d.tzinfo) for d in lastmods] == [
        d and (d.isoformat(), d.tzinfo) for d in expected
    ]
    dated = ~np.isnan(days)
    assert dated.tolist() == [d is not None for d in expected]
    seconds = [d.timestamp() for d in expected if d is not None]
    assert np.allclose(days[dated] * 86_400, seconds, rtol=0, atol=1e-6)


def test_lastmods_at_another_zone_are_read_as_they_are():
    column = pd.Series(pd.to_datetime(["2026-03-01T10:00:00+02:00", None], utc=True))
    column = column.dt.tz_convert(timezone(timedelta(hours=2)))
    assert list(instants(column)[1]) == _entry_lastmods(column)
    assert instants(column)[1][0].isoformat() == "2026-03-01T10:00:00+02:00"


def test_texts_are_the_strings_of_the_values():
    sitemaps = pd.Series(pd.Categorical(["b", "a", None, "b"], categories=["a", "b", "c"]))
    locs = pd.Series(["https://x.example/é", "https://x.example/2"], dtype=object)
    for column in (sitemaps, locs, sitemaps.astype(object)):
        assert texts(column) == [str(value) for value in column]


def _same(a: Listed, b: Listed) -> None:
    assert (a.locs, a.sitemaps, list(a.lastmods)) == (b.locs, b.sitemaps, list(b.lastmods))
    np.testing.assert_array_equal(a.days, b.days)  # NaN where the other has NaN


def test_a_stored_listing_read_from_its_blob_is_the_decoded_frames():
    frame = large_inventory(300)
    frame.loc[[3, 7], "sitemap"] = None  # URLs of no sub-sitemap: code -1
    blob = encode_state(frame)
    decoded = decode_state(blob)
    listed = Listed.of_state(state_columns(blob))
    _same(listed, Listed.of_frame(decoded))
    assert listed.sitemaps[3] == "nan" and np.isnan(listed.days).any()
    allowed = [i % 3 != 1 for i in range(len(frame))]
    _same(listed.kept(allowed), Listed.of_frame(decoded[allowed].reset_index(drop=True)))


def _fetches() -> list[PlannedFetch]:
    now = datetime(2026, 12, 5, 3, 4, 5, 678, tzinfo=UTC)
    later = now.astimezone(timezone(timedelta(hours=-5)))  # the same instant, another text
    return [
        PlannedFetch(
            'https://x.example/é "q" \\ \n\t\x01',
            "https://x.example",
            "https://x.example/s.xml",
            now,
            "rate",
            0.1234567891,
            0.33333333,
            now - timedelta(days=3, microseconds=7),
            "trusted",
        ),
        PlannedFetch(
            "https://x.example/2",
            "https://x.example",
            "https://x.example/s.xml",
            later,
            "new-url",
            30.0,
            1.0,
            None,
        ),
        PlannedFetch(
            "https://x.example/3",
            "https://x.example",
            "s",
            now,
            "explore",
            math.inf,
            math.nan,
            later,
            "untrusted",
        ),
        PlannedFetch(
            "https://x.example/4",
            "https://x.example",
            "s",
            now + timedelta(days=1),
            "retry",
            1e-9,
            0.0,
            datetime(1, 1, 1, tzinfo=UTC),
        ),
        *[
            PlannedFetch(
                f"https://x.example/{k}",
                "https://x.example",
                "s",
                now,
                "rate",
                priority,
                p,
                None,
                "partial",
            )
            for k, (priority, p) in enumerate(
                [
                    (-0.0, 0.0),
                    (0.0, -0.0),
                    (1, 1.0),
                    (1.0, 1),
                    (0.1 + 0.2, 0.30000001),
                    (0.1 + 0.2, 0.30000001),
                    (2.5e-7, 0.99995),
                    (1e300, 5e-5),
                ]
            )
        ],
    ]


def test_json_lines_and_csv_rows_are_the_text_of_to_dict():
    fetches = _fetches()
    assert list(json_lines(fetches)) == [
        json.dumps(f.to_dict(), ensure_ascii=False) for f in fetches
    ]
    ours, theirs = io.StringIO(), io.StringIO()
    csv.writer(ours).writerows(csv_rows(fetches))
    csv.writer(theirs).writerows(
        ["" if f.to_dict()[c] is None else f.to_dict()[c] for c in COLUMNS] for f in fetches
    )
    assert ours.getvalue() == theirs.getvalue()


def _reference(history: History, sites: list[str], now: datetime, budget: int):
    """The plan as its fetches were named one candidate at a time (one host here)."""
    gathered = [plan_site(history, site, now, walk=False).pages for site in sites]
    lastmods = {}
    for site in sites:
        entries = history.current_inventory(site)[2]
        lastmods.update({loc: lastmod for loc, _, lastmod, _ in entry_rows(entries)})
    found = []
    for c in schedule_host(gathered, budget, 2.0):
        site = gathered[c.site]
        url = str(site.locs[c.page])
        found.append(
            PlannedFetch(
                url,
                site.site,
                site.sitemap(c.page),
                now + timedelta(days=c.due_in_days),
                c.reason,
                c.priority,
                c.p_changed,
                lastmods[url],
                site.signal(c.page).verdict,
            )
        )
    return found


def test_a_hosts_plan_names_each_fetch_as_its_candidate_says(db_url):
    """Three sites on one loopback host (one budget), crawled with changes and failures:
    every fetch is its candidate's page, figures, due time, lastmod and verdict."""
    specs = {"trusted": "accurate-jsonld", "gen": "generation-time", "none": "no-lastmod"}
    servers = []
    now = datetime.now(UTC) + timedelta(days=2)
    try:
        with History.open(db_url) as history:
            for name, behaviour in specs.items():
                site = SimulatedSite(name, {"pages": BEHAVIOURS[behaviour]}, 25, seed=3)
                server = SiteServer(site).__enter__()
                servers.append(server)
                audit_site(server.origin, history, OPTIONS)
                paths = sorted(site.pages)
                for day in range(3):
                    at = datetime.now(UTC) - timedelta(days=3 - day)
                    status = [503 if i % 9 == day else 200 for i in range(len(paths))]
                    record_fetches(history, [
                        FetchRecord(server.origin + p, at, s, content_hash=f"v{i % (day + 2)}")
                        for i, (p, s) in enumerate(zip(paths, status, strict=True))
                    ])  # fmt: skip
            origins = [server.origin for server in servers]
            planned = list(plan(history, origins, now=now, budget=40, horizon_days=2.0,
                                walk=False))  # fmt: skip
            expected = _reference(history, origins, now, 40)
    finally:
        for server in servers:
            server.__exit__(None, None, None)
    assert len({f.site for f in planned}) == 3 and len({f.reason for f in planned}) >= 3
    assert planned == expected


def test_a_sites_states_are_all_read_in_one_statement_or_streamed(db_url, monkeypatch):
    """A site's crawl states come in one statement when few (one round trip), else
    streamed in a snapshot: the same states either way."""
    from auditor.history import crawl

    site = "https://example.com"
    at = datetime(2026, 11, 30, tzinfo=UTC)
    with History.open(db_url) as history:
        save(history, site)
        record_fetches(history, [FetchRecord(f"{site}/p/{i}", at, 200) for i in range(12)])
        site_id = history.site_id(site)
        whole = sorted(s.loc for s in history.stream_crawl_states(site_id))
        monkeypatch.setattr(crawl, "ONE_READ", 5)
        streamed = sorted(s.loc for s in history.stream_crawl_states(site_id))
        monkeypatch.setattr(crawl, "ONE_READ", 12)
        exactly = sorted(s.loc for s in history.stream_crawl_states(site_id))
    assert len(whole) == 12 and whole == streamed == exactly
