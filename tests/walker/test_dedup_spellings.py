"""URL deduplication by RFC 3986 6.2.2 and one spelling per host, and nothing more:
the entries and the JSONL writer count alike, the first spelling is the one kept."""

from __future__ import annotations

import io
import json
import string

from hypothesis import given
from hypothesis import strategies as st

from auditor.http.hosts import escapes, url_key
from auditor.walker import Walk
from auditor.walker.jsonl import write_walk_jsonl
from auditor.walker.pages import Pages
from auditor.walker.seen import dedup_keys
from tests.loopback import send


def _site(serve, locs: list[str]):
    server = serve(routes={})
    urls = "".join(
        f"<url><loc>{loc.format(o=server.origin).replace('&', '&amp;')}</loc></url>" for loc in locs
    )
    body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'.encode()
    server.routes["/sitemap.xml"] = lambda h: send(h, 200, body)
    return server


SPELLINGS = [
    "{o}/a~b",
    "{o}/a%7Eb",  # an unreserved character escaped: the same URL
    "{o}/a%7eb",
    "{o}/caf%c3%a9",
    "{o}/caf%C3%A9",  # escapes differing in case only: the same URL
    "{o}/A~b",  # path case: another URL
    "{o}/a~b/",  # a trailing slash: another URL
    "{o}/q?b=1&a=2",
    "{o}/q?a=2&b=1",  # query order: another URL
    "{o}/a%2Fb",  # an escaped reserved character: another URL than /a/b
    "{o}/a/b",
]


def test_spellings_of_one_url_are_one_and_nothing_more(serve):
    server = _site(serve, SPELLINGS)
    walk = Walk(server.url("/sitemap.xml"))
    locs = [entry.loc for entry in walk]
    o = server.origin
    assert locs == [
        f"{o}/a~b",
        f"{o}/caf%c3%a9",
        f"{o}/A~b",
        f"{o}/a~b/",
        f"{o}/q?b=1&a=2",
        f"{o}/q?a=2&b=1",
        f"{o}/a%2Fb",
        f"{o}/a/b",
    ]
    duplicates = [p for p in walk.problems if p.code == "duplicate-url"]
    assert len(duplicates) == 1 and duplicates[0].detail.startswith("3 ")


def test_the_jsonl_writer_deduplicates_alike(serve):
    server = _site(serve, SPELLINGS)
    out = io.StringIO()
    walk = Walk(server.url("/sitemap.xml"))
    write_walk_jsonl(walk, out)
    locs = [json.loads(line)["loc"] for line in out.getvalue().splitlines()]
    assert len(locs) == 8 and locs[0].endswith("/a~b")


def test_host_spellings_of_one_origin_are_one_url(serve):
    server = _site(serve, ["{o}/x", "{o}/y"])
    body = (
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{server.origin}/x</loc></url>"
        f"<url><loc>{server.origin.upper().replace('HTTP', 'http')}/x</loc></url>"
        f"<url><loc>http://[::1]:{server.port}/x</loc></url>"
        "</urlset>"
    ).encode()
    server.routes["/sitemap.xml"] = lambda h: send(h, 200, body)
    walk = Walk(server.url("/sitemap.xml"))
    assert [e.loc for e in walk] == [f"{server.origin}/x"]
    codes = sorted(p.code for p in walk.problems)
    assert codes == ["cross-host", "duplicate-url"]  # [::1] is another host than 127.0.0.1


# -- the key of an escaped loc on the file's own origin, without parsing it ------------------

_FAST = ("https://example.com/", "http://127.0.0.1:8080/")
_PIECES = ["a", "Z", "~", "%7e", "%7E", "%c3%a9", "%C3%A9", "%2f", "%41", "%", "%g1", "%4",
           "%2D", "%2e", "%5F", "%5B", "%30", "%3A", "%7A", "%7B", "%60", "%E2%80%93",
           "?", "#", "?#", "&", "=", "/", "\t", "\n", " ", "é", "."]  # fmt: skip


@given(st.sampled_from(_FAST), st.lists(st.sampled_from(_PIECES), min_size=1, max_size=12))
def test_an_escaped_loc_on_a_fast_prefix_has_the_key_of_its_url_key(prefix, pieces):
    loc = prefix + "%" + "".join(pieces)  # an escape or a lone %: the loc is keyed by escapes
    assert dedup_keys([loc], _FAST) == [hash(url_key(loc))]
    assert dedup_keys([loc, None], _FAST) == [hash(url_key(loc)), 0]


