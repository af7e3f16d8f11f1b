"""Dates from structured data (JSON-LD, microdata, OpenGraph, RDFa) and head meta tags.

Sources are tried in this order, and the first readable date wins:

1. schema.org nodes from JSON-LD, microdata and (only when asked, as it is slow)
   RDFa, ranked by :func:`auditor.evidence.nodes.rank`;
2. OpenGraph (``article:modified_time``, ``og:updated_time``; ``article:published_time``);
3. other meta tags (``last-modified``, ``dcterms.modified``, ``itemprop=dateModified``
   outside any item...);
4. last, nodes that name another page (teasers, related items): their dates are
   another page's, used only when nothing else dates this one.

Nothing here raises on a page's content: broken JSON-LD is counted and noted,
an extractor that fails is noted and skipped.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import extruct
from lxml import etree

from auditor.evidence.dates import parse_page_date
from auditor.evidence.jsonld import read_jsonld
from auditor.evidence.markup import Markup
from auditor.evidence.model import DatedValue
from auditor.evidence.nodes import Node, flatten, names_another_page, page_keys, rank, short_type
from auditor.evidence.text import elements

__all__ = ["StructuredData", "read_structured"]

OG_MODIFIED = ("article:modified_time", "og:updated_time", "og:modified_time")
OG_PUBLISHED = ("article:published_time", "og:published_time")
#: ``<meta name|property|http-equiv|itemprop=...>`` names, lower case, best first.
META_MODIFIED = (
    "datemodified",
    "article:modified_time",
    "og:updated_time",
    "last-modified",
    "dcterms.modified",
    "dcterms:modified",
    "dc.date.modified",
    "dc.modified",
    "modified",
    "lastmod",
)
META_PUBLISHED = (
    "datepublished",
    "article:published_time",
    "dcterms.issued",
    "dcterms:issued",
    "dc.date.issued",
    "dcterms.created",
    "dc.date.created",
    "pubdate",
    "publish-date",
    "publishdate",
    "parsely-pub-date",
    "sailthru.date",
    "date",
)
_META_ATTRS = ("property", "name", "http-equiv", "itemprop")
_DATED = etree.XPath(  # from the root element (elements): the document's
    "descendant-or-self::meta"
    " | descendant-or-self::*[@itemprop='dateModified' or @itemprop='datePublished']"
)
_MAX_META = 2_000
#: The syntaxes read from the tree, each with the attribute name it needs (:func:`_syntaxes`).
_SYNTAX_NAMES = (("microdata", b"itemscope"), ("opengraph", b"property"))
#: An element's text, descendants included (what lxml.html's ``text_content`` does).
_TEXT = etree.XPath("string()", smart_strings=False)
#: RDFa terms (expanded IRIs shortened) read as schema.org's names.
_RDFA_ALIASES = {"modified": "dateModified", "issued": "datePublished"}


@dataclass(frozen=True, slots=True)
class StructuredData:
    """What the structured data says: the two dates, every item read, and notes."""

    date_modified: DatedValue | None
    date_published: DatedValue | None
    items: tuple[Any, ...]  # JSON-LD blocks, microdata and OpenGraph items, for fingerprinting
    notes: tuple[str, ...]


def read_structured(
    tree: etree._Element,
    *,
    urls: list[str | None],
    html: bytes | None = None,
    markup: Markup | None = None,
) -> StructuredData:
    """Read the dates of the page parsed as ``tree``; ``urls[0]`` is its base URL and every
    URL in ``urls`` names this page. RDFa is read only when ``html`` is given. ``markup``
    (the bytes ``tree`` was parsed from) lets an extractor whose names the page never
    spells be skipped (the same values: it would have found nothing)."""
    base = urls[0] or ""
    notes: list[str] = []
    blocks, broken = read_jsonld(tree)
    if broken:
        notes.append("invalid-json-ld")
    extracted = _extruct(tree, base, _syntaxes(markup), notes, label="microdata+opengraph")
    microdata, opengraph = extracted.get("microdata", []), extracted.get("opengraph", [])
    nodes = flatten(blocks, "json-ld") + flatten(microdata, "microdata")
    if html is not None:
        rdfa = _extruct(html, base, ["rdfa"], notes).get("rdfa", [])
        nodes += flatten([_rdfa_item(item) for item in rdfa], "rdfa")
    keys = page_keys([*urls, *_canonical_urls(tree, opengraph)])
    ranked = rank(nodes, keys, base)
    own: list[Node] = []
    elsewhere: list[Node] = []  # nodes naming another page: dated last (module docstring)
    for node in ranked:
        (elsewhere if names_another_page(node, keys, base) else own).append(node)
    meta = _meta_tags(tree, markup)
    modified = _first(
        _from_nodes(own, "dateModified"),
        _from_og(opengraph, OG_MODIFIED),
        _from_meta(meta, META_MODIFIED),
        _from_nodes(elsewhere, "dateModified"),
    )
    published = _first(
        _from_nodes(own, "datePublished"),
        _from_og(opengraph, OG_PUBLISHED),
        _from_meta(meta, META_PUBLISHED),
        _from_nodes(elsewhere, "datePublished"),
    )
    items = (*blocks, *microdata, *opengraph)
    return StructuredData(modified, published, items, tuple(notes))


def _syntaxes(markup: Markup | None) -> list[str]:
    """The syntaxes extruct reads of a tree: microdata only when the page may hold an
    ``itemscope`` (without one extruct finds no item), OpenGraph only when it may hold a
    ``property`` (its ``<meta property>``); neither can raise on a page without them."""
    return [syntax for syntax, name in _SYNTAX_NAMES if markup is None or markup.may_hold(name)]


def _extruct(
    document: etree._Element | bytes,
    base: str,
    syntaxes: list[str],
    notes: list[str],
    label: str | None = None,
) -> dict[str, list[Any]]:
    """One extruct call (none for no syntaxes); whatever it raises on this page is noted
    under ``label`` (the syntaxes asked for, by default), never propagated."""
    if not syntaxes:
        return {}
    try:
        found: dict[str, list[Any]] = extruct.extract(
            document, base_url=base, syntaxes=syntaxes, uniform=True
        )
        return found
    except Exception as exc:  # third-party code on hostile input
        notes.append(f"extruct-failed:{label or '+'.join(syntaxes)}:{type(exc).__name__}")
        return {}


def _first(*candidates: Iterable[DatedValue]) -> DatedValue | None:
    for candidate in candidates:
        for value in candidate:
            return value
    return None


def _dated(raw: Any, source: str, node_type: str | None) -> DatedValue | None:
    text = _text(raw)
    parsed = parse_page_date(text) if text else None
    if parsed is None or text is None:
        return None
    return DatedValue(parsed.value, text.strip(), source, parsed.precision, node_type)


def _text(raw: Any) -> str | None:
    """A property's date text: a string, the first of a list, or a ``{"@value": ...}``."""
    if isinstance(raw, list):
        raw = next((item for item in raw if item), None)
    if isinstance(raw, Mapping):
        raw = raw.get("@value")
    return raw if isinstance(raw, str) else None


