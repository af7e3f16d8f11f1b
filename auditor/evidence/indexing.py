"""What a page says of its own indexing: ``noindex`` and the canonical URL it names.

Pure: headers and a parsed page in, values out. Read as search engines read them:

- ``noindex`` from ``<meta name="robots">`` or ``<meta name="googlebot">`` (the
  ``noindex`` or ``none`` directive), or from the ``X-Robots-Tag`` header, unprefixed or
  for ``googlebot`` (``googlebot: noindex``; a directive after a user agent's prefix is
  that agent's until the next prefix, as Google reads it); a directive for another agent
  only (``otherbot: noindex``) does not count. The value says where it was found:
  :data:`NOINDEX_META` or :data:`NOINDEX_HEADER`.
- the canonical URL from ``<link rel="canonical" href>`` in the page, else from a
  ``Link: <...>; rel="canonical"`` header, resolved against the page's URL (absolute
  http(s) only; anything else is no canonical).

:func:`normal_url` is the comparison: a canonical naming the page itself, written
differently (host case, default port, an empty path, a fragment), is the page itself.

Touches: nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urljoin, urlsplit, urlunsplit

from lxml import etree

__all__ = [
    "NOINDEX_HEADER",
    "NOINDEX_META",
    "canonical_from_header",
    "canonical_of",
    "header_noindex",
    "header_value",
    "meta_noindex",
    "noindex_of",
    "normal_url",
    "resolved",
]

NOINDEX_META = "meta"  # <meta name="robots|googlebot" content="noindex">
NOINDEX_HEADER = "header"  # X-Robots-Tag: noindex
_AGENTS = frozenset({"robots", "googlebot"})
_NOINDEX = frozenset({"noindex", "none"})
#: Directives written ``name: value``, not a user agent's prefix.
_VALUED = frozenset({"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_LINK_PART = re.compile(r"<([^>]*)>((?:\s*;\s*[^;,<]+)*)")
_REL = re.compile(r"""rel\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;,]+))""", re.I)


def noindex_of(headers: Mapping[str, str], tree: etree._Element | None) -> str | None:
    """Where the page says ``noindex`` (:data:`NOINDEX_META`, :data:`NOINDEX_HEADER`),
    or None. ``headers`` have any case; ``tree`` is the parsed page (None: not HTML)."""
    if tree is not None and meta_noindex(tree):
        return NOINDEX_META
    if header_noindex(header_value(headers, "x-robots-tag")):
        return NOINDEX_HEADER
    return None


def meta_noindex(tree: etree._Element) -> bool:
    """True when a robots or googlebot meta tag says ``noindex`` or ``none``."""
    for meta in tree.iter("meta"):
        name = (meta.get("name") or "").strip().lower()
        if name in _AGENTS and _NOINDEX.intersection(_directives(meta.get("content") or "")):
            return True
    return False


def _directives(content: str) -> set[str]:
    return {part.strip().lower() for part in content.split(",")}


def header_noindex(value: str | None) -> bool:
    """True when an ``X-Robots-Tag`` value (several headers joined by ", ") says
    ``noindex`` or ``none`` for every agent or for googlebot."""
    if not value:
        return False
    agent: str | None = None
    for part in value.split(","):
        token = part.strip().lower()
        head, colon, rest = token.partition(":")
        if colon and head.strip() not in _VALUED:
            agent, token = head.strip(), rest.strip()
        if token in _NOINDEX and (agent is None or agent in _AGENTS):
            return True
    return False


def canonical_of(headers: Mapping[str, str], tree: etree._Element | None, url: str) -> str | None:
    """The absolute canonical URL the page names (its ``<link rel="canonical">``, else a
    ``Link`` header's), resolved against ``url``; None when it names none."""
    if tree is not None:
        for link in tree.iter("link"):
            if "canonical" in (link.get("rel") or "").lower().split():
                found = resolved(link.get("href"), url)
                if found is not None:
                    return found
    return canonical_from_header(header_value(headers, "link"), url)


def canonical_from_header(value: str | None, url: str) -> str | None:
    """The canonical URL of a ``Link`` header value, resolved against ``url``, or None."""
    if not value:
        return None
    for match in _LINK_PART.finditer(value):
        for rel in _REL.finditer(match[2]):
            words = next(filter(None, rel.groups()), "")
            if "canonical" in words.lower().split():
                return resolved(match[1], url)
    return None


def resolved(href: str | None, base: str) -> str | None:
    """``href`` resolved against ``base``: an absolute http(s) URL with a host, or None."""
    if href is None or not href.strip():
        return None
    try:
        resolved = urljoin(base, href.strip())
        parts = urlsplit(resolved)
    except ValueError:
        return None
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return resolved


def normal_url(url: str) -> str:
    """``url`` written one way: scheme and host lower case, no default port, ``/`` for an
    empty path, no fragment (the query kept as written). A URL that does not parse is
    returned as it is."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    if parts.username is not None:
        netloc = f"{parts.netloc.rpartition('@')[0]}@{netloc}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def header_value(headers: Mapping[str, str], name: str) -> str | None:
    """A header's value by its lower-case ``name``, whatever case ``headers`` use."""
    value = headers.get(name)
    if value is not None:
        return value
    return next((v for k, v in headers.items() if k.lower() == name), None)
