"""Walker: find, read and inventory every sitemap of a target, safely and fast.

Touches: nothing.
"""

from __future__ import annotations

from auditor.walker.dates import ParsedDate, parse_rfc822, parse_w3c
from auditor.walker.discovery import Target, classify_target, sitemaps_from_robots
from auditor.walker.walk import ProgressCallback, Walk  # before `def walk`: the function wins
from auditor.walkoptions import DEFAULT_MAX_FILES, PROTOCOL_MAX_URLS, WalkOptions

__all__ = [
    "DEFAULT_MAX_FILES",
    "PROTOCOL_MAX_URLS",
    "ParsedDate",
    "ProgressCallback",
    "Target",
    "Walk",
    "WalkOptions",
    "classify_target",
    "parse_rfc822",
    "parse_w3c",
    "sitemaps_from_robots",
    "walk",
]


def walk(
    target: str | Target,
    options: WalkOptions | None = None,
    *,
    on_progress: ProgressCallback | None = None,
) -> Walk:
    """Walk a site origin, a sitemap URL or a local file; iterate the result for entries.

    >>> w = walk("https://example.com")            # doctest: +SKIP
    >>> for entry in w: print(entry.loc, entry.lastmod)   # doctest: +SKIP
    >>> w.problems                                 # doctest: +SKIP
    """
    return Walk(target, options, on_progress=on_progress)
