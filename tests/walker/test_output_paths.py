"""The ``walk`` command's JSONL path writes exactly what ``write_jsonl`` writes for the entries.

``write_walk_jsonl`` makes its lines without SitemapEntry values (one loop per URL, each
lastmod's text cached); ``write_jsonl(walk, out)`` is the reference. Every fixture, every
corpus file and generated sitemaps (local and over loopback) must give the same bytes,
problems and file records either way.
"""

from __future__ import annotations

import dataclasses
import io
from datetime import UTC, datetime
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.walker import Walk
from auditor.walker.output import write_jsonl, write_walk_jsonl
from tests.conftest import CORPUS
from tests.loopback import FIXTURES, LoopbackServer, send

NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"


def both_ways(target: str) -> tuple[tuple, tuple]:
    """(reference, fast): each the JSONL text, the problems and the file records."""
    results = []
    for write in (write_jsonl, write_walk_jsonl):
        walk = Walk(target)
        out = io.StringIO()
        count = write(walk, out)
        files = [dataclasses.replace(f, fetched_at=None, date_header=None) for f in walk.files]
        results.append((out.getvalue(), count, walk.problems, files, walk.urls))
    reference, fast = results
    assert reference[1] == reference[0].count("\n")
    return tuple(reference), tuple(fast)


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []


LOCAL_FILES = _files(FIXTURES) + _files(CORPUS / "sitemaps")


@pytest.mark.parametrize("path", LOCAL_FILES, ids=lambda p: p.name)
def test_every_fixture_and_corpus_file_writes_the_same_bytes(path):
    reference, fast = both_ways(str(path))
    assert fast == reference


@pytest.mark.parametrize("site", sorted(p.name for p in (FIXTURES / "sites").iterdir()))
def test_every_fixture_site_over_loopback_writes_the_same_bytes(site):
    # {{now}} fixed: the second must not tick between the two walks
    with LoopbackServer(FIXTURES / "sites" / site, now=datetime.now(UTC)) as server:
        reference, fast = both_ways(server.origin)
    assert fast == reference


# -- generated sitemaps, over loopback (the fast loc prefix) and as local files ---------------

_STAMPS = st.one_of(
    st.text(alphabet="0123456789-:T.Z+zt W", max_size=34),
    st.datetimes().map(lambda d: d.isoformat()[: 16 + 3 * (d.second % 3)] + "Z"),
    st.sampled_from(
        [
            "2024-03-15T10:22:33+00:00",
            "2024-03-15T00:22:33+02:00",
            "2024-03-15T10:22:33.000Z",
            "2024-03-15T10:22:33.1234567-05:30",
            "2024-03-15",
            "2024-13-15",
            "Mon, 15 Mar 2024 10:22:33 GMT",
            "Mon, 15 Mar 2024 10:22:33 +0200",
            "2024-03-15 10:22:33",
            "",
        ]
    ),
)
_PATHS = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"))
    | st.sampled_from('\t\n"\\\x7f\u2028'),  # what JSON escapes, and what it need not
    max_size=12,
)


@st.composite
def sitemaps(draw: st.DrawFn) -> tuple[str, list[tuple[str, str | None, str | None]]]:
    """A kind (urlset or rss) and records: (loc kind + path, lastmod, news date)."""
    kind = draw(st.sampled_from(["urlset", "rss"]))
    where = st.sampled_from(["same", "same", "same", "other", "relative", "empty"])
    records = draw(
        st.lists(
            st.tuples(
                where.flatmap(lambda w: _PATHS.map(lambda p: f"{w}|{p}")),
                st.none() | _STAMPS,
                st.none() | st.none() | _STAMPS,
            ),
            max_size=25,
        )
    )
    return kind, records


def _loc(spec: str, origin: str, folder: str) -> str:
    where, path = spec.split("|", 1)
    path = f"/{folder}/" + path.replace("\r", "")
    return {"same": origin + path, "other": "http://example.org" + path, "relative": path}.get(
        where, ""
    )


def render(kind: str, records: list, origin: str, folder: str = "") -> bytes:
    parts = []
    for spec, stamp, news in records:
        loc = escape(_loc(spec, origin, folder))
        if kind == "rss":
            date = "" if stamp is None else f"<pubDate>{escape(stamp)}</pubDate>"
            parts.append(f"<item><link>{loc}</link>{date}</item>")
            continue
        date = "" if stamp is None else f"<lastmod>{escape(stamp)}</lastmod>"
        extra = (
            ""
            if news is None
            else f"<news:news><news:publication_date>{escape(news)}"
            "</news:publication_date></news:news>"
        )
        parts.append(f"<url><loc>{loc}</loc>{date}{extra}</url>")
    if kind == "rss":
        body = f'<rss version="2.0"><channel>{"".join(parts)}</channel></rss>'
    else:
        body = (
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
            f'xmlns:news="{NEWS_NS}">{"".join(parts)}</urlset>'
        )
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + body).encode()


_FIXTURE_OK = [HealthCheck.function_scoped_fixture]


@pytest.fixture(scope="module")
def generated_server():
    """An index of a urlset, an RSS feed and a urlset, whose bodies each example sets."""
    bodies: dict[str, bytes] = {}
    routes = {f"/{name}": (lambda h, n=name: send(h, 200, bodies[n])) for name in NAMES}
    with LoopbackServer(None, routes) as server:
        bodies["index.xml"] = (
            '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<sitemap><loc>{server.origin}/a.xml</loc></sitemap>"
            f"<sitemap><loc>{server.origin}/b.xml</loc></sitemap>"
            f"<sitemap><loc>{server.origin}/c.xml</loc></sitemap></sitemapindex>"
        ).encode()
        yield server, bodies


