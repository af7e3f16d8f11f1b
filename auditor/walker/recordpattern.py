"""The urlset fast path's record patterns: the C regular expressions that validate and
extract a run of plain records at once (:mod:`auditor.walker.fastxml` reads with them).

A record is ``<url><loc>…</loc>``, an optional ``<lastmod>``, ``<changefreq>`` and
``<priority>``, and the image, video or hreflang elements whose prefixes the root
declares; values as the exact reader keeps them (stripped, not empty), text without
``<``. Anything else is for expat.

Touches: nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

__all__ = [
    "IMAGE_NS",
    "VALUE",
    "VALUE_NO_CR",
    "VIDEO_NS",
    "XHTML_NS",
    "extension_alternatives",
    "extension_prefixes",
    "record_patterns",
]

IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
VIDEO_NS = "http://www.google.com/schemas/sitemap-video/1.1"
XHTML_NS = "http://www.w3.org/1999/xhtml"

_W = r"[ \t\r\n]*+"  # XML whitespace (not Python's \s: a no-break space is text)
_WS = r"[ \t\r\n]++"
#: A value as the exact reader keeps it: stripped (str.strip and \s agree), not empty. Its
#: end is a lookbehind, not ``(?:[^<]*[^<\s])?``: the same matches, without the general
#: repeat's bookkeeping per value (about a sixth of the pattern's time on long locs).
VALUE = r"([^<\s][^<]*(?<!\s))"
VALUE_NO_CR = r"([^<\s][^<\r]*(?<!\s))"  # a CR inside a value: expat makes it LF
_TEXT = r"[^<]*"
_PREFIX = re.compile(r"[A-Za-z_][\w.-]*")  # a prefix the pattern can spell literally
_IMAGE_FIELDS = ("loc", "caption", "title", "geo_location", "license")
_VIDEO_FIELDS = (
    "thumbnail_loc", "title", "description", "content_loc", "player_loc", "duration",
    "expiration_date", "rating", "view_count", "publication_date", "family_friendly",
    "requires_subscription", "live", "tag", "category", "gallery_loc", "uploader",
    "restriction", "platform", "price",
)  # fmt: skip


def _element(prefix: str, local: str, body: str = _TEXT) -> str:
    name = f"{prefix}:{local}"
    return f"<{name}>{body}</{name}>"


def _declared_prefixes(declared: dict[str | None, str]) -> Iterator[tuple[str, str]]:
    """(prefix, namespace) of each prefix the root declares that a pattern can spell, in
    the order both readers of them take (so the last declared for a namespace wins)."""
    for prefix, uri in sorted(declared.items(), key=lambda item: str(item[0])):
        if prefix is not None and _PREFIX.fullmatch(prefix):
            yield prefix, uri


def extension_alternatives(declared: dict[str | None, str]) -> str:
    """Alternatives for the extension elements whose prefixes the root declares."""
    parts = []
    for prefix, uri in _declared_prefixes(declared):
        p = re.escape(prefix)
        if uri == IMAGE_NS:
            inner = "|".join(_element(p, f) for f in _IMAGE_FIELDS)
            parts.append(_element(p, "image", f"{_W}(?:(?:{inner}){_W})*+"))
        elif uri == VIDEO_NS:
            inner = "|".join(_element(p, f) for f in _VIDEO_FIELDS)
            parts.append(_element(p, "video", f"{_W}(?:(?:{inner}){_W})*+"))
        elif uri == XHTML_NS:
            parts.append(  # no tab, CR or LF in the values: expat would make them spaces
                f'<{p}:link{_WS}rel="alternate"{_WS}hreflang="[^"<\t\r\n]*"'
                f'{_WS}href="[^"<\t\r\n]*"{_W}/>'
            )
    return "|".join(parts)


def extension_prefixes(
    declared: dict[str | None, str],
) -> tuple[str | None, str | None, str | None]:
    """The prefixes the root declares for the image, video and XHTML namespaces (the
    last declared wins, as in :func:`extension_alternatives`), None for each it does not."""
    found: dict[str, str | None] = {IMAGE_NS: None, VIDEO_NS: None, XHTML_NS: None}
    for prefix, uri in _declared_prefixes(declared):
        if uri in found:
            found[uri] = prefix
    return found[IMAGE_NS], found[VIDEO_NS], found[XHTML_NS]


@lru_cache(maxsize=32)
def record_patterns(extensions: str, value: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(records, run) for one set of extensions and one value pattern.

    ``records.findall`` gives (loc, lastmod, "") per record, and ("", "", "") for the
    rest of the text from the first thing that is not one; ``run.match`` ends after
    the last record of the run. With extensions, the third group is the record's text
    after its lastmod (hints and extension elements), for
    :func:`auditor.walker.extensions.extras_from_tail`.
    """
    others = "<changefreq>[^<]*</changefreq>|<priority>[^<]*</priority>"
    if extensions:
        others += "|" + extensions
    tail = f"((?:(?:{others}){_W})*+)" if extensions else f"(?:(?:{others}){_W})*+()"
    record = (
        f"<url>{_W}<loc>{_W}{value}{_W}</loc>{_W}"
        f"(?:<lastmod>{_W}{value}?{_W}</lastmod>{_W}|)"
        f"{tail}</url>"
    )
    records = re.compile(f"{_W}(?:{record}|[^ \\t\\r\\n][\\s\\S]*)")
    run = re.compile(f"(?:{_W}{record})*+")
    return records, run
