"""How the trust look-up names a URL: its site (the origin as the history stores sites)
and its key within the site (the path and query in one spelling).

A site's inventory holds its locs as its sitemaps wrote them, every one on the site's
own origin (the walker drops the others: :class:`auditor.walker.locs.LocJudge`), so
within a site a URL is told by what follows its origin. Two spellings of one URL share a
key: the origin is :func:`auditor.http.hosts.origin` (scheme and host case, an IDNA
host, a trailing dot, the default port), the key is the path (``/`` when empty) and the
query with

- percent-escapes in upper case, those of unreserved characters decoded (RFC 3986
  6.2.2.1-2, as :func:`auditor.http.hosts.url_key`);
- characters a URI cannot hold (non-ASCII, spaces, ``<>"{}|\\^```) percent-encoded as
  UTF-8, so a loc written as an IRI (``/é``) is found by its URI (``/%C3%A9``), as a
  crawler sends it;
- the fragment dropped (no request carries it), and an empty query (``/a?``) too.

Nothing else is folded: a path's case, a trailing slash, the order of a query's
parameters each make another URL, as for the walker and the crawl log.

Touches: nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import quote, urlsplit

from auditor.http.hosts import origin

__all__ = ["MAX_URL_CHARS", "local_key", "local_keys", "parse_url"]

#: The longest URL looked up. The sitemap protocol caps a loc at 2,048 characters and
#: servers commonly refuse a request line over 8 KB; a longer one is no page anyone
#: crawls, and refusing it bounds the work one request can ask for.
MAX_URL_CHARS = 8_192
#: What a URI may hold as it is (reserved and unreserved characters, and escapes).
_SAFE = "!#$&'()*+,/:;=?@[]~%"
#: A percent-escape.
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
#: A loc's scheme and authority (what follows is its path, query and fragment).
_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*")
#: A path and query already in the one spelling: only characters kept as they are, no
#: escape, no fragment.
_PLAIN = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/?]*")


def parse_url(url: str) -> tuple[str, str]:
    """(origin, key) of an absolute http(s) URL; ValueError saying why for anything else
    (too long, no scheme or host, another scheme, a bad port or host name)."""
    if len(url) > MAX_URL_CHARS:
        raise ValueError(f"URL longer than {MAX_URL_CHARS:,} characters")
    text = url.strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises for a port out of range
    except ValueError as exc:
        raise ValueError(f"not a usable URL: {exc}") from exc
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ValueError("not an absolute http(s) URL")
    site = origin(text)
    if site is None:
        raise ValueError("no usable host name in the URL")
    return site, local_key(text)


def local_key(url: str) -> str:
    """The key of ``url`` within its site (module docstring)."""
    parts = urlsplit(url)
    key = _uri(parts.path or "/")
    return f"{key}?{_uri(parts.query)}" if parts.query else key


def local_keys(locs: Sequence[str]) -> list[str]:
    """:func:`local_key` of each loc, the common ones (plain ASCII, no escape, no
    fragment) by one regex match and a slice each."""
    keys = []
    for loc in locs:
        found = _AUTHORITY.match(loc)
        if found is not None:
            rest = loc[found.end() :]
            if _PLAIN.fullmatch(rest) and not rest.endswith("?"):
                keys.append(rest)
                continue
        keys.append(local_key(loc))
    return keys


def _uri(text: str) -> str:
    """``text`` with what a URI cannot hold percent-encoded and its escapes in one
    spelling."""
    quoted = quote(text, safe=_SAFE, encoding="utf-8", errors="surrogatepass")
    return _ESCAPE.sub(_escape, quoted) if "%" in quoted else quoted


def _escape(found: re.Match[str]) -> str:
    byte = int(found.group(1), 16)
    return chr(byte) if byte in _UNRESERVED else f"%{found.group(1).upper()}"
