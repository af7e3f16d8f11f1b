"""Every sitemap format, read from a local file and over loopback HTTP, and the walk output.

Local fixtures live in ``fixtures/formats`` with locs on ``https://example.com`` (a local
file accepts any absolute URL); ``fixtures/sites/fmt-formats`` holds the same files with
``{{origin}}`` so the loopback server makes their locs its own.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from auditor.cli import main
from auditor.models import Problem, SitemapEntry, SitemapFile
from auditor.walker import walk
from tests.loopback import FIXTURES, LoopbackServer, send

FORMATS = FIXTURES / "formats"
LOCAL_ORIGIN = "https://example.com"


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def _utf16_route(name: str, codec: str):
    """UTF-16 cannot carry the byte-level ``{{origin}}`` placeholder: re-encode the origin."""

    def route(handler) -> None:
        origin = f"http://127.0.0.1:{handler.server.server_port}"
        data = (FORMATS / name).read_bytes()
        data = data.replace(LOCAL_ORIGIN.encode(codec), origin.encode(codec))
        send(handler, 200, data, "application/xml")

    return route


UTF16_ROUTES = {
    "/utf-16.xml": _utf16_route("utf-16.xml", "utf-16-le"),
    "/utf-16be.xml": _utf16_route("utf-16be.xml", "utf-16-be"),
}


@dataclass
class Read:
    """One walk of one format file, with what is needed to state expectations."""

    entries: list[SitemapEntry]
    problems: list[Problem]
    files: list[SitemapFile]
    readable: bool
    origin: str  # the origin the file's locs use
    sitemap: str  # what entries name as their sitemap

    def u(self, path: str) -> str:
        return self.origin + path

    @property
    def locs(self) -> list[str]:
        return [e.loc for e in self.entries]

    def entry(self, path: str) -> SitemapEntry:
        matches = [e for e in self.entries if e.loc == self.u(path)]
        assert len(matches) == 1, (path, self.locs)
        return matches[0]

    @property
    def codes(self) -> list[str]:
        return [p.code for p in self.problems]


@pytest.fixture(scope="module")
def formats_server():
    """One loopback server for the module (stopping a server costs half a second)."""
    with LoopbackServer(FIXTURES / "sites" / "fmt-formats", dict(UTF16_ROUTES)) as server:
        yield server


@pytest.fixture(params=["local", "http"])
def read(request, formats_server):
    """``read(name)`` walks fixtures/formats/NAME as a local file, or over loopback."""

    def _read(name: str) -> Read:
        if request.param == "local":
            target = str(FORMATS / name)
            origin = LOCAL_ORIGIN
        else:
            server = formats_server
            target = server.url("/" + name)
            origin = server.origin
        w = walk(target)
        entries = list(w)
        return Read(entries, w.problems, w.files, w.readable, origin, target)

    return _read


def assert_lastmod(entry: SitemapEntry, value: datetime | None, precision: str | None, raw):
    assert entry.lastmod == value
    if value is not None:
        assert entry.lastmod.utcoffset() == timedelta(0), "lastmod must be aware UTC"
    assert entry.lastmod_precision == precision
    assert entry.lastmod_raw == raw


# -- urlset --------------------------------------------------------------------------------------


def test_urlset(read):
    r = read("urlset.xml")
    assert r.problems == []
    assert r.locs == [r.u("/"), r.u("/a"), r.u("/b")]
    assert_lastmod(r.entry("/"), utc(2026, 10, 5), "day", "2026-10-05")
    assert_lastmod(
        r.entry("/a"), utc(2026, 10, 5, 8, 30, 15), "second", "2026-10-05T10:30:15+02:00"
    )
    assert_lastmod(r.entry("/b"), None, None, None)
    assert {e.sitemap for e in r.entries} == {r.sitemap}
    assert all(e.news_publication_date is None for e in r.entries)
    assert [(f.kind, f.readable, f.urls, f.records) for f in r.files] == [("urlset", True, 3, 3)]
    assert r.readable


# -- feeds ---------------------------------------------------------------------------------------


def test_rss_2(read):
    """item/link and pubDate (RFC 822); the channel's own links are not URLs of the site."""
    r = read("rss.xml")
    assert r.problems == []
    assert r.locs == [r.u("/blog/one"), r.u("/blog/two"), r.u("/blog/three"), r.u("/blog/four")]
    assert_lastmod(
        r.entry("/blog/one"), utc(2026, 10, 5, 8, 30), "second", "Mon, 05 Oct 2026 10:30:00 +0200"
    )
    assert_lastmod(
        r.entry("/blog/two"), utc(2026, 10, 4, 23, 0), "second", "Sun, 04 Oct 2026 23:00:00 GMT"
    )
    assert_lastmod(
        r.entry("/blog/three"), utc(2026, 10, 4, 13, 0), "second", "04 Oct 26 08:00:00 EST"
    )
    assert_lastmod(r.entry("/blog/four"), None, None, None)
    assert [f.kind for f in r.files] == ["rss"]
    assert r.readable


