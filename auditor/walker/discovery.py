"""Where a walk starts: classify the target and read robots.txt ``Sitemap:`` lines.

Touches: the disk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import SplitResult, urljoin, urlsplit, urlunsplit

from auditor.errors import UsageError
from auditor.http.hosts import origin

__all__ = ["ROBOTS_MAX_BYTES", "Target", "classify_target", "decode_robots", "sitemaps_from_robots"]

#: robots.txt is read up to this many bytes (Google's limit is 500 KiB).
ROBOTS_MAX_BYTES = 512_000

# A target without a scheme ending like this is a missing file, not a host name.
_FILE_SUFFIXES = (".xml", ".gz", ".txt", ".rss", ".atom", ".html")

# A URL's scheme (RFC 3986: a letter, then letters, digits, "+", "-", "."), and what
# follows a host name's colon when it is a port rather than a scheme's.
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):(.*)", re.DOTALL)
_PORT = re.compile(r"\d+(?:/.*)?|/?", re.DOTALL)

# "Sitemap:" in any case, any spacing; the value ends at whitespace or a comment.
_SITEMAP_LINE = re.compile(r"^[ \t]*sitemap[ \t]*:[ \t]*([^\s#]+)", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Target:
    """What the user asked to walk: a site origin, a sitemap URL, or a local file."""

    kind: str  # site | url | file
    value: str  # origin ("https://example.com"), URL, or file path
    #: False when the user wrote no scheme and https was taken (:mod:`auditor.schemes`)
    scheme_given: bool = True

    @property
    def site(self) -> str | None:
        """The site origin (scheme://host[:port]), None for a local file."""
        if self.kind == "file":
            return None
        return _origin(urlsplit(self.value))


def _origin(parts: SplitResult) -> str:
    """The site origin of a parsed URL: every spelling of one host as one, the default
    port dropped (:func:`auditor.http.hosts.origin`)."""
    url = urlunsplit(parts)
    found = origin(url)
    if found is None:
        raise UsageError(f"not a usable host name in {url}")
    return found


def classify_target(text: str) -> Target:
    """A site origin, a sitemap URL or a local file, from what the user typed."""
    text = text.strip()
    if not text:
        raise UsageError("empty target")
    path = Path(text)
    if "://" not in text and path.is_file():
        return Target("file", str(path))
    scheme = _scheme_of(text)
    if scheme is not None and scheme not in ("http", "https"):
        raise UsageError(f"not an http(s) URL or a file: {text} (the {scheme}: scheme)")
    given = "://" in text
    if not given:
        if "/" in text.rstrip("/") or text.startswith(".") or text.endswith(_FILE_SUFFIXES):
            raise UsageError(f"no such file: {text}")
        text = "https://" + text  # a bare host name: https first (auditor.schemes)
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise UsageError(f"not an http(s) URL or a file: {text}")
    try:
        parts.port  # noqa: B018 - validates the port
    except ValueError as exc:
        raise UsageError(f"bad port in {text}") from exc
    if parts.path in ("", "/") and not parts.query:
        return Target("site", _origin(parts), given)
    return Target("url", text, given)


def _scheme_of(text: str) -> str | None:
    """The scheme ``text`` starts with (lower case), if any. ``example.com:8080`` has
    none (a host and its port); ``mailto:a@example.com`` has one, though it could read
    as a host with a user and a password."""
    found = _SCHEME.match(text)
    if found is None or _PORT.fullmatch(found.group(2)):
        return None
    return found.group(1).lower()


def decode_robots(raw: bytes) -> str:
    """robots.txt bytes as text, the one decoder of the walker and the sampler.

    A byte-order mark is skipped, as Google's parser skips it (otherwise the first
    line reads as an unknown key and its group's rules belong to no group): UTF-16
    with its mark, UTF-8 with or without one (several, even); bytes that are not
    UTF-8 are read as Latin-1, so no rule is lost to a decoding error.
    """
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = raw.decode("utf-16", errors="replace")
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
    return text.lstrip("\ufeff")


def sitemaps_from_robots(text: str, site: str) -> list[str]:
    """Every ``Sitemap:`` URL in a robots.txt, resolved against the site, in order, once each."""
    found: list[str] = []
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")  # CR ends lines too
    for match in _SITEMAP_LINE.finditer(text):
        url = urljoin(site + "/", match.group(1))
        if urlsplit(url).scheme in ("http", "https") and url not in found:
            found.append(url)
    return found
