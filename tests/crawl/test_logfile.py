"""The crawl log readers: JSON Lines, CSV and WARC files into fetches and named problems.

Every file is written into tmp_path (WARCs with warcio's own writer) and read back; each
malformed line or damaged record is named with its number and code, and everything good
around it comes out, in order.
"""

from __future__ import annotations

import gzip
import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from warcio.recordbuilder import RecordBuilder
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from auditor.crawl.logfile import (
    FORMATS,
    LOG_PROBLEM_CODES,
    detect_format,
    read_crawl_log,
)
from auditor.crawl.records import FetchRecord, LogProblem

DATE = "2026-11-02T08:30:00Z"
WHEN = datetime(2026, 11, 2, 8, 30, tzinfo=UTC)
DNS = b"20261102083000\nexample.com. 300 IN A 192.0.2.1\n"
PAGE = b"<html><body><p>" + b"news " * 200 + b"</p></body></html>"


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def read(path: Path, fmt: str, **options: int) -> list[FetchRecord | LogProblem]:
    with path.open("rb") as stream:
        items = list(read_crawl_log(stream, fmt, **options))
    assert all(p.code in LOG_PROBLEM_CODES for p in items if isinstance(p, LogProblem))
    return items


def problems(items: list[FetchRecord | LogProblem]) -> list[tuple[int, str]]:
    return [(p.line, p.code) for p in items if isinstance(p, LogProblem)]


def urls(items: list[FetchRecord | LogProblem]) -> list[str]:
    return [r.url for r in items if isinstance(r, FetchRecord)]


def shape(items: list[FetchRecord | LogProblem]) -> list[str | tuple[int, str]]:
    """Fetches by URL and problems by (number, code), in the order they came."""
    return [i.url if isinstance(i, FetchRecord) else (i.line, i.code) for i in items]


def write_lines(path: Path, lines: list[bytes | str], end: bytes = b"\n") -> Path:
    path.write_bytes(b"".join((x.encode() if isinstance(x, str) else x) + end for x in lines))
    return path


def jl(**fields: object) -> str:
    return json.dumps(fields)


# -- detect_format and the API ------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("crawl.jsonl", "jsonl"),
        ("/data/CRAWL.NDJSON", "jsonl"),
        ("fetches.json", "jsonl"),
        ("log.csv", "csv"),
        ("c.warc", "warc"),
        ("c-00001.warc.gz", "warc"),
        ("c.arc", None),
        ("c.arc.gz", None),
        ("crawl.jsonl.gz", None),
        ("-", None),
        ("crawl", None),
    ],
)
def test_detect_format_by_suffix(name, expected):
    assert detect_format(name) == expected
    assert expected is None or expected in FORMATS


def test_an_unknown_format_is_refused_at_once():
    with pytest.raises(ValueError, match="unknown crawl log format"):
        read_crawl_log(io.BytesIO(b""), "xml")


@pytest.mark.parametrize("options", [{"max_body": -1}, {"max_line": 0}])
def test_caps_must_make_sense(options):
    with pytest.raises(ValueError, match="max_body"):
        read_crawl_log(io.BytesIO(b""), "jsonl", **options)


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_empty_file_gives_nothing(tmp_path, fmt):
    assert read(write_lines(tmp_path / "empty", []), fmt) == []


# -- JSON Lines -----------------------------------------------------------------------


def test_jsonl_fields_times_and_statuses(tmp_path):
    path = write_lines(
        tmp_path / "crawl.jsonl",
        [
            jl(url="https://example.com/a", fetched_at="2026-11-02T08:30:00Z", status=200),
            jl(url="https://example.com/b", fetched_at="2026-11-02T10:30:00+02:00", status="304"),
            jl(url="https://example.com/c", fetched_at="2026-11-02T08:30:00", status=None),
            jl(url="https://example.com/d", fetched_at=1793608200),
            jl(url="https://example.com/e", fetched_at=1793608200.25, status=200.0),
            jl(url="https://example.com/f", fetched_at="1793608200", status=""),
            jl(url="  HTTP://EXAMPLE.COM/g ", fetched_at="2026-11-02", status=" 404 "),
        ],
    )
    items = read(path, "jsonl")
    assert [(r.url, r.fetched_at, r.status) for r in items] == [
        ("https://example.com/a", WHEN, 200),
        ("https://example.com/b", WHEN, 304),
        ("https://example.com/c", WHEN, None),  # a naive time is UTC
        ("https://example.com/d", WHEN, None),
        ("https://example.com/e", datetime(2026, 11, 2, 8, 30, 0, 250000, tzinfo=UTC), 200),
        ("https://example.com/f", WHEN, None),
        ("HTTP://EXAMPLE.COM/g", utc(2026, 11, 2), 404),
    ]
    assert all(r.fetched_at.tzinfo is UTC for r in items if isinstance(r, FetchRecord))
    assert all(r.body is None and r.content_hash is None for r in items)