def test_atom_1(read):
    """entry/link rel=alternate (the default rel) href, else the entry's id; updated."""
    r = read("atom.xml")
    assert r.problems == []
    assert r.locs == [r.u("/posts/one"), r.u("/posts/two"), r.u("/posts/three")]
    assert_lastmod(
        r.entry("/posts/one"), utc(2026, 10, 5, 8, 30), "second", "2026-10-05T10:30:00+02:00"
    )
    assert_lastmod(
        r.entry("/posts/two"),
        utc(2026, 10, 4, 8, 0, 0, 500_000),
        "fraction",
        "2026-10-04T08:00:00.5Z",
    )
    assert_lastmod(
        r.entry("/posts/three"), utc(2026, 10, 3, 8, 0), "second", "2026-10-03T08:00:00Z"
    )
    assert [f.kind for f in r.files] == ["atom"]


# -- news and extensions -------------------------------------------------------------------------


def test_news_sitemap_keeps_publication_date(read):
    r = read("news.xml")
    assert r.problems == []
    assert r.locs == [r.u("/news/a"), r.u("/news/b"), r.u("/news/c")]
    a, b, c = r.entries
    assert_lastmod(a, utc(2026, 10, 5, 9, 0), "second", "2026-10-05T09:00:00Z")
    assert a.news_publication_date == utc(2026, 10, 5, 6, 30)
    assert a.news_publication_date.utcoffset() == timedelta(0)
    assert_lastmod(b, None, None, None)
    assert b.news_publication_date == utc(2026, 10, 4)
    assert_lastmod(c, utc(2026, 10, 3), "day", "2026-10-03")
    assert c.news_publication_date is None


def test_image_video_and_hreflang_extensions_are_tolerated_not_counted(read):
    """image:loc, video:*_loc and xhtml:link hrefs are not URLs of the sitemap."""
    r = read("extensions.xml")
    # image:loc / video:content_loc on cdn.example.net raise no cross-host, the repeated
    # hreflang alternates no duplicate-url
    assert r.problems == []
    assert r.locs == [r.u("/en/page"), r.u("/videos/1"), r.u("/de/page")]
    assert_lastmod(r.entry("/en/page"), utc(2026, 10, 1), "day", "2026-10-01")
    # a lastmod written after the video block still belongs to its url
    assert_lastmod(r.entry("/videos/1"), utc(2026, 9, 2), "day", "2026-09-02")
    assert_lastmod(r.entry("/de/page"), utc(2026, 10, 2), "day", "2026-10-02")
    assert [(f.urls, f.records) for f in r.files] == [(3, 3)]


# -- plain text ----------------------------------------------------------------------------------


def test_plain_text_sitemap_with_bom_crlf_and_blank_lines(read):
    raw = (FORMATS / "sitemap.txt").read_bytes()
    assert raw.startswith(codecs.BOM_UTF8) and b"\r\n\r\n" in raw  # the fixture is what we test
    r = read("sitemap.txt")
    assert r.problems == []
    assert r.locs == [r.u("/one"), r.u("/two"), r.u("/three")]
    assert all(e.lastmod is None and e.lastmod_raw is None for e in r.entries)
    assert [f.kind for f in r.files] == ["text"]
    assert r.readable


def test_plain_text_sitemap_without_final_newline(tmp_path):
    path = tmp_path / "urls.txt"
    path.write_bytes(b"https://example.com/a\nhttps://example.com/b")
    w = walk(str(path))
    assert [e.loc for e in w] == ["https://example.com/a", "https://example.com/b"]
    assert w.problems == []


