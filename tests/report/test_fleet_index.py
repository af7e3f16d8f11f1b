"""The fleet index as written: counts by verdict, every row without scripts, escaping.

(How it behaves in a browser, sorting, filtering and searching, is checked in
headless Chromium: ``test_browser.py``.)
"""

from __future__ import annotations

import html
import re

import pytest

from auditor.history import History
from auditor.report import site_slug, write_fleet_index
from auditor.report.fleet import fleet_rows, verdict_counts
from tests.report.fleet_history import HOSTILE, write_fleet_history

SITES = 60


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """(index HTML, latest verdicts counted, rows) of a generated 60-site history."""
    folder = tmp_path_factory.mktemp("fleet")
    counted = write_fleet_history(folder / "history.sqlite3", SITES)
    with History.open(folder / "history.sqlite3") as history:
        slugs = {s.origin: site_slug(s.origin) for s in history.sites()}
        path = write_fleet_index(history, folder, slugs)
        rows = fleet_rows(history, slugs)
    return path.read_text(encoding="utf-8"), counted, rows


def test_the_counts_by_verdict_are_at_the_top(fleet):
    page, counted, rows = fleet
    shown = re.findall(
        r'data-verdict="([a-z-]*)" aria-pressed="\w+">\w[\w-]* <b>([\d,]+)</b>', page
    )

    assert dict(shown[:-1]) == {v: str(n) for v, n in counted.items()}
    assert shown[-1] == ("", str(SITES))  # "all"
    assert [v for v, _ in shown[:-1]] == [
        v for v in ("trusted", "partial", "untrusted", "no-lastmod", "inconclusive") if v in counted
    ]
    assert verdict_counts(rows) == [(v, counted[v]) for v, _ in shown[:-1]]


def test_every_site_is_a_row_without_scripts(fleet):
    page, _, rows = fleet
    table = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]

    assert table.count("<tr ") == SITES == len(rows)
    assert "<tr hidden" not in table and "display: none" not in table
    assert '<form id="filters" role="search" hidden>' in page  # controls: only with the script
    assert f"{SITES} of {SITES} sites shown" in page


def test_rows_carry_what_the_script_sorts_and_filters_on(fleet):
    page, _, rows = fleet
    first = next(r for r in rows if r["site"] != HOSTILE)
    row = re.search(rf'<tr data-site="{re.escape(first["site"])}"[^>]*>', page)

    assert row is not None
    assert f'data-verdict="{first["verdict"]}"' in row.group(0)
    assert f'data-trend="{first["trend"]}"' in row.group(0)
    assert {r["trend"] for r in rows} == {"first run", "improving", "degrading", "steady"}


def test_a_site_from_the_web_is_escaped_in_text_and_attributes(fleet):
    page, _, _ = fleet
    escaped = html.escape(HOSTILE, quote=True).replace("&#x27;", "&#39;").replace("&quot;", "&#34;")

    assert page.lower().count("<script") == 1  # the index's own, and nothing else
    assert 'alert("site")' not in page
    assert f'<tr data-site="{escaped}"' in page
    assert f">{escaped}</a>" in page


def test_the_script_reads_no_markup_and_fetches_nothing(fleet):
    page, _, _ = fleet
    script = page.split("<script>", 1)[1].split("</script>", 1)[0]

    for unsafe in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert unsafe not in script
    for network in ("fetch(", "XMLHttpRequest", "import(", "http://", "https://", "src="):
        assert network not in script
    assert "<link" not in page and " src=" not in page  # one self-contained file


def _linked_sites(page: str) -> list[str]:
    table = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [html.unescape(s) for s in re.findall(r'<tr data-site="([^"]*)"', table)]


def test_a_long_index_is_pages_every_site_on_one_of_them(tmp_path):
    counted = write_fleet_history(tmp_path / "history.sqlite3", SITES)
    with History.open(tmp_path / "history.sqlite3") as history:
        slugs = {s.origin: site_slug(s.origin) for s in history.sites()}
        write_fleet_index(history, tmp_path, slugs, page_rows=25)
        rows = fleet_rows(history, slugs)
    names = ["index.html", "index-2.html", "index-3.html"]
    pages = [(tmp_path / name).read_text(encoding="utf-8") for name in names]

    assert sorted(p.name for p in tmp_path.glob("index*.html")) == sorted(names)
    listed = [site for page in pages for site in _linked_sites(page)]
    assert listed == [r["site"] for r in rows]  # one order across the pages, each site once
    assert [len(_linked_sites(page)) for page in pages] == [25, 25, 10]
    for number, page in enumerate(pages, start=1):
        links = set(re.findall(r'<a href="(index(?:-\d+)?\.html)"', page))
        assert links == set(names) - {names[number - 1]}  # every other page, from each
        assert f'<b aria-current="page">{number}</b>' in page
        assert f"all <b>{SITES}</b>" in page  # the whole fleet's counts on every page
        assert sum(counted.values()) == SITES
    assert 'rel="next"' not in pages[2] and 'rel="prev"' not in pages[0]
    assert "sites 26&ndash;50 of 60" in pages[1]


def test_pages_of_a_longer_index_go_when_it_shrinks(tmp_path):
    write_fleet_history(tmp_path / "history.sqlite3", SITES)
    with History.open(tmp_path / "history.sqlite3") as history:
        write_fleet_index(history, tmp_path, {}, page_rows=25)
        write_fleet_index(history, tmp_path, {}, page_rows=40)
    (tmp_path / "index-9.html.bak").write_text("not ours")

    assert sorted(p.name for p in tmp_path.glob("index*.html")) == ["index-2.html", "index.html"]


def test_one_page_has_no_page_links(fleet):
    page, _, _ = fleet

    assert 'class="pages"' not in page
    assert "index-2.html" not in page


def test_each_row_shows_the_site_s_latest_verdicts_oldest_first(fleet):
    _, _, rows = fleet
    from tests.report.fleet_history import PATTERNS

    by_site = {r["site"]: r for r in rows}
    for n in (0, 1, 6, 13):
        row = by_site[f"https://site{n:05d}.example"]
        assert row["timeline"] == list(PATTERNS[n % len(PATTERNS)])
        assert row["runs"] == len(PATTERNS[n % len(PATTERNS)])
        assert row["verdict"] == PATTERNS[n % len(PATTERNS)][-1]