def test_jsonl_content_hash_and_its_aliases(tmp_path):
    base = {"url": "https://example.com/", "fetched_at": DATE}
    path = write_lines(
        tmp_path / "crawl.jsonl",
        [
            json.dumps({**base, "content_hash": "c1", "sha1": "s1"}),
            json.dumps({**base, "content_hash": "", "sha1": " s1 "}),
            json.dumps({**base, "hash": "h"}),
            json.dumps({**base, "digest": "sha1:D"}),
            json.dumps({**base, "sha256": "s256"}),
            json.dumps({**base, "etag": '"e"'}),  # a validator, not a content hash
            json.dumps({**base, "hash": 12345}),
            json.dumps({**base, "hash": ["x"]}),
            json.dumps({**base, "body": "<html>", "headers": {"etag": "x"}}),  # not read
        ],
    )
    items = read(path, "jsonl")
    assert [getattr(r, "content_hash", None) for r in items] == [
        "c1",
        "s1",
        "h",
        "sha1:D",
        "s256",
        None,
        "12345",
        None,
        None,
    ]
    assert problems(items) == [(8, "bad-row")]
    assert all(r.body is None and r.headers == {} for r in items if isinstance(r, FetchRecord))


def test_jsonl_every_malformed_line_is_named_and_the_rest_kept(tmp_path):
    good = [jl(url=f"https://example.com/{n}", fetched_at=DATE, status=200) for n in range(6)]
    lines = [
        good[0],  # 1
        '{"url": "https://example.com/x", "fetched_at": ',  # 2 bad-json
        "",  # 3 blank: skipped silently
        '["https://example.com/", "2026-11-02"]',  # 4 bad-row
        jl(fetched_at=DATE),  # 5 missing-field (url)
        jl(url="https://example.com/x", fetched_at=None),  # 6 missing-field (fetched_at)
        good[1],  # 7
        jl(url="ftp://example.com/x", fetched_at=DATE),  # 8 bad-url
        jl(url="/relative/path", fetched_at=DATE),  # 9 bad-url
        jl(url="https://example.com/x", fetched_at="last tuesday"),  # 10 bad-time
        jl(url="https://example.com/x", fetched_at=DATE, status=700),  # 11 bad-status
        jl(url="https://example.com/x", fetched_at=DATE, status="OK"),  # 12 bad-status
        b'{"url": "https://example.com/\xff", "fetched_at": "2026-11-02"}',  # 13 not UTF-8
        jl(url="https://example.com/" + "x" * 300, fetched_at=DATE),  # 14 line-too-long
        "   \t ",  # 15 blank
        good[2],  # 16
        "42",  # 17 bad-row
        good[3],  # 18
    ]
    path = write_lines(tmp_path / "crawl.jsonl", lines)
    path.write_bytes(path.read_bytes() + good[4].encode())  # 19: no newline at the end
    items = read(path, "jsonl", max_line=200)
    assert shape(items) == [
        "https://example.com/0",
        (2, "bad-json"),
        (4, "bad-row"),
        (5, "missing-field"),
        (6, "missing-field"),
        "https://example.com/1",
        (8, "bad-url"),
        (9, "bad-url"),
        (10, "bad-time"),
        (11, "bad-status"),
        (12, "bad-status"),
        (13, "bad-json"),
        (14, "line-too-long"),
        "https://example.com/2",
        (17, "bad-row"),
        "https://example.com/3",
        "https://example.com/4",
    ]
    details = {p.line: p.detail for p in items if isinstance(p, LogProblem)}
    assert "not UTF-8" in details[13]
    assert "url" in details[5] and "fetched_at" in details[6]


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"url": "http://", "fetched_at": DATE}, "bad-url"),
        ({"url": "https://exa mple.com/", "fetched_at": DATE}, "bad-url"),
        ({"url": "https://example.com:99999/", "fetched_at": DATE}, "bad-url"),
        ({"url": "https://[::1/", "fetched_at": DATE}, "bad-url"),
        ({"url": 17, "fetched_at": DATE}, "bad-url"),
        ({"url": "", "fetched_at": DATE}, "missing-field"),
        ({"url": "https://example.com/", "fetched_at": "  "}, "missing-field"),
        ({"url": "https://example.com/", "fetched_at": 1793608200000}, "bad-time"),  # ms
        ({"url": "https://example.com/", "fetched_at": -5}, "bad-time"),
        ({"url": "https://example.com/", "fetched_at": True}, "bad-time"),
        ({"url": "https://example.com/", "fetched_at": {"t": 1}}, "bad-time"),
        ({"url": "https://example.com/", "fetched_at": "2026-13-01T00:00:00Z"}, "bad-time"),
        ({"url": "https://example.com/", "fetched_at": DATE, "status": 0}, "bad-status"),
        ({"url": "https://example.com/", "fetched_at": DATE, "status": -1}, "bad-status"),
        ({"url": "https://example.com/", "fetched_at": DATE, "status": True}, "bad-status"),
        ({"url": "https://example.com/", "fetched_at": DATE, "status": 200.5}, "bad-status"),
    ],
)
def test_jsonl_a_value_that_cannot_be_used(tmp_path, fields, code):
    line = json.dumps(fields)
    items = read(write_lines(tmp_path / "c.jsonl", [line]), "jsonl")
    assert problems(items) == [(1, code)]


