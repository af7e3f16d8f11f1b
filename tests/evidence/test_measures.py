"""The fast forms of the evidence's measures read as their plain forms: the visible length
of every element, the simhash of a page's words, the root text's walk, and the XPaths read
from the root element (and the tag walks) as the ``//`` paths they stand for."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from lxml import etree

from auditor.evidence import jsonld as jsonld_module
from auditor.evidence import listing as listing_module
from auditor.evidence import structured as structured_module
from auditor.evidence import text as text_module
from auditor.evidence.fingerprint import main_text, simhash
from auditor.evidence.page import parse_html
from auditor.evidence.text import NEVER_CONTENT, elements, visible_length
from tests.evidence.helpers import PAGES

TRICKY = [
    b"<html><body><script>a<b>xx</b>yy</script>z<!-- c -->t<?pi x?>u<select><option>o"
    b"</option>p</select><svg><text>s</text></svg>\xf0\x9f\x98\x80 q</body></html>",
    b"<p>caf\xc3\xa9 &amp; &nbsp;<![CDATA[x]]> <style>p{}</style>tail</p><noscript>n</noscript>",
    b"<main><template><p>t</p></template><div>\xe3\x81\x82<br>b<i>c</i>d</div></main>",
    b"",
]


def _plain_length(element: etree._Element) -> int:
    """Visible length node by node (the definition)."""
    size = 0
    for node in element.iter():
        if node.tag in NEVER_CONTENT or not isinstance(node.tag, str):
            size += len(node.tail or "") if node is not element else 0
            continue
        size += len(node.text or "") + (len(node.tail or "") if node is not element else 0)
    return size


def _plain_simhash(words: list[str], shingle: int = 3) -> int:
    if not words:
        return 0
    size = min(shingle, len(words))
    grams = {" ".join(words[i : i + size]) for i in range(len(words) - size + 1)}
    digests = b"".join(hashlib.blake2b(g.encode(), digest_size=8).digest() for g in grams)
    bits = np.unpackbits(np.frombuffer(digests, dtype=np.uint8)).reshape(len(grams), 64)
    votes = bits.sum(axis=0, dtype=np.int64) * 2 > len(grams)
    return int.from_bytes(np.packbits(votes).tobytes(), "big")


def _documents() -> list[bytes]:
    return TRICKY + [path.read_bytes() for path in sorted(PAGES.glob("*.html"))]


@pytest.mark.parametrize("html", _documents())
def test_visible_length_of_every_element_is_its_node_by_node_count(html: bytes) -> None:
    tree = parse_html(html, "text/html")
    for element in tree.iter(etree.Element):
        assert visible_length(element) == _plain_length(element), element.tag


@pytest.mark.parametrize("words", [[], ["a"], ["a", "b"], list("abcabcd"), list("xyzxyzw")])
@pytest.mark.parametrize("shingle", [1, 2, 3, 5])
def test_simhash_reads_as_its_definition(words: list[str], shingle: int) -> None:
    assert simhash(words, shingle) == _plain_simhash(words, shingle)


def test_main_text_keeps_tails_of_skipped_elements_and_comments_not_the_roots() -> None:
    html = (
        b"<html><body><p>before</p><main><h1>title</h1>one<script>x()</script>two"
        b"<!-- note -->three<nav>menu</nav>four<article><header>own head</header>body"
        b"</article>five</main>after</body></html>"
    )
    text = main_text(parse_html(html, "text/html"))
    assert text == "title one two three four own head body five"


ABSOLUTE = {  # the paths as written with ``//`` (the definition)
    text_module._MAIN: "(//main | //*[@role='main'])[1]",
    structured_module._DATED: "//meta | //*[@itemprop='dateModified' or @itemprop='datePublished']",
    jsonld_module._SCRIPTS: "//script[@type]",
}


@pytest.mark.parametrize("html", _documents())
def test_paths_from_the_root_select_what_the_absolute_paths_select(html: bytes) -> None:
    tree = parse_html(html, "text/html")
    for context in (tree, *list(tree.iter(etree.Element))[-3:]):
        for path, absolute in ABSOLUTE.items():
            assert elements(path, context) == context.xpath(absolute), absolute
        top = context.getroottree().getroot()  # the tag walks of content_root
        assert list(top.iter("article")) == context.xpath("//article")
        assert [next(top.iter("body"), None)] == (context.xpath("//body") or [None])[:1]
    hrefs = listing_module._CONTENT_HREFS(tree.getroottree().getroot())
    assert hrefs == tree.xpath(
        "//body//a[@href][not(ancestor::nav or ancestor::aside or ancestor::menu"
        " or ancestor::header[not(ancestor::article)]"
        " or ancestor::footer[not(ancestor::article)])]/@href"
    )