@pytest.mark.parametrize("name", ["urlset.xml", "sitemap.txt", "rss.xml"])
def test_gzipped_file_of_any_format(tmp_path, name):
    """Judged by the magic bytes, whatever the file is called."""
    plain = walk(str(FORMATS / name))
    expected = [e[:4] for e in plain]
    path = tmp_path / (name + ".bin")
    path.write_bytes(gzip.compress((FORMATS / name).read_bytes(), mtime=0))
    w = walk(str(path))
    assert [e[:4] for e in w] == expected
    assert w.problems == []
    assert [(f.gzipped, f.readable) for f in w.files] == [(True, True)]


# -- what comes before the root element ----------------------------------------------------------


@pytest.mark.parametrize("name", ["bom.xml", "leading-whitespace.xml", "bom-then-newline.xml"])
def test_bom_or_whitespace_before_the_xml_declaration(read, name):
    raw = (FORMATS / name).read_bytes()
    assert not raw.startswith(b"<?xml")
    r = read(name)
    assert r.problems == []
    assert r.locs == [r.u("/x")]
    assert_lastmod(r.entries[0], utc(2026, 10, 5), "day", "2026-10-05")
    assert [f.kind for f in r.files] == ["urlset"]


# -- how values are written ----------------------------------------------------------------------


def test_cdata_loc(read):
    r = read("cdata.xml")
    assert r.problems == []
    assert r.locs == [r.u("/search?a=1&b=2"), r.u("/spaced")]
    assert_lastmod(r.entry("/spaced"), utc(2026, 10, 5), "day", "2026-10-05")


def test_entities_in_loc_are_decoded_exactly_once(read):
    r = read("entities.xml")
    assert r.problems == []
    assert r.locs == [
        r.u("/p?id=1&currency=EUR&lang=en"),  # never "¤cy=" (HTML's &curren)
        r.u("/q?a=1&amp;b=2"),  # &amp;amp; is one decoding away from &amp;
        r.u("/r?x=&&quot=1&copy=2"),  # &#38; is "&"; &quot= and &copy= stay as written
        r.u("/it's"),
    ]
    assert not any("\u00a4" in loc or "\u00a9" in loc or '"' in loc for loc in r.locs)


def test_whitespace_around_values_is_stripped(read):
    r = read("whitespace.xml")
    assert r.problems == []
    assert r.locs == [r.u("/spaced"), r.u("/tabbed")]
    assert_lastmod(r.entry("/spaced"), utc(2026, 10, 5, 10, 30), "second", "2026-10-05T10:30:00Z")
    assert_lastmod(r.entry("/tabbed"), utc(2026, 10, 1), "month", "2026-10")


def test_empty_lastmod_is_absent(read):
    r = read("empty-lastmod.xml")
    assert r.problems == []  # in particular no invalid-lastmod
    assert r.locs == [r.u("/empty"), r.u("/self-closing"), r.u("/blank"), r.u("/dated")]
    for path in ("/empty", "/self-closing", "/blank"):
        assert_lastmod(r.entry(path), None, None, None)
    assert_lastmod(r.entry("/dated"), utc(2026, 10, 5), "day", "2026-10-05")


# -- namespaces ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "named"),
    [
        ("no-namespace.xml", "urlset"),
        ("wrong-namespace.xml", "http://www.google.com/schemas/sitemap/0.84"),
    ],
)
def test_missing_or_wrong_namespace_is_read_and_reported(read, name, named):
    r = read(name)
    assert r.locs == [r.u("/one"), r.u("/two")]
    assert_lastmod(r.entry("/one"), utc(2026, 10, 5), "day", "2026-10-05")
    assert r.codes == ["wrong-namespace"]
    assert r.problems[0].sitemap == r.sitemap
    assert named in r.problems[0].detail
    assert [(f.kind, f.readable) for f in r.files] == [("urlset", True)]


# -- declared encodings --------------------------------------------------------------------------

ENCODINGS = [
    ("windows-1252.xml", "cp1252", ["/caf\u00e9", "/\u20acuro", "/it\u2019s"]),
    ("iso-8859-1.xml", "latin-1", ["/caf\u00e9", "/gr\u00fc\u00dfe", "/ni\u00f1o"]),
    (
        "shift_jis.xml",
        "shift_jis",
        ["/\u65e5\u672c\u8a9e", "/\u30c6\u30b9\u30c8/\u30da\u30fc\u30b8"],
    ),
    ("utf-16.xml", "utf-16", ["/caf\u00e9", "/\u65e5\u672c\u8a9e"]),
    ("utf-16be.xml", "utf-16", ["/caf\u00e9", "/\u65e5\u672c\u8a9e"]),
    # "utf8" (no hyphen) is a name Python and every browser know, written by real generators
    ("utf8-alias.xml", "utf-8", ["/caf\u00e9", "/\u65e5\u672c\u8a9e"]),
]


