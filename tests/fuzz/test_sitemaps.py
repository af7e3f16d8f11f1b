"""Fuzzing the walker's reader (auditor/walker/formats.py) and the bodies that feed it.

Properties, for every kind of sitemap (urlset, index, news, RSS, Atom, text) in
every encoding it may come in:

- a well-formed file reads back exactly what it means, however its bytes are
  cut into chunks and however many gzip members carry them;
- chunk boundaries never change what is read, even of a broken file;
- a file cut anywhere keeps every record completed before the cut, and a loss
  is always named;
- DTDs, entities and external references are refused, never expanded;
- any bytes at all end in records and named problems, never an exception;
- a compression bomb stops at the cap, in bounded memory, keeping what came before.
"""

from __future__ import annotations

import gzip
import itertools
import re
import tracemalloc
import zlib
from dataclasses import replace

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from auditor.http.body import Body
from auditor.models import PROBLEM_CODES
from auditor.walker.extensions import RecordExtras
from auditor.walker.formats import FORMAT_KINDS, SitemapReader
from tests.fuzz.budget import fuzz
from tests.fuzz.mutations import mutated
from tests.fuzz.sitemaps import (
    ENCODINGS,
    KINDS,
    SPELLINGS,
    Sitemap,
    chunk,
    chunkings,
    encode,
    encoded_sitemaps,
    expected,
    gzip_members,
    gzip_pieces,
    normal,
    read,
    render,
    sitemaps,
    split,
)

MiB = 1024 * 1024
_BODY_CODES = {"too-large", "timeout", "not-well-formed", "http-error", "unsupported-encoding"}
_RECORD_ENDS = {
    "urlset": ("</url>", "</sm:url>"),
    "sitemapindex": ("</sitemap>", "</sm:sitemap>"),
    "rss": ("</item>",),
    "atom": ("</entry>",),
}


def read_body(body: Body) -> tuple[list, list[tuple[str, str]], str | None]:
    reader = SitemapReader()
    records = [r for batch in reader.batches(body) for r in batch]
    return records, reader.problems, reader.kind


def assert_named(problems: list[tuple[str, str]]) -> None:
    for code, detail in problems:
        assert code in PROBLEM_CODES, code
        assert isinstance(detail, str) and detail


# -- well-formed files read back exactly -------------------------------------------------------


@fuzz(120)
@given(encoded_sitemaps(), chunkings(), st.none() | st.lists(st.integers(0, 1 << 16), max_size=3))
def test_a_well_formed_file_reads_back_exactly_however_it_arrives(case, how, members):
    sitemap, data = case
    if members is not None:
        data = gzip_members(data, members)
    body = Body(iter(chunk(data, how)))
    records, problems, kind = read_body(body)
    assert body.problem is None
    assert problems == []
    assert kind == sitemap.kind
    assert normal(records) == normal(expected(sitemap))


# -- chunk boundaries change nothing -----------------------------------------------------------


