"""The crawl list of a fleet: sites from the command line and from files, each once.

A file holds one site a line (a site origin, a bare host name or one of the
site's sitemap URLs); ``#`` starts a comment and blank lines are skipped; ``-``
reads standard input. Two lines naming one site (``example.com`` and
``https://example.com/``, or a site and one of its sitemaps) are one site: the
first line wins, the others are counted as duplicates. A line that names no site
is a usage error that names the file and the line, before anything is audited.

A line may name a proxy for its site in a second column (after a space or a tab):
``shop.example socks5h://10.0.0.7:1080``. That site's requests, robots.txt included,
all go through it; the others use the fleet's ``--proxy`` (or the environment's).

Touches: the disk.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from auditor.audit import site_of
from auditor.errors import UsageError

__all__ = ["CrawlList", "crawl_list", "read_site_lines"]


@dataclass(frozen=True)
class CrawlList:
    """The sites of a fleet, in the order given, each once.

    ``targets[i]`` is what was written for ``sites[i]`` (the site origin, or the
    sitemap URL to walk); ``duplicates`` are the lines left out as repeats;
    ``proxies[i]``, when given, the proxy of ``sites[i]``'s line (None: the fleet's);
    ``bare``: the sites written without a scheme (https taken: :mod:`auditor.schemes`).
    """

    sites: tuple[str, ...]
    targets: tuple[str, ...]
    duplicates: tuple[str, ...] = ()
    proxies: tuple[str | None, ...] = ()
    bare: frozenset[str] = frozenset()

    def known_as(self, known: Collection[str]) -> list[str]:
        """The sites as the history (its origins ``known``) names them: a bare name's
        http origin when only that one is known (:mod:`auditor.schemes`)."""
        return [_known_as(site, site in self.bare, known) for site in self.sites]

    def __len__(self) -> int:
        return len(self.sites)

    def proxy_of(self, index: int) -> str | None:
        """The proxy the crawl list names for its ``index``-th site, or None."""
        return self.proxies[index] if index < len(self.proxies) else None

    def only(self, keep: Collection[str]) -> CrawlList:
        """The list with only the sites in ``keep`` (origins), in its order (a resumed
        fleet's sites left to do)."""
        wanted = set(keep)
        index = [i for i, site in enumerate(self.sites) if site in wanted]
        proxies = tuple(self.proxy_of(i) for i in index) if self.proxies else ()
        return CrawlList(
            tuple(self.sites[i] for i in index),
            tuple(self.targets[i] for i in index),
            self.duplicates,
            proxies,
            self.bare & wanted,
        )


def read_site_lines(handle: TextIO, name: str) -> list[tuple[str, str]]:
    """The sites written in an open crawl list, each with where it was (``name:line``)."""
    found = []
    for number, line in enumerate(handle, start=1):
        text = line.split("#", 1)[0].strip()
        if text:
            found.append((text, f"{name}:{number}"))
    return found


def _lines_of(path: str, stdin: TextIO | None) -> list[tuple[str, str]]:
    if path == "-":
        return read_site_lines(stdin or sys.stdin, "<stdin>")
    try:
        with Path(path).open(encoding="utf-8-sig") as handle:
            return read_site_lines(handle, path)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the crawl list {path}: {exc}") from exc


def crawl_list(
    sites: Iterable[str] = (), files: Iterable[str] = (), *, stdin: TextIO | None = None
) -> CrawlList:
    """The sites named on the command line then in ``files`` (``-``: ``stdin``), each once.

    Raises :class:`UsageError` naming the line of the first entry that is not a site.
    """
    given: list[tuple[str, str, str | None]] = [(text, "argument", None) for text in sites]
    for path in files:
        for text, where in _lines_of(path, stdin):
            site_text, proxy = _proxy_column(text, where)
            given.append((site_text, where, proxy))
    origins: dict[str, tuple[str, str | None]] = {}
    duplicates, bare = [], set()
    for text, where, proxy in given:
        try:
            origin, target = site_of(text)
        except UsageError as exc:
            raise UsageError(f"{where}: {exc}") from exc
        if origin in origins:
            duplicates.append(text)
            continue
        origins[origin] = (target.value if target.kind == "url" else origin, proxy)
        if not target.scheme_given:
            bare.add(origin)
    found = origins.values()
    return CrawlList(
        tuple(origins),
        tuple(target for target, _ in found),
        tuple(duplicates),
        tuple(proxy for _, proxy in found),
        frozenset(bare),
    )


def _known_as(site: str, bare: bool, known: Collection[str]) -> str:
    plain = "http://" + site.removeprefix("https://")
    return plain if bare and site not in known and plain in known else site


def _proxy_column(text: str, where: str) -> tuple[str, str | None]:
    """A crawl-list line's site and, in its second column, its proxy (checked)."""
    from auditor.http.proxy import ProxyError, check_proxy

    words = text.split()
    if len(words) == 1:
        return words[0], None
    if len(words) > 2:
        raise UsageError(
            f"{where}: a line holds a site and at most a proxy, got {len(words)} words"
        )
    try:
        return words[0], check_proxy(words[1])
    except ProxyError as exc:
        raise UsageError(f"{where}: {exc}") from exc
