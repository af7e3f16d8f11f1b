"""The HTML report and the fleet index: content, escaping, charts on disk."""

from __future__ import annotations

import re

import pytest

from auditor.history import History
from auditor.report import load_report_data, site_slug, write_report
from auditor.report.site import advice


@pytest.fixture(scope="module")
def report(audited):
    database, origin, folder = audited
    with History.open(database) as history:
        path = write_report(history, origin, folder / "out")
        data = load_report_data(history, origin)
    return path, path.read_text(encoding="utf-8"), data


def _normalised(html: str) -> str:
    """The report with its volatile values (times, ports, run times) masked."""
    html = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00", "<time>", html)
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", html)


def test_the_report_says_the_verdict_reasons_and_what_to_do(report):
    path, html, data = report

    assert path.name == "index.html" and path.parent.name == site_slug(data.site)
    assert f"<title>auditor report: {data.site}</title>" in html
    assert '<p class="badge">partial</p>' in html
    assert "lastmod can be trusted for some sub-sitemaps only" in html
    assert "Schedule crawls on lastmod for: /sitemap-blog.xml." in html
    assert re.search(
        r"Do not schedule on lastmod for /sitemap-products.xml: re-fetch the others about "
        r"every (day|\d+ days) on average \([\d.,]+ fetch(?:es)? a day for 40 pages, as auditor "
        r"plan schedules them\)\.",
        html,
    )
    assert "<code>generation-time</code>" in html
    for section in (
        "verdict",
        "todo",
        "reasons",
        "segments",
        "inventory",
        "dispersion",
        "sample",
        "history",
    ):
        assert f'id="{section}"' in html
    assert _normalised(html).count("<time>") >= 3


def test_every_chart_is_on_disk_and_referenced(report):
    path, html, _ = report
    images = re.findall(r'<img src="([^"]+)"', html)

    assert sorted(images) == sorted(
        [
            "lastmod_over_time.png",
            "shared_values.png",
            "sample_agreement.png",
            "signed_error.png",
            "history.png",
        ]
    )
    for name in images:
        data = (path.parent / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000
    assert 'alt="' in html and "http" not in "".join(re.findall(r'src="([^"]+)"', html))


def test_values_from_the_web_are_escaped(report):
    _, html, data = report
    hostile = [p for p in data.pages if "<script>" in p.loc]
    assert hostile and hostile[0].ok  # sampled, fetched and read

    assert "<script" not in html.lower()  # the report itself carries no script at all
    assert "/blog/&lt;script&gt;alert(&#34;loc&#34;)&lt;/script&gt;" in html


def test_the_fleet_index_links_every_reported_site(report):
    path, _, data = report
    index = (path.parent.parent / "index.html").read_text(encoding="utf-8")

    assert f'<a href="{site_slug(data.site)}/index.html">{data.site}</a>' in index
    assert "partial" in index and "steady" in index


def test_advice_for_each_kind_of_result():
    segment = {"urls": 10, "sitemap": "https://x.example/a.xml", "change_rate": None}
    trusted = {"segments": [{**segment, "verdict": "trusted", "recheck_days": 7.0}]}
    assert advice({**trusted, "recheck_days": 7.0}) == [
        "Schedule crawls on lastmod for: /a.xml.",
        "Re-verify this site in 7 days (auditor reverify): the soonest re-check of the table"
        " (/a.xml).",
    ]
    untrusted = {"segments": [{**segment, "verdict": "untrusted", "change_rate": 0.25}]}
    assert advice(untrusted) == [  # saved before the plan's figures per segment
        "Do not schedule on lastmod for /a.xml: re-fetch their pages as auditor plan"
        " schedules them, by their measured change rates."
    ]
    figures = {"sitemap": segment["sitemap"], "group": None, "urls": 10, "trusted": False}
    planned = {**untrusted, "savings": {"segments": [{**figures, "fetches_per_day": 2.5}]}}
    assert advice(planned) == [
        "Do not schedule on lastmod for /a.xml: re-fetch their pages about every 4 days on"
        " average (2.5 fetches a day for 10 pages, as auditor plan schedules them)."
    ]
    idle = {**untrusted, "savings": {"segments": [{**figures, "fetches_per_day": 0.0}]}}
    assert advice(idle)[0].endswith("none is due yet at the default budget.")
