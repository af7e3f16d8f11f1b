"""defusedxml as the oracle of the walker's XML guard.

Whatever defusedxml refuses (a DTD, an entity declaration, an external reference) the
walker refuses too, with a named problem and without expanding or fetching anything; and
whatever defusedxml's expat cannot parse, the walker reports. Checked on every hostile
fixture, on their UTF-16 forms, and on a fuzzed set, through both of the walker's paths
(exact and fast) and in chunks of every size.

The walker does not parse through defusedxml: measured on a 50,000-URL sitemap, defusedxml's
``iterparse`` costs 8.4 us a URL against 1.6 for the walker's reader (tests/benchmarks/README.md).
"""

from __future__ import annotations

import codecs

import defusedxml
import defusedxml.ElementTree as DefusedET
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.walker.formats import SitemapReader
from tests.loopback import FIXTURES

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
#: Named problems that say "this file is not read as given".
REFUSALS = {"forbidden-xml", "not-well-formed", "not-a-sitemap"}


def oracle(data: bytes) -> str:
    """What defusedxml makes of ``data``: "refused", "broken" or "ok"."""
    try:
        DefusedET.fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except defusedxml.DefusedXmlException:
        return "refused"
    except (DefusedET.ParseError, ValueError, LookupError):
        return "broken"
    return "ok"


def walker(data: bytes, fast: bool, size: int) -> tuple[list, list[str]]:
    reader = SitemapReader(fast=fast)
    chunks = iter([data[i : i + size] for i in range(0, len(data), size)])
    records = [record for batch in reader.batches(chunks) for record in batch]
    return records, [code for code, _ in reader.problems]


def assert_walker_agrees(data: bytes, sizes: tuple[int, ...] = (1, 64, 65_536)) -> str:
    verdict = oracle(data)
    for fast in (False, True):
        for size in sizes:
            records, codes = walker(data, fast, size)
            if verdict == "refused":
                assert "forbidden-xml" in codes or (codes == ["not-a-sitemap"] and not records)
            elif verdict == "broken":
                assert REFUSALS & set(codes), (codes, fast, size)
    return verdict


HOSTILE = sorted((FIXTURES / "hostile").glob("*.xml"))
# The fixtures that are UTF-8 text (the others are about bytes invalid in their encoding).
UTF8 = [p for p in HOSTILE if p.name not in ("invalid-shift-jis.xml", "invalid-utf8.xml")]


@pytest.mark.parametrize("path", HOSTILE, ids=lambda p: p.name)
def test_what_defusedxml_refuses_in_a_hostile_fixture_the_walker_refuses(path):
    data = path.read_bytes().replace(b"{{origin}}", b"http://127.0.0.1:9")
    assert_walker_agrees(data)


@pytest.mark.parametrize("path", UTF8, ids=lambda p: p.name)
@pytest.mark.parametrize("bom", [codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE], ids=["le", "be"])
def test_the_same_in_utf16(path, bom):
    text = path.read_bytes().replace(b"{{origin}}", b"http://127.0.0.1:9").decode("utf-8")
    text = text.replace('encoding="UTF-8"', 'encoding="UTF-16"')
    codec = "utf-16-le" if bom == codecs.BOM_UTF16_LE else "utf-16-be"
    assert_walker_agrees(bom + text.encode(codec), sizes=(7, 65_536))


def test_the_oracle_refuses_the_attacks_at_all():
    verdicts = {p.name: oracle(p.read_bytes()) for p in HOSTILE}
    assert verdicts["billion-laughs.xml"] == "refused"
    assert verdicts["xxe-local-file.xml"] == "refused"
    assert verdicts["external-dtd.xml"] == "refused"
    assert sum(v == "refused" for v in verdicts.values()) >= 12


# -- a fuzzed set ----------------------------------------------------------------------------

_DECLARATIONS = [
    "",
    "<!ENTITY e 'x'>",
    "<!ENTITY e SYSTEM 'file:///etc/passwd'>",
    "<!ENTITY e SYSTEM 'http://127.0.0.1:9/x'>",
    "<!ENTITY % p SYSTEM 'http://127.0.0.1:9/p.dtd'> %p;",
    "<!ENTITY % p '<!ENTITY q \"y\">'> %p;",
    "<!NOTATION n SYSTEM 'x'><!ENTITY u SYSTEM 'x' NDATA n>",
    "<!ENTITY a '&b;'><!ENTITY b '&a;'>",
    "<!ELEMENT urlset ANY>",
    "<!ATTLIST url id ID #IMPLIED>",
]
_DOCTYPES = st.sampled_from(["", "<!DOCTYPE urlset>", "<!DOCTYPE html>", "<!DOCTYPE x SYSTEM 'y'>"])
_REFERENCES = st.sampled_from(["", "&e;", "&amp;", "&#38;", "&u;", "&q;", "&lt;", "&nope;"])


@st.composite
def hostile_documents(draw: st.DrawFn) -> bytes:
    head = draw(st.sampled_from(['<?xml version="1.0" encoding="UTF-8"?>\n', "", "<!-- c -->"]))
    doctype = draw(_DOCTYPES)
    subset = draw(st.lists(st.sampled_from(_DECLARATIONS), max_size=3))
    if subset:
        doctype = f"<!DOCTYPE urlset [{''.join(subset)}]>"
    urls = "".join(
        f"<url><loc>https://example.com/{k}{draw(_REFERENCES)}</loc></url>\n"
        for k in range(draw(st.integers(0, 6)))
    )
    attribute = draw(st.sampled_from(["", ' a="&e;"', ' a="&amp;"']))
    text = f'{head}{doctype}\n<urlset xmlns="{SITEMAP_NS}"{attribute}>\n{urls}</urlset>\n'
    data = text.encode("utf-8")
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return data


@settings(max_examples=400, deadline=None)
@given(hostile_documents())
def test_whatever_defusedxml_refuses_the_walker_refuses(data):
    assert_walker_agrees(data, sizes=(3, 65_536))
