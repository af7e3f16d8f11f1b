"""What the sitemap readers share: the raw record, and XML names as expat gives them.

A reader turns a file into batches of :data:`Record` tuples (loc, lastmod, news
publication date), exactly as written but stripped. Element names come from expat
as ``"namespace local"`` (:data:`SEP` between them, the bare local name outside any
namespace).
"""

from __future__ import annotations

import re

__all__ = [
    "ATOM_NS",
    "LASTMOD",
    "LOC",
    "NEWS",
    "NEWS_NS",
    "SEP",
    "SITEMAP_NS",
    "URL_START",
    "Record",
    "qualified",
    "split_name",
]

Record = tuple[str | None, str | None, str | None]  # loc, lastmod, news publication date
#: A record's fields, by position.
LOC, LASTMOD, NEWS = 0, 1, 2

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
