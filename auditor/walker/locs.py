"""Judging a ``loc``: absolute, on an allowed origin, or reported and dropped.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from auditor.http.hosts import DEFAULT_PORTS, host_key

__all__ = ["DEFAULT_PORTS", "LocJudge", "Origin", "origin_of"]

Origin = tuple[str, str, int | None]  # scheme, host (lower case), port (default made explicit)


def origin_of(url: str) -> Origin:
    """(scheme, host, port) of a URL, lower-cased, with the default port explicit; the
    host in its one spelling (:func:`auditor.http.hosts.canonical_host`: IDNA, no
    trailing dot, IPv6 compressed), so every spelling of one origin is one."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = -1  # unusable port: matches no origin
    if port is None:
        port = DEFAULT_PORTS.get(scheme)
    return scheme, host_key(parts.hostname or ""), port


def _prefix(origin: Origin) -> str:
    scheme, host, port = origin
    shown = f"[{host}]" if ":" in host else host
    netloc = shown if port == DEFAULT_PORTS.get(scheme) else f"{shown}:{port}"
    return f"{scheme}://{netloc}/"


class LocJudge:
    """Accepts the locs of one file and counts the ones it drops.

    ``allowed`` is the set of origins the file's URLs may use, or None to accept
    any absolute http(s) URL (a local file has no origin of its own). The common
    case costs one ``str.startswith``; only unusual locs are parsed.
    """

    def __init__(self, allowed: Iterable[Origin] | None) -> None:
        self._allowed = None if allowed is None else frozenset(allowed)
        if self._allowed is None:
            self._prefixes: tuple[str, ...] = ("http://", "https://")
        else:
            self._prefixes = tuple(_prefix(o) for o in self._allowed)
        #: Prefixes that alone prove a loc acceptable (callers may test them inline).
        self.fast_prefixes = () if self._allowed is None else self._prefixes
        self.relative = 0
        self.cross_host = 0
        self._first_relative = ""
        self._first_cross = ""

    def accepts(self, loc: str) -> bool:
        """True when ``loc`` may be used; otherwise it is counted as a problem."""
        if loc.startswith(self._prefixes) and (self._allowed is not None or "///" not in loc[:8]):
            return True
        return self._judge(loc)

    def _judge(self, loc: str) -> bool:
        try:
            parts = urlsplit(loc)
        except ValueError:  # e.g. an unbalanced "[" in the host
            parts = urlsplit("")
        if not parts.scheme or not parts.netloc:
            self.relative += 1
            self._first_relative = self._first_relative or loc
            return False
        if parts.scheme.lower() in ("http", "https") and (
            self._allowed is None or origin_of(loc) in self._allowed
        ):
            return True
        self.cross_host += 1
        self._first_cross = self._first_cross or loc
        return False

    def report(self, sitemap: str, problem: Callable[[str, str, str], None]) -> None:
        """Report what was dropped, once per code, with a count and the first example."""
        if self.relative:
            problem(
                sitemap,
                "relative-url",
                f"{self.relative:,} relative loc(s) not used, e.g. {self._first_relative!r}",
            )
        if self.cross_host:
            problem(
                sitemap,
                "cross-host",
                f"{self.cross_host:,} loc(s) on another host or scheme not used, "
                f"e.g. {self._first_cross!r}",
            )
