"""Host names and URLs as the web writes them, normalised once, at the door.

One host has many spellings: ``Example.COM``, ``example.com.`` (the root's trailing
dot), ``bücher.example`` and its A-label ``xn--bcher-kva.example``, ``[::1]`` and
``[0:0::1]``. Politeness (the per-host gate, a fleet's host table), origins, URL
deduplication and the history treat them all as one through these functions:

- :func:`canonical_host`: lower case; a non-ASCII name as its IDNA A-label (UTS #46
  mapping, as browsers do, through the ``idna`` package requests brings); one trailing
  dot removed; an IPv6 literal without brackets, in its compressed form;
- :func:`origin`: ``scheme://host[:port]``, the scheme's default port dropped, an IPv6
  literal in brackets: the form the history has always stored an ASCII site in;
- :func:`url_key`: the key two spellings of one URL share (RFC 3986, 6.2.2.1 and
  6.2.2.2: scheme and host case, percent-encoding case, unreserved characters
  decoded) and nothing more: no path case folding, no trailing-slash games, no query
  reordering, no dot-segment removal, no empty query or fragment dropped (6.2.3).

Touches: nothing.
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "DEFAULT_PORTS",
    "canonical_host",
    "escapes",
    "host_key",
    "origin",
    "origin_parts",
    "request_url",
    "url_key",
]

DEFAULT_PORTS = {"http": 80, "https": 443}
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
# An escape ``escapes`` rewrites: a lower-case hex digit, or an unreserved byte (0-9, A-Z,
# a-z, "-", ".", "_", "~"); found by one C search, with no Python call per escape.
_TO_REWRITE = re.compile(
    r"%(?:[0-9A-Fa-f][a-f]|[a-f][0-9A-F]|2[DE]|3[0-9]|4[1-9A-F]|5[0-9AF]|6[1-9A-F]|7[0-9AE])"
)
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
#: A bound on the cache of names already normalised (a fleet sees a few thousand).
_CACHE = 65_536


@lru_cache(maxsize=_CACHE)
def canonical_host(host: str) -> str:
    """``host`` in the one spelling auditor keys it by (see the module); raises
    ValueError when it cannot be a host name (an empty one, a bad IPv6 literal, a
    non-ASCII name IDNA refuses)."""
    name = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if ":" in name:
        address, _, zone = name.partition("%")
        text = ipaddress.IPv6Address(address).compressed
        return f"{text}%{zone}" if zone else text
    if name.endswith(".") and len(name) > 1:
        name = name[:-1]
    if not name or name.endswith("."):
        raise ValueError(f"not a host name: {host!r}")
    if name.isascii():
        return name.lower()
    import idna  # here: an ASCII host, the common case, needs no IDNA tables

    try:
        return idna.encode(name, uts46=True).decode("ascii")
    except idna.IDNAError as exc:
        raise ValueError(f"not a host name: {host!r} ({exc})") from exc


def host_key(host: str) -> str:
    """:func:`canonical_host`, or ``host`` in lower case when it is no host name at all
    (never raises: what politeness keys an odd name by)."""
    try:
        return canonical_host(host)
    except ValueError:
        return host.lower()


def origin_parts(url: str) -> tuple[str, str, int | None]:
    """(scheme, canonical host, port) of ``url``, the port made explicit when it is the
    scheme's default; raises ValueError for a URL without a usable host or port."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    port = parts.port
    host = parts.hostname
    if not host:
        raise ValueError(f"no host in {url!r}")
    return scheme, canonical_host(host), port if port is not None else DEFAULT_PORTS.get(scheme)


def origin(url: str) -> str | None:
    """The origin of an http(s) URL as auditor names sites (``https://example.com``, a
    port only when not the scheme's default, an IPv6 literal in brackets), or None."""
    try:
        scheme, host, port = origin_parts(url)
    except ValueError:
        return None
    if scheme not in DEFAULT_PORTS:
        return None
    return f"{scheme}://{_netloc(host, port, scheme)}"


def url_key(url: str) -> str:
    """The key two spellings of one URL share (RFC 3986 6.2.2.1-2, and the host as
    :func:`canonical_host`); a URL that cannot be parsed is its own key."""
    try:
        parts = urlsplit(url)
        if not parts.netloc:
            return escapes(url)
        scheme, host, port = origin_parts(url)
    except ValueError:
        return url
    netloc = _netloc(host, port, scheme)
    if "@" in parts.netloc:
        netloc = escapes(parts.netloc.rsplit("@", 1)[0]) + "@" + netloc
    key = f"{scheme}://{netloc}{escapes(parts.path)}"
    # an empty query or fragment keeps its delimiter (RFC 3986 6.2.3: /a? is not /a),
    # which urlunsplit would drop
    before_fragment, hashed, _ = url.partition("#")
    if parts.query or "?" in before_fragment:
        key += "?" + escapes(parts.query)
    if parts.fragment or hashed:
        key += "#" + escapes(parts.fragment)
    return key


def request_url(url: str) -> str:
    """``url`` as the door requests it: its host in its one spelling and the default port
    dropped (so the ``Host`` header, TLS's server name and a proxy see one name), the rest
    exactly as written; a URL whose host cannot be normalised is left as it is."""
    try:
        parts = urlsplit(url)
        scheme, host, port = origin_parts(url)
    except ValueError:
        return url
    netloc = _netloc(host, port, scheme)
    if "@" in parts.netloc:
        netloc = parts.netloc.rsplit("@", 1)[0] + "@" + netloc
    if netloc == parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=netloc))


def _netloc(host: str, port: int | None, scheme: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return shown if port is None or port == DEFAULT_PORTS.get(scheme) else f"{shown}:{port}"


def escapes(text: str) -> str:
    """Percent-escapes in upper case, and those of unreserved characters decoded (RFC
    3986 6.2.2.1-2): what :func:`url_key` does to each part after the host."""
    if "%" not in text or not _TO_REWRITE.search(text):  # already canonical: the common case
        return text
    return _ESCAPE.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    byte = int(found.group(1), 16)
    return chr(byte) if byte in _UNRESERVED else f"%{found.group(1).upper()}"
