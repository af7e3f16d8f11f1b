"""RSS and Atom feeds read as sitemaps: each item or entry a record.

An RSS item's URL is its ``<link>``, its date its ``<pubDate>``; an Atom entry's
URL is the ``href`` of its alternate ``<link>``, its date its ``<updated>``. An
entry with no link falls back on its ``<id>`` (Atom) or permalink ``<guid>``
(RSS) when that is a URL.

Touches: nothing.
"""

from __future__ import annotations

import pyexpat

from auditor.walker.records import (
    ATOM_NS,
    LASTMOD,
    LOC,
    NEWS,
    URL_START,
    Record,
    qualified,
)

__all__ = ["install_feed_handlers"]

_ENTRY_ID = 3  # the field index of an entry's id or guid, which stands in for a missing link


def _layout(kind: str, root_ns: str) -> tuple[frozenset[str], dict[str, int]]:
    """Record element names and field names (to field index) for a kind of feed."""
    if kind == "rss":
        return frozenset({qualified(root_ns, "item")}), {
            qualified(root_ns, "link"): LOC,
            qualified(root_ns, "pubDate"): LASTMOD,
        }
    return frozenset({qualified(ATOM_NS, "entry")}), {qualified(ATOM_NS, "updated"): LASTMOD}


def install_feed_handlers(
    parser: pyexpat.XMLParserType, out: list[Record], kind: str, root_ns: str
) -> None:
    """Set ``parser``'s handlers to read a feed's body (``kind`` rss or atom) into ``out``."""
    records, fields = _layout(kind, root_ns)
    # Feeds: Atom's URL is an attribute of <link>; <id> (Atom) and a permalink
    # <guid> (RSS) stand in when an entry has no link.
    link_name = qualified(ATOM_NS, "link") if kind == "atom" else None
    fallback_name = {"atom": qualified(ATOM_NS, "id"), "rss": qualified(root_ns, "guid")}.get(kind)
    is_rss = kind == "rss"
    loc: str | None = None
    lastmod: str | None = None
    news: str | None = None
    entry_id: str | None = None
    field = -1  # index of the field being read, -1 outside one
    field_name = ""
    in_record = False
    buf: list[str] = []
    # Text is collected only inside a field: the handler is the list's own C
    # append, set at the field's start and removed at its end, so expat never
    # calls Python for the whitespace between elements.
    collect = buf.append

    def start(name: str, attrs: dict[str, str]) -> None:
        nonlocal loc, lastmod, news, entry_id, field, field_name, in_record
        if name in records:
            loc = lastmod = news = entry_id = None
            in_record = True
        elif in_record:
            index = fields.get(name)
            if index is not None:
                field, field_name = index, name
                buf.clear()
                parser.CharacterDataHandler = collect
            elif name == link_name:
                href = attrs.get("href")
                if loc is None and href and attrs.get("rel", "alternate") == "alternate":
                    loc = href.strip()
            elif name == fallback_name and not (
                is_rss and attrs.get("isPermaLink", "true").strip().lower() == "false"
            ):
                field, field_name = _ENTRY_ID, name
                buf.clear()
                parser.CharacterDataHandler = collect

    def end(name: str) -> None:
        nonlocal loc, lastmod, news, entry_id, field, in_record
        if field >= 0:
            if name != field_name:
                return
            parser.CharacterDataHandler = None
            text = "".join(buf).strip()
            if field == LOC:
                loc = text
            elif field == LASTMOD:
                lastmod = text
            elif field == NEWS:
                news = text
            else:
                entry_id = text
            field = -1
        elif name in records:
            in_record = False
            if loc is None and entry_id and URL_START.match(entry_id):
                loc = entry_id  # a feed entry's id or permalink guid, when it is a URL
            out.append((loc, lastmod, news))

    parser.StartElementHandler = start
    parser.EndElementHandler = end