def test_jsonl_nan_time_and_deep_nesting(tmp_path):
    lines = ['{"url": "https://example.com/", "fetched_at": NaN}', "[" * 100_000]
    items = read(write_lines(tmp_path / "c.jsonl", lines), "jsonl")
    assert problems(items) == [(1, "bad-time"), (2, "bad-json")]


def test_jsonl_line_over_the_default_cap_is_skipped(tmp_path):
    long = jl(url="https://example.com/long", fetched_at=DATE, pad="x" * (1024 * 1024))
    lines = [jl(url="https://example.com/1", fetched_at=DATE), long]
    lines.append(jl(url="https://example.com/3", fetched_at=DATE))
    items = read(write_lines(tmp_path / "c.jsonl", lines), "jsonl")
    assert shape(items) == ["https://example.com/1", (2, "line-too-long"), "https://example.com/3"]


def test_jsonl_bom_and_crlf(tmp_path):
    lines = [jl(url="https://example.com/1", fetched_at=DATE)]
    lines.append(jl(url="https://example.com/2", fetched_at=DATE))
    path = write_lines(tmp_path / "c.jsonl", lines, end=b"\r\n")
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert urls(read(path, "jsonl")) == ["https://example.com/1", "https://example.com/2"]


_GOOD = st.builds(
    lambda n, t, s: ("good", {"url": f"https://example.com/p/{n}", "fetched_at": t, "status": s}),
    st.integers(0, 10**6),
    st.sampled_from([DATE, "2026-11-02T09:30:00+01:00", "2026-11-02T08:30:00", 1793608200]),
    st.sampled_from([200, 301, 404, None, "503"]),
)
_BAD = st.sampled_from(
    [
        ("bad-json", '{"url": '),
        ("bad-json", "not json at all"),
        ("bad-row", "[1, 2]"),
        ("bad-row", '"a string"'),
        ("missing-field", '{"fetched_at": "2026-11-02"}'),
        ("bad-url", '{"url": "mailto:a@b", "fetched_at": "2026-11-02"}'),
        ("bad-time", '{"url": "https://example.com/", "fetched_at": "soon"}'),
        ("bad-status", '{"url": "https://example.com/", "fetched_at": 0, "status": 99}'),
    ]
)
_BLANK = st.sampled_from([("blank", ""), ("blank", "  ")])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(_GOOD, _BAD, _BLANK), max_size=40))
def test_jsonl_yields_exactly_the_good_lines_and_one_problem_per_bad_line(entries):
    text = "".join((json.dumps(v) if kind == "good" else v) + "\n" for kind, v in entries)
    items = list(read_crawl_log(io.BytesIO(text.encode()), "jsonl"))
    expected = [
        value["url"] if kind == "good" else (number, kind)
        for number, (kind, value) in enumerate(entries, 1)
        if kind != "blank"
    ]
    assert shape(items) == expected  # every good line, one problem a bad one, in order