def _from_nodes(ranked: list[Node], prop: str) -> Iterator[DatedValue]:
    for node in ranked:
        value = _dated(node.prop(prop), node.source, node.type_name)
        if value is not None:
            yield value


def _from_og(items: list[Any], names: tuple[str, ...]) -> Iterator[DatedValue]:
    for item in items:
        for name in names:
            value = _dated(item.get(name), "opengraph", name)
            if value is not None:
                yield value


def _meta_tags(tree: etree._Element, markup: Markup | None = None) -> dict[str, str]:
    """The first value of each dated meta name (lower case) in the page."""
    found: dict[str, str] = {}
    for element in _dated_elements(tree, markup)[:_MAX_META]:
        value = element.get("content") or element.get("datetime")
        if value is None and element.tag != "meta":
            text = _TEXT(element)
            value = text if isinstance(text, str) else None
        for attr in _META_ATTRS:
            name = element.get(attr)
            if name and value:
                found.setdefault(name.strip().lower(), value)
    return found


def _dated_elements(tree: etree._Element, markup: Markup | None) -> list[etree._Element]:
    """What :data:`_DATED` selects: on a page that never spells ``itemprop``, its
    ``<meta>`` elements in document order, read by a tag walk in C (half the XPath's cost)."""
    if markup is None or markup.may_hold(b"itemprop"):
        return elements(_DATED, tree)
    return list(tree.getroottree().getroot().iter("meta"))


def _from_meta(meta: dict[str, str], names: tuple[str, ...]) -> Iterator[DatedValue]:
    for name in names:
        value = _dated(meta.get(name), "meta", name)
        if value is not None:
            yield value


def _canonical_urls(tree: etree._Element, opengraph: list[Any]) -> list[str]:
    urls = [link.get("href", "") for link in tree.iterfind(".//link[@rel='canonical']")]
    urls += [item["og:url"] for item in opengraph if isinstance(item.get("og:url"), str)]
    return urls


def _rdfa_item(item: Any) -> Any:
    """extruct's expanded RDFa (full IRIs, ``[{"@value": ...}]``) with short schema.org keys."""
    if not isinstance(item, Mapping):
        return item
    short: dict[str, Any] = {}
    for key, value in item.items():
        if key.startswith("@"):
            short[key] = [short_type(t) for t in value] if key == "@type" else value
            continue
        name = short_type(key)
        short[_RDFA_ALIASES.get(name, name)] = value
    return short
