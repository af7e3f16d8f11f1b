"""The crawl log readers: JSON Lines and CSV files into fetches and named problems.

Every file is written into tmp_path and read back; each malformed line is named with its
number and code, and everything good around it comes out, in order.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