# -- CSV ------------------------------------------------------------------------------


def test_csv_header_bom_quoted_newline_and_crlf(tmp_path):
    text = (
        "\ufeff URL ,Fetched_At,status,title,SHA256\r\n"
        "https://example.com/a,2026-11-02T08:30:00Z,200,plain,aa\r\n"
        'https://example.com/b,1793608200,,"two\r\nlines",\r\n'
        'https://example.com/c,2026-11-02 08:30:00,301.0,"quoted, comma",cc\r\n'
    )
    path = tmp_path / "crawl.csv"
    path.write_bytes(text.encode())
    items = read(path, "csv")
    assert [(r.url, r.fetched_at, r.status, r.content_hash) for r in items] == [
        ("https://example.com/a", WHEN, 200, "aa"),
        ("https://example.com/b", WHEN, None, None),
        ("https://example.com/c", WHEN, 301, "cc"),
    ]


def test_csv_every_malformed_row_is_named_by_the_line_it_starts_on(tmp_path):
    rows = [
        b"url,fetched_at,status,note",  # 1
        b"https://example.com/0,2026-11-02T08:30:00Z,200,ok",  # 2
        b'https://example.com/x,2026-11-02T08:30:00Z,200,"a note',  # 3 (a row of 3 lines,
        b"over three",  # 4  too many fields)
        b'lines",extra',  # 5
        b"https://example.com/1,2026-11-02T08:30:00Z,200,ok",  # 6
        b"",  # 7 blank
        b"https://example.com/x,2026-11-02T08:30:00Z",  # 8 bad-row: too few fields
        b",2026-11-02T08:30:00Z,200,ok",  # 9 missing-field
        b"https://example.com/x,,200,ok",  # 10 missing-field
        b"example.com/x,2026-11-02T08:30:00Z,200,ok",  # 11 bad-url
        b"https://example.com/x,02/11/2026,200,ok",  # 12 bad-time
        b"https://example.com/x,2026-11-02T08:30:00Z,2000,ok",  # 13 bad-status
        b"https://example.com/x,2026-11-02T08:30:00Z,200,caf\xe9",  # 14 bad-row: not UTF-8
        b"https://example.com/x,2026-11-02T08:30:00Z,200," + b"x" * 300,  # 15 line-too-long
        b'https://example.com/2,2026-11-02T08:30:00Z,200,"a quoted',  # 16 a good row of
        b'newline"',  # 17  two lines
        b"https://example.com/3,2026-11-02T08:30:00Z,200,ok",  # 18
    ]
    items = read(write_lines(tmp_path / "c.csv", rows), "csv", max_line=200)
    assert shape(items) == [
        "https://example.com/0",
        (3, "bad-row"),
        "https://example.com/1",
        (8, "bad-row"),
        (9, "missing-field"),
        (10, "missing-field"),
        (11, "bad-url"),
        (12, "bad-time"),
        (13, "bad-status"),
        (14, "bad-row"),
        (15, "line-too-long"),
        "https://example.com/2",
        "https://example.com/3",
    ]


def test_csv_a_field_over_csv_s_limit_is_a_bad_row(tmp_path):
    rows = [
        "url,fetched_at,note",
        f'https://example.com/x,{DATE},"{"x" * 200_000}"',
        f"https://example.com/2,{DATE},ok",
    ]
    items = read(write_lines(tmp_path / "c.csv", rows), "csv")
    assert shape(items) == [(2, "bad-row"), "https://example.com/2"]


def test_csv_without_a_url_or_time_column_is_one_problem(tmp_path):
    rows = [f"https://example.com/{n},{DATE}" for n in range(5)]  # no header row
    items = read(write_lines(tmp_path / "c.csv", rows), "csv")
    assert problems(items) == [(1, "missing-field")]
    assert len(items) == 1


