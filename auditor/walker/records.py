"""What the sitemap readers share: the raw record, and XML names as expat gives them.

A reader turns a file into batches of :data:`Record` tuples (loc, lastmod, news
publication date), exactly as written but stripped; a record carrying sitemap extensions
(:mod:`auditor.walker.extensions`) has a :class:`~auditor.walker.extensions.RecordExtras`
as its third field instead (the fast path writes ``""`` for none). Element names come from expat
as ``"namespace local"`` (:data:`SEP` between them, the bare local name outside any
namespace).

Touches: nothing.
"""

from __future__ import annotations

import re

from auditor.walker.extensions import RecordExtras

__all__ = [
    "ATOM_NS",
    "IMAGE",
    "IMAGE_LOC",
    "LASTMOD",
    "LOC",
    "NEWS",
    "NEWS_LANGUAGE",
    "NEWS_NS",
    "NEWS_TITLE",
    "SEP",
    "SITEMAP_NS",
    "URL_START",
    "VIDEO",
    "Record",
    "qualified",
    "split_name",
]

#: loc, lastmod, news publication date (or the record's extensions with it)
Record = tuple[str | None, str | None, str | RecordExtras | None]
#: A record's fields, by position.
LOC, LASTMOD, NEWS = 0, 1, 2
#: Extension fields the exact reader reads at their end tags (not record positions).
IMAGE, IMAGE_LOC, VIDEO, NEWS_TITLE, NEWS_LANGUAGE = 3, 4, 5, 6, 7

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
ATOM_NS = "http://www.w3.org/2005/Atom"
SEP = " "  # expat namespace separator: "uri local"

#: How a URL starts (a text sitemap's lines, a feed entry's id).
URL_START = re.compile(r"https?://", re.IGNORECASE)


def qualified(ns: str, local: str) -> str:
    """An element's name as expat gives it."""
    return f"{ns}{SEP}{local}" if ns else local


def split_name(name: str) -> tuple[str, str]:
    """(namespace, local name) of a name expat gave."""
    ns, _, local = name.rpartition(SEP)
    return ns, local