NAMES = ("index.xml", "a.xml", "b.xml", "c.xml")


@settings(max_examples=25, deadline=None, suppress_health_check=_FIXTURE_OK)
@given(sitemaps())
def test_generated_sitemaps_over_loopback_write_the_same_bytes(generated_server, sitemap):
    """The same records in a urlset, a feed, a urlset: one date text read in two syntaxes."""
    _kind, records = sitemap
    check_three_files(generated_server, records)


def test_a_stamp_valid_in_one_syntax_only_over_loopback(generated_server):
    stamps = ["Mon, 15 Mar 2024 10:22:33 GMT", "2024-03-15T10:22:33Z", "2024-13-15", "x"]
    records = [(f"same|{i}", stamp, None) for i, stamp in enumerate(stamps * 2)]
    check_three_files(generated_server, records)


def test_lastmods_json_escapes_beside_plain_ones_over_loopback(generated_server):
    # a batch's new lastmods, when JSON escapes none of them, are written as they are;
    # one that it escapes (RSS dates read leniently: a quote, a backslash, a tab or a
    # line break inside) sends them through the encoder: the same bytes either way
    plain = ["2024-03-15T10:22:33Z", "2024-03-15", "Mon, 15 Mar 2024 10:22:33 GMT"]
    escaped = [
        '"Mon, 15 Mar 2024 10:22:33 GMT',
        "Mon\\, 15 Mar 2024 10:22:33 GMT",
        "Mon, 15 Mar 2024\t10:22:33 GMT",
        "Mon, 15\nMar 2024 10:22:33 GMT",
        'x"y',
    ]
    for stamps in (plain, plain + escaped):
        records = [(f"same|{i}", stamp, None) for i, stamp in enumerate(stamps * 2)]
        check_three_files(generated_server, records)


def check_three_files(generated_server, records: list) -> None:
    server, bodies = generated_server
    bodies["a.xml"] = render("urlset", records, server.origin, "a")
    bodies["b.xml"] = render("rss", records, server.origin, "b")
    bodies["c.xml"] = render("urlset", records, server.origin, "c")
    reference, fast = both_ways(server.url("/index.xml"))
    assert fast == reference


@settings(max_examples=150, deadline=None, suppress_health_check=_FIXTURE_OK)
@given(sitemaps())
def test_generated_sitemaps_as_local_files_write_the_same_bytes(tmp_path, sitemap):
    path = tmp_path / "sitemap.xml"
    path.write_bytes(render(*sitemap, "https://example.com"))
    reference, fast = both_ways(str(path))
    assert fast == reference


# -- extensions: image, video, hreflang and news records among plain ones ----------------------

_EXTENSION_NS = (
    'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
    'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" '
    'xmlns:xhtml="http://www.w3.org/1999/xhtml" '
    f'xmlns:news="{NEWS_NS}"'
)


def _extension_record(origin: str, i: int) -> str:
    """One record; every third has an image, every fifth hreflang links, every seventh a
    video, every eleventh a news date (valid or not); from 1,000 to 2,000 every thirteenth
    loc has a quote (JSON escapes it)."""
    quoted = i % 13 == 0 and 1_000 <= i < 2_000
    loc = f"{origin}/p/{i}" + ('?q="x"&amp;a=1' if quoted else "")
    parts = [f"<url><loc>{loc}</loc>"]
    if i % 4:
        parts.append(
            f"<lastmod>2024-0{i % 9 + 1}-1{i % 10}T0{i % 10}:1{i % 6}:00+0{i % 3}:00</lastmod>"
        )
    if i % 3 == 0:
        parts.append(f"<image:image><image:loc>{origin}/i/{i}.jpg</image:loc></image:image>")
    if i % 5 == 0:
        parts.append(
            f'<xhtml:link rel="alternate" hreflang="de" href="{origin}/de/p/{i}"/>'
            f'<xhtml:link rel="alternate" hreflang="fr" href="{origin}/fr/p/{i}"/>'
        )
    if i % 7 == 0:
        parts.append(
            "<video:video><video:title>t</video:title>"
            f"<video:content_loc>{origin}/v/{i}.mp4</video:content_loc></video:video>"
        )
    if i % 11 == 0:
        stamp = "2024-03-15T10:22:33Z" if i % 22 else "not a date"
        parts.append(
            f"<news:news><news:publication_date>{stamp}</news:publication_date></news:news>"
        )
    return "".join(parts) + "</url>\n"


@pytest.mark.parametrize("repeat", [False, True])
def test_records_with_extensions_among_plain_ones_write_the_same_bytes(generated_server, repeat):
    """Batches whose records mix extensions, news dates and plain ones (a repeated loc or
    none), over loopback: the batch path and the reference write the same lines."""
    server, bodies = generated_server
    records = [_extension_record(server.origin, i) for i in range(3_000)]
    if repeat:
        records.insert(2_000, records[10])
    body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" {_EXTENSION_NS}>'
    bodies["a.xml"] = (body + "".join(records) + "</urlset>").encode()
    bodies["b.xml"] = bodies["c.xml"] = (
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>'
    )
    reference, fast = both_ways(server.url("/index.xml"))
    assert fast == reference
    text = reference[0]
    for key in ("image_count", "hreflang_count", "video_count", "news_publication_date"):
        assert f'"{key}"' in text