def test_csv_an_unreadable_header_is_the_only_problem(tmp_path):
    rows = ["url,fetched_at," + "x" * 300, f"https://example.com/1,{DATE},"]
    items = read(write_lines(tmp_path / "c.csv", rows), "csv", max_line=200)
    assert problems(items) == [(1, "line-too-long")] and len(items) == 1


def test_csv_header_blank_lines_before_and_no_rows(tmp_path):
    items = read(write_lines(tmp_path / "c.csv", ["", "url,fetched_at"]), "csv")
    assert items == []


# -- WARC -----------------------------------------------------------------------------

BUILD = RecordBuilder()


def http(status: str = "200 OK", headers: list[tuple[str, str]] | None = None):
    return StatusAndHeaders(status, headers or [("Content-Type", "text/html")], "HTTP/1.1")


def response(url: str, body: bytes = PAGE, *, date: str = DATE, headers=None, status="200 OK"):
    return BUILD.create_warc_record(
        url,
        "response",
        payload=io.BytesIO(body),
        length=len(body),  # else warcio spools the payload to a temp file it leaves open
        http_headers=http(status, headers),
        warc_headers_dict={"WARC-Date": date},
    )


def serialized(record, gz: bool) -> bytes:
    buf = io.BytesIO()
    WARCWriter(buf, gzip=gz).write_record(record)
    return buf.getvalue()


def write_warc(path: Path, records: list, gz: bool) -> list[bytes]:
    """The records written one after another (each its own gzip member when gz); their bytes."""
    parts = [r if isinstance(r, bytes) else serialized(r, gz) for r in records]
    path.write_bytes(b"".join(parts))
    return parts


def digest_of(part: bytes) -> str:
    raw = gzip.decompress(part) if part[:2] == b"\x1f\x8b" else part
    line = next(x for x in raw.split(b"\r\n") if x.startswith(b"WARC-Payload-Digest:"))
    return line.split(b":", 1)[1].strip().decode()


def mixed_records() -> list:
    request = BUILD.create_warc_record(
        "http://example.com/a",
        "request",
        http_headers=StatusAndHeaders(
            "GET /a HTTP/1.1", [("Host", "example.com")], is_http_request=True
        ),
    )
    dns = BUILD.create_warc_record(
        "dns:example.com",
        "response",
        payload=io.BytesIO(DNS),
        length=len(DNS),
        warc_content_type="text/dns",
    )
    meta = BUILD.create_warc_record(
        "http://example.com/a",
        "metadata",
        payload=io.BytesIO(b"outlinks: 3\n"),
        length=12,
        warc_content_type="application/warc-fields",
    )
    resource = BUILD.create_warc_record(
        "http://example.com/shot.png",
        "resource",
        payload=io.BytesIO(b"\x89PNG..."),
        length=7,
        warc_content_type="image/png",
    )
    return [
        BUILD.create_warcinfo_record("crawl.warc", {"software": "test"}),  # 1
        request,  # 2
        response(  # 3
            "http://example.com/a",
            headers=[("Content-Type", "text/html"), ("Set-Cookie", "a=1"), ("set-cookie", "b=2")],
        ),
        response("https://example.com/big", b"B" * 3000),  # 4: over max_body
        meta,  # 5
        None,  # 6: the revisit of 3, made once its digest is known
        resource,  # 7
        dns,  # 8
        response(  # 9: a sitemap is just a fetch
            "https://example.com/sitemap.xml.gz",
            gzip.compress(b"<urlset/>"),
            headers=[("Content-Type", "application/x-gzip")],
        ),
        BUILD.create_revisit_record(  # 10: a revisit with no HTTP headers
            "https://example.com/big",
            "sha1:BIG",
            "https://example.com/big",
            DATE,
        ),
    ]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_warc_responses_and_revisits_are_fetches_the_rest_passed_over(tmp_path, gz):
    records = mixed_records()
    first = serialized(records[2], gz)
    records[2] = first
    records[5] = BUILD.create_revisit_record(
        "http://example.com/a",
        digest_of(first),
        "http://example.com/a",
        DATE,
        http_headers=http("200 OK", [("Content-Type", "text/html"), ("ETag", '"v1"')]),
        warc_headers_dict={"WARC-Date": "2026-11-03T08:30:00Z"},
    )
    path = tmp_path / ("c.warc.gz" if gz else "c.warc")
    write_warc(path, records, gz)
    items = read(path, "warc", max_body=2000)
    assert problems(items) == []
    a, big, again, sitemap, revisit = items
    assert (a.url, a.fetched_at, a.status, a.body, a.truncated) == (
        "http://example.com/a",
        WHEN,
        200,
        PAGE,
        False,
    )
    assert a.headers == {"Content-Type": "text/html", "Set-Cookie": "a=1, b=2"}
    assert a.content_hash == digest_of(first) and a.content_hash.startswith("sha1:")
    assert (big.url, big.body, big.truncated) == ("https://example.com/big", b"B" * 2000, True)
    assert (again.url, again.status, again.body) == ("http://example.com/a", 200, None)
    assert again.content_hash == a.content_hash  # unchanged
    assert again.fetched_at == utc(2026, 11, 3, 8, 30)
    assert again.headers == {"Content-Type": "text/html", "ETag": '"v1"'}
    assert sitemap.url.endswith("sitemap.xml.gz") and sitemap.body == b"<urlset/>"
    assert (revisit.status, revisit.body, revisit.content_hash) == (None, None, "sha1:BIG")