@st.composite
def misdeclared_files(draw: st.DrawFn) -> bytes:
    """A file in one encoding whose declaration (or BOM) names another."""
    actual = draw(st.sampled_from(sorted(ENCODINGS)))
    declared = draw(st.sampled_from(sorted(ENCODINGS)).filter(lambda e: e != actual))
    sitemap = draw(sitemaps(kinds=("urlset", "rss", "atom"), extra=ENCODINGS[actual]))
    text = render(sitemap)
    head = f'<?xml version="1.0" encoding="{SPELLINGS[declared][0]}"?>\n'
    bom = draw(st.sampled_from([b"", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"]))
    codec = actual.replace("utf-8-sig", "utf-8")
    return bom + (head + text).encode(codec)


@st.composite
def broken_files(draw: st.DrawFn) -> bytes:
    if draw(st.integers(0, 3)) == 0:
        return draw(misdeclared_files())
    _, data = draw(encoded_sitemaps())
    return draw(mutated(data))


# Found by this property: a UTF-8 BOM or an XML declaration split across the first
# chunks made the reader take an XML file for a text file, or miss its declared
# encoding (the plain regression tests are in test_regressions.py).
@example(b"\xef\xbb\xbf<urlset/>", [1])
@example(
    '<?xml version="1.0" encoding="Shift_JIS"?><urlset><url><loc>https://a/日本</loc></url>'
    "</urlset>".encode("shift_jis"),
    [12],
)
@fuzz(150)
@given(broken_files(), chunkings())
def test_chunk_boundaries_never_change_what_is_read(data, how):
    whole = read([data] if data else [])
    pieces = read(chunk(data, how))
    assert (pieces.kind, pieces.records, pieces.problems) == (
        whole.kind,
        whole.records,
        whole.problems,
    )


# -- a cut keeps what came before --------------------------------------------------------------


@fuzz(120)
@given(encoded_sitemaps(), st.integers(0, 1 << 16), chunkings())
def test_a_cut_keeps_every_record_completed_before_it_and_names_the_loss(case, cut, how):
    sitemap, data = case
    cut %= len(data) + 1
    result = read(chunk(data[:cut], how))
    want = expected(sitemap)
    assert_named(result.problems)
    if sitemap.kind == "text":  # no end marker: the last line may be cut, and that is all
        assert_text_prefix(result.records, want)
        return
    assert normal(result.records) == normal(want)[: len(result.records)]
    encoding = _encoding_of(data)
    text = data[:cut].decode(encoding, errors="ignore") if encoding else ""
    if encoding:
        completed = sum(text.count(end) for end in _RECORD_ENDS[sitemap.kind])
        assert len(result.records) >= completed
    if normal(result.records) != normal(want):
        assert result.problems, "entries were lost without a problem"


def assert_text_prefix(records: list, want: list) -> None:
    """Text records: the expected ones, the last possibly cut (mid-character too)."""
    assert records[:-1] == want[: max(len(records) - 1, 0)]
    if records:
        last = records[-1][0]
        assert last is not None and want[len(records) - 1][0].startswith(last.rstrip("\ufffd"))


def _encoding_of(data: bytes) -> str | None:
    """The encoding of a generated file, from its BOM or declaration (None: not sure)."""
    if data.startswith(b"\xff\xfe"):
        return "utf-16-le"
    if data.startswith(b"\xfe\xff"):
        return "utf-16-be"
    head = data[:120].decode("latin-1")
    for name in ENCODINGS:
        for spelling in (name, name.upper()):
            if f'encoding="{spelling}"' in head:
                return name
    return "utf-8" if 'encoding="' not in head else None


# -- hostile XML is refused, never expanded ----------------------------------------------------

MARK = "FUZZMARK"
HOSTILE_DTDS = (
    f'<!DOCTYPE urlset [<!ENTITY x "{MARK}">]>',
    '<!DOCTYPE urlset [<!ENTITY x SYSTEM "http://127.0.0.1:9/x.xml">]>',
    '<!DOCTYPE urlset [<!ENTITY % p SYSTEM "http://127.0.0.1:9/p.dtd"> %p;]>',
    '<!DOCTYPE urlset SYSTEM "http://127.0.0.1:9/sitemap.dtd">',
    '<!DOCTYPE urlset PUBLIC "-//X//DTD X//EN" "file:///etc/passwd">',
    '<!DOCTYPE urlset [<!ENTITY x "&y;&y;&y;&y;"><!ENTITY y "' + MARK + '">]>',
    '<!DOCTYPE html [<!ENTITY x "' + MARK + '">]>',
    f'<!DOCTYPE urlset [<!ENTITY x SYSTEM "p.png" NDATA png><!ENTITY z "{MARK}">]>',
)


@st.composite
def sitemaps_in(draw: st.DrawFn, encodings: list[str]) -> tuple[Sitemap, str]:
    encoding = draw(st.sampled_from(encodings))
    kinds = ("urlset", "sitemapindex", "rss", "atom")
    return draw(sitemaps(kinds=kinds, extra=ENCODINGS[encoding])), encoding


@fuzz(80)
@given(
    sitemaps_in(["utf-8", "utf-16-le", "utf-16-be", "iso-8859-1"]),
    st.sampled_from(HOSTILE_DTDS),
    st.integers(0, 1 << 16),
    st.booleans(),
    chunkings(),
)
def test_dtds_and_entities_are_refused_never_expanded(case, dtd, at, front, how):
    sitemap, encoding = case
    body = _with_references(sitemap)
    spelling = {"utf-16-le": "UTF-16", "utf-16-be": "UTF-16"}.get(encoding, encoding)
    head = f'<?xml version="1.0" encoding="{spelling}"?>\n'
    if front:
        text = head + dtd + body
    else:  # after an end tag: in markup, not inside a value, a CDATA section or a comment
        ends = [m.end() for m in re.finditer(r"</[^>]+>", body)]
        at = ends[at % len(ends)]
        text = head + body[:at] + dtd + body[at:]
    data = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}.get(encoding, b"") + text.encode(
        encoding
    )
    result = read(chunk(data, how))
    assert not any(MARK in (field or "") for record in result.records for field in record)
    codes = [code for code, _ in result.problems]
    assert set(codes) & {"forbidden-xml", "not-well-formed", "not-a-sitemap"}, codes
    if front:
        assert "forbidden-xml" in codes or "not-a-sitemap" in codes
        assert result.records == []
    else:
        assert normal(result.records) == normal(expected(sitemap))[: len(result.records)]


def _with_references(sitemap: Sitemap) -> str:
    """The file with an ``&x;`` reference in its first value, so an expansion would show.

    Values are written as plain escaped text (no CDATA, no comments): a DTD placed inside
    either would be text, not markup.
    """
    style = replace(sitemap.style, cdata=False, comments=False)
    text = render(Sitemap(sitemap.kind, sitemap.entries, style))
    return text.replace("</loc>", "&x;</loc>", 1).replace("</link>", "&x;</link>", 1)


# -- any bytes at all --------------------------------------------------------------------------


@fuzz(150)
@given(st.one_of(st.binary(max_size=600), broken_files()), chunkings())
def test_any_bytes_end_in_records_and_named_problems(data, how):
    result = read(chunk(data, how))
    assert result.kind in (*FORMAT_KINDS, None)
    assert_named(result.problems)
    for record in result.records:
        assert len(record) == 3 and all(v is None or isinstance(v, str) for v in record[:2])
        assert record[2] is None or isinstance(record[2], str | RecordExtras)
    if result.kind is None:
        assert result.records == [] and result.problems


# -- gzip streams: members, cuts, garbage, bombs -----------------------------------------------


@fuzz(80)
@given(
    encoded_sitemaps(kinds=("urlset", "text", "rss")),
    st.lists(st.integers(0, 1 << 16), max_size=3),
    st.integers(0, 1 << 16),
    chunkings(),
)
def test_a_cut_gzip_stream_keeps_what_was_inflated_before_the_cut(case, members, cut, how):
    sitemap, plain = case
    pieces = gzip_pieces(plain, members)
    data = b"".join(pieces)
    cut %= len(data)  # always short of the end
    body = Body(iter(chunk(data[:cut], how)))
    records, problems, _kind = read_body(body)
    want = expected(sitemap)
    if sitemap.kind == "text":
        assert_text_prefix(records, want)
    else:
        assert normal(records) == normal(want)[: len(records)]
    member_ends = set(itertools.accumulate(len(p) for p in pieces))
    # A text file cut between members looks whole: nothing can tell.
    if sitemap.kind != "text" or cut not in member_ends:
        assert body.problem is not None or problems
    assert body.problem is None or body.problem[0] in _BODY_CODES


@pytest.mark.parametrize("chunks", [1, 2])
def test_a_gzip_stream_cut_one_byte_into_its_next_member_is_not_read_as_whole(chunks):
    first, second = gzip.compress(b"https://example.com/a\n"), gzip.compress(b"https://b/\n")
    data = first + second[:1]
    body = Body(iter(split(data, [len(first)]) if chunks == 2 else [data]))
    records, _problems, _kind = read_body(body)
    assert records == [("https://example.com/a", None, None)]
    assert body.problem is not None and body.problem[0] == "not-well-formed"


@fuzz(40)
@given(
    encoded_sitemaps(kinds=("urlset", "sitemapindex", "rss")),
    st.binary(min_size=1, max_size=40).filter(lambda b: not b.startswith(b"\x1f")),
    chunkings(),
)
def test_garbage_after_the_last_gzip_member_is_ignored(case, garbage, how):
    sitemap, plain = case
    body = Body(iter(chunk(gzip_members(plain, []) + garbage, how)))
    records, problems, _kind = read_body(body)
    assert (normal(records), problems, body.problem) == (normal(expected(sitemap)), [], None)


def bomb(head: bytes, filler: bytes, inflated: int, wbits: int) -> bytes:
    """A stream (gzip, zlib or raw deflate by ``wbits``) of ``head`` then ``filler`` repeated
    to about ``inflated`` bytes, built without ever holding the inflated bytes."""
    block = filler * max(1, 256 * 1024 // len(filler))
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    parts = [packer.compress(head), packer.flush(zlib.Z_FULL_FLUSH)]
    segment = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    # The repeated segment stands alone (full flush: no back-references across it), but a
    # trailer would need the real CRC: the stream ends without one, which the cap hits first.
    parts += [segment] * max(1, inflated // len(block))
    return b"".join(parts)


@fuzz(12)
@given(
    st.sampled_from([b" ", b"\n", b"<!-- x -->", b"<url><loc>https://example.com/a</loc></url>"]),
    st.sampled_from(["", "gzip", "x-gzip", "deflate", "deflate-raw", "gzip-in-gzip"]),
    st.integers(64 * 1024, MiB),
    chunkings(),
)
def test_a_compression_bomb_stops_at_the_cap_in_bounded_memory(filler, encoding, cap, how):
    head = b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    inflated = 8 * cap
    wbits = {"deflate": zlib.MAX_WBITS, "deflate-raw": -zlib.MAX_WBITS}.get(encoding, 31)
    data = bomb(head, filler, inflated, wbits)
    header = {"deflate-raw": "deflate", "": "", "gzip-in-gzip": "gzip"}.get(encoding, encoding)
    if encoding == "gzip-in-gzip":  # Content-Encoding: gzip around a .gz file: inflated twice
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        data = packer.compress(data) + packer.flush()
    pieces = chunk(data, how)
    tracemalloc.start()
    try:
        body = Body(iter(pieces), content_encoding=header, max_bytes=cap)
        reader = SitemapReader()
        count = sum(len(batch) for batch in reader.batches(body))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert body.problem is not None and body.problem[0] == "too-large"
    assert body.bytes_read == cap
    assert count <= cap // len(b"<url><loc>https://example.com/a</loc></url>") + 1
    # The records kept are a few hundred bytes of tuples each at worst; everything else is
    # streamed: generous margin over the cap, far under the inflated size.
    assert peak < 4 * cap + 8 * MiB, f"peak {peak:,} bytes for a {cap:,}-byte cap"


def test_every_kind_is_generated():
    """The generators reach every format kind (a guard on the strategies themselves)."""
    assert set(KINDS) == set(FORMAT_KINDS)
    assert encode(Sitemap("text", ()), "utf-8") == b""