@pytest.mark.parametrize(("name", "codec", "paths"), ENCODINGS, ids=[e[0] for e in ENCODINGS])
def test_declared_encoding_reads_non_ascii_locs(read, name, codec, paths):
    raw = (FORMATS / name).read_bytes()
    text = raw.decode(codec)
    assert all(path[1:] in text for path in paths)  # the fixture holds what we expect
    if codec == "utf-16":
        assert raw[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
    else:
        assert not raw.isascii()
    r = read(name)
    assert r.problems == []
    assert r.locs == [r.u(p) for p in paths]
    assert [(f.kind, f.readable) for f in r.files] == [("urlset", True)]


# -- sitemap index -------------------------------------------------------------------------------


def test_index_children_are_visited_newest_first_undated_last(serve):
    server = serve("sites/fmt-index")
    w = walk(server.url("/sitemap.xml"))
    entries = list(w)
    assert w.problems == []
    # c4 (2026-05-31T23:30Z) is newer than c3 (2026-06-01T00:00+02:00 = 2026-05-31T22:00Z)
    order = [e.loc.rsplit("/", 1)[1] for e in entries]
    assert order[:4] == ["p4", "p3", "p1", "p6"]
    assert sorted(order[4:]) == ["p2", "p5"]
    requested = [p for p in server.paths() if p.startswith("/c")]
    assert requested == [f"/c{e[1:]}.xml" for e in order]
    assert server.paths()[0] == "/sitemap.xml"
    by_url = {f.url: f for f in w.files}
    index = by_url[server.url("/sitemap.xml")]
    assert (index.kind, index.records, index.urls, index.parent) == ("sitemapindex", 6, 0, None)
    assert by_url[server.url("/c3.xml")].index_lastmod == utc(2026, 5, 31, 22, 0)
    assert by_url[server.url("/c6.xml")].index_lastmod == utc(2025, 1, 1)
    assert by_url[server.url("/c2.xml")].index_lastmod is None
    assert all(
        f.parent == server.url("/sitemap.xml") and f.kind == "urlset"
        for url, f in by_url.items()
        if url != index.url
    )
    # the index's lastmods are not page lastmods
    p1 = next(e for e in entries if e.loc == server.url("/p1"))
    assert_lastmod(p1, utc(2026, 10, 1), "day", "2026-10-01")
    assert p1.sitemap == server.url("/c1.xml")


# -- every format on one site --------------------------------------------------------------------


def test_one_site_with_every_format_in_robots_txt(formats_server):
    server = formats_server
    w = walk(server.origin)
    entries = list(w)
    assert w.problems == []
    kinds = [(f.url.rsplit("/", 1)[1], f.kind, f.via_robots) for f in w.files]
    assert kinds == [
        ("urlset.xml", "urlset", True),
        ("rss.xml", "rss", True),
        ("atom.xml", "atom", True),
        ("news.xml", "urlset", True),
        ("extensions.xml", "urlset", True),
        ("sitemap.txt", "text", True),
        ("windows-1252.xml", "urlset", True),
        ("shift_jis.xml", "urlset", True),
    ]
    per_file: dict[str, int] = {}
    for e in entries:
        per_file[e.sitemap.rsplit("/", 1)[1]] = per_file.get(e.sitemap.rsplit("/", 1)[1], 0) + 1
    assert per_file == {
        "urlset.xml": 3,
        "rss.xml": 4,
        "atom.xml": 3,
        "news.xml": 3,
        "extensions.xml": 3,
        "sitemap.txt": 3,
        "windows-1252.xml": 3,
        "shift_jis.xml": 2,
    }
    assert len({e.loc for e in entries}) == len(entries)
    assert w.urls == len(entries)


# -- the walk command's output (contract) --------------------------------------------------------

BASE_KEYS = ["loc", "lastmod", "lastmod_precision", "lastmod_raw", "sitemap"]


def _jsonl(capsys, target: str) -> list[dict]:
    code = main(["walk", target])
    out = capsys.readouterr().out
    assert code == 0
    assert out.endswith("\n")
    return [json.loads(line) for line in out.splitlines()]


def test_cli_jsonl_keys_and_values(formats_server, capsys):
    server = formats_server
    news = _jsonl(capsys, server.url("/news.xml"))
    sitemap = server.url("/news.xml")
    assert news == [
        {
            "loc": server.url("/news/a"),
            "lastmod": "2026-10-05T09:00:00+00:00",
            "lastmod_precision": "second",
            "lastmod_raw": "2026-10-05T09:00:00Z",
            "sitemap": sitemap,
            "news_publication_date": "2026-10-05T06:30:00+00:00",
            "news_title": "A",
            "news_language": "en",
        },
        {
            "loc": server.url("/news/b"),
            "lastmod": None,
            "lastmod_precision": None,
            "lastmod_raw": None,
            "sitemap": sitemap,
            "news_publication_date": "2026-10-04T00:00:00+00:00",
            "news_title": "B",
            "news_language": "en",
        },
        {
            "loc": server.url("/news/c"),
            "lastmod": "2026-10-03T00:00:00+00:00",
            "lastmod_precision": "day",
            "lastmod_raw": "2026-10-03",
            "sitemap": sitemap,
        },
    ]
    # key order as the contract lists them, news_publication_date only where present
    assert [list(r) for r in news] == [
        [*BASE_KEYS, "news_publication_date", "news_title", "news_language"],
        [*BASE_KEYS, "news_publication_date", "news_title", "news_language"],
        BASE_KEYS,
    ]


def test_cli_jsonl_every_precision_normalised_to_utc(formats_server, capsys):
    server = formats_server
    rows = {r["loc"].rsplit("/", 1)[1]: r for r in _jsonl(capsys, server.url("/lastmods.xml"))}
    expected = {
        "year": ("2026-01-01T00:00:00+00:00", "year", "2026"),
        "month": ("2026-10-01T00:00:00+00:00", "month", "2026-10"),
        "day": ("2026-10-05T00:00:00+00:00", "day", "2026-10-05"),
        "minute": ("2026-10-05T08:30:00+00:00", "minute", "2026-10-05T10:30+02:00"),
        "second": ("2026-10-05T10:30:15+00:00", "second", "2026-10-05T10:30:15Z"),
        "fraction": (
            "2026-10-05T15:30:15.250000+00:00",
            "fraction",
            "2026-10-05T10:30:15.25-05:00",
        ),
        "slash": (None, None, "15/10/2026"),
        "yesterday": (None, None, "yesterday"),
        "feb30": (None, None, "2026-02-30"),
        "no-zone": (None, None, "2026-10-05T10:30:15"),
        "after": ("2026-10-06T00:00:00+00:00", "day", "2026-10-06"),
    }
    got = {k: (r["lastmod"], r["lastmod_precision"], r["lastmod_raw"]) for k, r in rows.items()}
    assert got == expected
    assert all(list(r) == BASE_KEYS for r in rows.values())


def test_cli_csv_header_and_rows(formats_server, capsys):
    server = formats_server
    assert main(["walk", server.url("/news.xml"), "--format", "csv"]) == 0
    out = capsys.readouterr().out
    rows = list(csv.reader(io.StringIO(out)))
    sitemap = server.url("/news.xml")
    assert rows == [
        ["loc", "lastmod", "lastmod_precision", "lastmod_raw", "sitemap", "news_publication_date"],
        [
            server.url("/news/a"),
            "2026-10-05T09:00:00+00:00",
            "second",
            "2026-10-05T09:00:00Z",
            sitemap,
            "2026-10-05T06:30:00+00:00",
        ],
        [server.url("/news/b"), "", "", "", sitemap, "2026-10-04T00:00:00+00:00"],
        [server.url("/news/c"), "2026-10-03T00:00:00+00:00", "day", "2026-10-03", sitemap, ""],
    ]


def test_cli_jsonl_of_a_local_file_names_the_file(capsys):
    path = FORMATS / "urlset.xml"
    rows = _jsonl(capsys, str(path))
    assert [r["loc"] for r in rows] == [
        LOCAL_ORIGIN + "/",
        LOCAL_ORIGIN + "/a",
        LOCAL_ORIGIN + "/b",
    ]
    assert {r["sitemap"] for r in rows} == {str(path)}
    assert rows[1]["lastmod"] == "2026-10-05T08:30:15+00:00"