def test_warc_gzip_members_bigger_than_a_read(tmp_path):
    bodies = [bytes(range(256)) * n for n in (1, 400, 3, 800)]  # up to 200 KiB
    records = [response(f"https://example.com/{n}", b) for n, b in enumerate(bodies)]
    write_warc(tmp_path / "c.warc.gz", records, gz=True)
    items = read(tmp_path / "c.warc.gz", "warc")
    assert [r.body for r in items] == bodies


def test_warc_1_1_and_a_whole_file_gzip(tmp_path):
    build = RecordBuilder(warc_version="1.1")
    record = build.create_warc_record(
        "https://example.com/",
        "response",
        payload=io.BytesIO(PAGE),
        length=len(PAGE),
        http_headers=http(),
        warc_headers_dict={"WARC-Date": "2026-11-02T08:30:00.123456Z"},
    )
    plain = serialized(record, False)
    assert plain.startswith(b"WARC/1.1")
    second = serialized(response("https://example.com/2"), False)
    (tmp_path / "c.warc.gz").write_bytes(gzip.compress(plain + second))
    items = read(tmp_path / "c.warc.gz", "warc")
    assert urls(items) == ["https://example.com/", "https://example.com/2"]
    assert items[0].fetched_at == datetime(2026, 11, 2, 8, 30, 0, 123456, tzinfo=UTC)


