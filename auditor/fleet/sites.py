"""The crawl list of a fleet: sites from the command line and from files, each once.

A file holds one site a line (a site origin, a bare host name or one of the
site's sitemap URLs); ``#`` starts a comment and blank lines are skipped; ``-``
reads standard input. Two lines naming one site (``example.com`` and
``https://example.com/``, or a site and one of its sitemaps) are one site: the
first line wins, the others are counted as duplicates. A line that names no site
is a usage error that names the file and the line, before anything is audited.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
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
    sitemap URL to walk); ``duplicates`` are the lines left out as repeats.
    """

    sites: tuple[str, ...]
    targets: tuple[str, ...]
    duplicates: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.sites)


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
    given = [(text, "argument") for text in sites]
    for path in files:
        given += _lines_of(path, stdin)
    origins: dict[str, str] = {}
    duplicates = []
    for text, where in given:
        try:
            origin, target = site_of(text)
        except UsageError as exc:
            raise UsageError(f"{where}: {exc}") from exc
        if origin in origins:
            duplicates.append(text)
            continue
        origins[origin] = target.value if target.kind == "url" else origin
    return CrawlList(tuple(origins), tuple(origins.values()), tuple(duplicates))