def test_an_escaped_loc_on_a_fast_prefix_is_keyed_without_parsing_it(monkeypatch):
    """``Caf%C3%A9``-style paths (a wiki's every URL) cost a regular expression, not a
    URL parse each."""
    import auditor.http.hosts

    def parse(url: str) -> str:
        raise AssertionError(f"parsed {url}")

    monkeypatch.setattr(auditor.http.hosts, "url_key", parse)
    locs = ["https://example.com/wiki/Caf%c3%a9_1", "https://example.com/wiki/Caf%C3%A9_1?a=%7e"]
    keys = dedup_keys(locs, _FAST)
    assert keys == [
        hash("https://example.com/wiki/Caf%C3%A9_1"),
        hash("https://example.com/wiki/Caf%C3%A9_1?a=~"),
    ]


def test_a_batch_of_new_escaped_locs_is_marked_at_once_by_their_keys():
    pages = Pages()
    first = ["https://example.com/wiki/Caf%C3%A9_1", "https://example.com/wiki/Caf%c3%a9_2"]
    assert pages.mark_all_new(first, _FAST)  # the batch path, not URL by URL
    assert len(pages.seen) == 2
    again = ["https://example.com/wiki/Caf%c3%a9_1", "https://example.com/wiki/other"]
    assert not pages.mark_all_new(again, _FAST)  # one spelling of a URL seen before
    twice = ["https://example.com/a~b", "https://example.com/a%7Eb", "https://example.com/c"]
    assert not pages.mark_all_new(twice, _FAST)  # one URL twice in the batch
    assert len(pages.seen) == 2  # nothing marked by a batch that is not all new


def test_escapes_rewrites_exactly_the_escapes_that_are_not_canonical():
    """Every escape ``%XY``: kept when upper case and not an unreserved byte, else
    rewritten (told by one search; the rewrite itself, one escape at a time)."""
    unreserved = {ord(c) for c in string.ascii_letters + string.digits + "-._~"}
    for byte in range(256):
        upper, lower = f"{byte:02X}", f"{byte:02x}"
        for text in {upper, lower, upper[0] + lower[1], lower[0] + upper[1]}:
            expected = chr(byte) if byte in unreserved else f"%{upper}"
            assert escapes(f"/a%{text}b") == f"/a{expected}b", text


# -- a loc without escapes is its own key only where url_key writes it as it is ---------------

_PLAIN_PIECES = ["a", "Z", "~", "?", "#", "?#", "&", "=", "/", "\t", "\n", " ", "é", ".", "x?"]


@given(
    st.sampled_from(_FAST),
    st.lists(st.sampled_from(_PLAIN_PIECES), min_size=1, max_size=8),
    st.lists(st.sampled_from(["a", "b/c", "d?e=1"]), min_size=0, max_size=3),
)
def test_a_plain_loc_has_the_key_of_its_url_key(prefix, pieces, others):
    """The batch path and the per-URL one key a loc alike (a tab or a line break, which
    the URL parser removes, included)."""
    loc = prefix + "".join(pieces)
    batch = [prefix + other for other in others] + [loc]
    expected = [hash(url_key(one)) for one in batch]
    assert dedup_keys(batch, _FAST) == expected
    assert dedup_keys(batch, ()) == expected  # a local file's: no allowed origin


def test_an_empty_query_or_fragment_makes_another_url():
    """``/a?`` is not ``/a`` (RFC 3986 6.2.3: a delimiter of an empty component is not
    removed unless the scheme says so); a real blog's sitemap lists both."""
    server_locs = ["{o}/a", "{o}/a?", "{o}/b#", "{o}/b", "{o}/c?#", "{o}/c"]
    pages = Pages()
    locs = [loc.format(o="https://example.com") for loc in server_locs]
    assert pages.mark_all_new(locs, _FAST)
    assert len({url_key(loc) for loc in locs}) == len(locs)


def test_a_tab_in_a_loc_is_removed_on_the_batch_path_too():
    pages = Pages()
    assert not pages.mark_all_new(["https://example.com/a", "https://example.com/\ta"], _FAST)