def chunked(data: bytes, size: int = 100) -> bytes:
    pieces = [data[i : i + size] for i in range(0, len(data), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


def test_warc_body_decoded_as_a_browser_sees_it(tmp_path):
    te = ("Transfer-Encoding", "chunked")
    ce = ("Content-Encoding", "gzip")
    records = [
        response("https://example.com/gz", gzip.compress(PAGE), headers=[ce]),
        response("https://example.com/chunked", chunked(PAGE), headers=[te]),
        response("https://example.com/both", chunked(gzip.compress(PAGE)), headers=[te, ce]),
        response("https://example.com/stored-dechunked", PAGE, headers=[te]),
        response("https://example.com/broken-chunks", chunked(PAGE)[:150] + b"zz", headers=[te]),
        response(
            "https://example.com/bad-size",
            chunked(PAGE).replace(b"\r\n64\r\n", b"\r\nzz\r\n"),
            headers=[te],
        ),
        response("https://example.com/br", b"\x1b\x03brotli", headers=[("Content-Encoding", "br")]),
        response(
            "https://example.com/broken-gzip", gzip.compress(PAGE)[:40] + b"x" * 40, headers=[ce]
        ),
        response("https://example.com/bomb", gzip.compress(b"\0" * 20_000_000), headers=[ce]),
    ]
    write_warc(tmp_path / "c.warc", records, gz=False)
    items = read(tmp_path / "c.warc", "warc", max_body=1_000_000)
    assert problems(items) == []
    bodies = {r.url.rsplit("/", 1)[1]: (r.body, r.truncated) for r in items}
    assert bodies == {
        "gz": (PAGE, False),
        "chunked": (PAGE, False),
        "both": (PAGE, False),
        "stored-dechunked": (PAGE, False),
        "broken-chunks": (None, False),  # judged on the digest
        "bad-size": (None, False),
        "br": (None, False),
        "broken-gzip": (None, False),
        "bomb": (b"\0" * 1_000_000, True),
    }
    assert all(r.content_hash for r in items)


def test_warc_fetch_fields_that_cannot_be_used(tmp_path):
    records = [
        response("https://example.com/1"),  # 1
        response("https://example.com/x", date="the day before"),  # 2 bad-time
        response("https://example.com/x", status="999 Odd"),  # 3 bad-status
        response("http:///no-host"),  # 4 bad-url
        response("https://example.com/x"),  # 5: its URI taken out below
        raw_record(b"WARC-Type: response", b"just text, no HTTP"),  # 6
        raw_record(b"X-Type: response", b"HTTP/1.1 200 OK\r\n\r\n"),  # 7: no WARC-Type
        raw_record(b"WARC-Type: response", b""),  # 8: an empty block
        raw_record(b"WARC-Type: response", OK, date=None),  # 9
        response("https://example.com/10"),  # 10
    ]
    parts = write_warc(tmp_path / "c.warc", records, gz=False)
    parts[4] = parts[4].replace(b"WARC-Target-URI: https://example.com/x", b"X-Target: none")
    items = read(write_parts(tmp_path, parts), "warc")
    assert shape(items) == [
        "https://example.com/1",
        (2, "bad-time"),
        (3, "bad-status"),
        (4, "bad-url"),
        (5, "missing-field"),
        (6, "bad-record"),
        (7, "bad-record"),
        (8, "bad-record"),
        (9, "missing-field"),
        "https://example.com/10",
    ]


OK = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nok"


def raw_record(kind: bytes, block: bytes, *, date: str | None = DATE) -> bytes:
    """A WARC record written by hand, as warcio's writer would refuse to."""
    head = [b"WARC/1.0", kind, b"WARC-Target-URI: https://example.com/raw"]
    head += [b"WARC-Date: " + date.encode()] if date else []
    head += [b"Content-Length: %d" % len(block)]
    return b"\r\n".join(head) + b"\r\n\r\n" + block + b"\r\n\r\n"


def three(tmp_path: Path, gz: bool) -> list[bytes]:
    records = [response(f"https://example.com/{n}", PAGE * (n + 1)) for n in (1, 2, 3)]
    return write_warc(tmp_path / "c.warc", records, gz)


def write_parts(tmp_path: Path, parts: list[bytes]) -> Path:
    path = tmp_path / "damaged.warc"
    path.write_bytes(b"".join(parts))
    return path


ONE, TWO, THREE = (f"https://example.com/{n}" for n in (1, 2, 3))


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda p: p.replace(b"WARC/1.0", b"WXRC/1.0", 1), [ONE, (2, "bad-record"), THREE]),
        (lambda p: p.replace(b"WARC/1.0", b"WARC/9.0", 1), [ONE, (2, "bad-record"), THREE]),
        (lambda p: _length(p, -10), [ONE, (2, "bad-record"), THREE]),
        (lambda p: _length(p, +40), [ONE, (2, "bad-record")]),  # swallowed 3's start
        (lambda p: _set_length(p, b"12ab"), [ONE, (2, "bad-record"), THREE]),
        (lambda p: _set_length(p, None), [ONE, (2, "bad-record"), THREE]),
        (
            lambda p: p.replace(b"\r\n", b"\r\n" + b"X-Pad: yes\r\n" * 120_000, 1),
            [ONE, (2, "bad-record"), THREE],
        ),  # a header block over the budget
    ],
    ids=[
        "not-warc",
        "version",
        "length-short",
        "length-long",
        "length-text",
        "no-length",
        "endless-headers",
    ],
)
def test_warc_damaged_record_is_named_and_reading_resyncs(tmp_path, damage, expected):
    parts = three(tmp_path, gz=False)
    path = write_parts(tmp_path, [parts[0], damage(parts[1]), parts[2]])
    assert shape(read(path, "warc")) == expected


def _length(part: bytes, by: int) -> bytes:
    head, rest = part.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    for i, line in enumerate(lines):
        if line.startswith(b"Content-Length:"):
            lines[i] = b"Content-Length: %d" % (int(line.split(b":")[1]) + by)
    return b"\r\n".join(lines) + b"\r\n\r\n" + rest


def _set_length(part: bytes, value: bytes | None) -> bytes:
    head, rest = part.split(b"\r\n\r\n", 1)
    lines = [x for x in head.split(b"\r\n") if value is not None or b"Content-Length" not in x]
    lines = [b"Content-Length: " + value if b"Content-Length" in x else x for x in lines]
    return b"\r\n".join(lines) + b"\r\n\r\n" + rest


def test_warc_first_record_damaged_and_a_file_that_is_no_warc(tmp_path):
    parts = three(tmp_path, gz=False)
    path = write_parts(tmp_path, [b"garbage before\r\n", *parts])
    assert shape(read(path, "warc")) == [(1, "bad-record"), ONE, TWO, THREE]
    lines = [jl(url=f"https://example.com/{n}", fetched_at=DATE) for n in range(3)]
    assert problems(read(write_lines(tmp_path / "c.jsonl", lines), "warc")) == [(1, "bad-record")]


def _flip(data: bytes, start: int, count: int) -> bytes:
    damaged = bytearray(data)
    for i in range(start, start + count):
        damaged[i] ^= 0x55
    return bytes(damaged)


@pytest.mark.parametrize(
    "damage",
    [
        lambda m: _flip(m, len(m) // 2, 40),  # inside the deflate stream
        lambda m: _flip(m, 0, 3),  # the member's own gzip header
        lambda m: m[: len(m) // 2],  # cut short, the next member right after
        lambda m: m[:-6] + _flip(m[-6:], 0, 2),  # the CRC at its end
    ],
    ids=["deflate", "header", "cut-member", "crc"],
)
def test_warc_broken_gzip_member_is_named_and_the_next_member_read(tmp_path, damage):
    parts = three(tmp_path, gz=True)
    path = write_parts(tmp_path, [parts[0], damage(parts[1]), parts[2]])
    assert shape(read(path, "warc")) == [ONE, (2, "bad-record"), THREE]


def test_warc_the_last_member_broken_or_two_in_a_row(tmp_path):
    parts = three(tmp_path, gz=True)
    path = write_parts(tmp_path, [parts[0], parts[1], _flip(parts[2], len(parts[2]) // 2, 40)])
    assert shape(read(path, "warc")) == [ONE, TWO, (3, "bad-record")]
    fourth = serialized(response("https://example.com/4"), True)
    broken = [_flip(p, len(p) // 2, 40) for p in parts[1:]]
    path = write_parts(tmp_path, [parts[0], *broken, fourth])
    # the damage runs on to the next good member: one problem, then the record found
    assert shape(read(path, "warc")) == [ONE, (2, "bad-record"), "https://example.com/4"]


def test_warc_a_stub_of_a_last_member(tmp_path):
    parts = three(tmp_path, gz=True)
    items = read(write_parts(tmp_path, [parts[0], parts[1], parts[2][:5]]), "warc")
    assert shape(items) == [ONE, TWO, (3, "truncated-file")]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("where", [0.3, 0.7, 0.99])
def test_warc_cut_short_ends_with_truncated_file(tmp_path, gz, where):
    parts = three(tmp_path, gz)
    last = parts[2][: int(len(parts[2]) * where)]
    items = read(write_parts(tmp_path, [parts[0], parts[1], last]), "warc")
    assert shape(items) == [ONE, TWO, (3, "truncated-file")]


def test_warc_cut_inside_the_headers(tmp_path):
    parts = three(tmp_path, gz=False)
    last = parts[2][: parts[2].index(b"Content-Type")]
    items = read(write_parts(tmp_path, [parts[0], parts[1], last]), "warc")
    assert shape(items) == [ONE, TWO, (3, "truncated-file")]


def test_warc_reads_from_a_pipe_like_stream(tmp_path):
    parts = three(tmp_path, gz=True)

    class Pipe(io.RawIOBase):  # no seek, no tell, short reads
        def __init__(self, data: bytes) -> None:
            self._data = data

        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:  # type: ignore[override]
            n = min(len(buffer), 777, len(self._data))
            buffer[:n], self._data = self._data[:n], self._data[n:]
            return n

    with io.BufferedReader(Pipe(b"".join(parts))) as stream:
        assert urls(list(read_crawl_log(stream, "warc"))) == [ONE, TWO, THREE]
