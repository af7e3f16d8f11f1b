"""A plan's walk of a site's sitemaps, and the site's robots.txt read with it.

A plan first walks each site's sitemaps again, from where its freshest walk started
(the site's robots.txt, or the sitemap URL it was audited from), asking for every file
with the validators of that walk (``If-None-Match``, ``If-Modified-Since``): an unchanged
file costs a 304, and a trusted site's advanced lastmods are seen between audits. The
walk is kept (``plan_walks``), and the crawler's fetches made before it that were
waiting for a walk after them are judged against it (:mod:`auditor.crawl.resolve`): the
counts the plan weighs include them. A walk that reads nothing keeps the stored
inventory. The site's robots.txt as the walk read it (or as asked for, when the walk
started from a sitemap URL) is kept too (:mod:`auditor.planner.robots`).

Touches: the network, the database.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from auditor.planner.robots import stored_robots, walk_policy

if TYPE_CHECKING:
    import pandas as pd

    from auditor.history import History
    from auditor.models import SitemapFile
    from auditor.sampler.robots import RobotsPolicy
    from auditor.walker import WalkOptions

__all__ = ["Walked", "walk_site"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Walked:
    """A plan's walk of one site: its entries (None: nothing read, the stored walk
    stands) and the site's robots.txt policy."""

    entries: pd.DataFrame | None
    robots: RobotsPolicy


def walk_site(
    history: History,
    site: str,
    current: tuple[datetime, list[dict[str, Any]], pd.DataFrame],
    now: datetime,
    options: WalkOptions | None,
) -> Walked:
    """Walk ``site``'s sitemaps again from where its ``current`` walk started, keep the
    walk and its robots.txt, and judge the fetches that waited for a walk."""
    from auditor.crawl.resolve import resolve_walk
    from auditor.models import SitemapFile
    from auditor.walker.inventory import load_inventory
    from auditor.walker.reuse import PreviousRun

    files = [SitemapFile(**f) for f in current[1]]
    previous = PreviousRun(files, current[2])
    found = load_inventory(walk_target(site, files), options, previous=previous)
    policy = walk_policy(found.robots, site, options)
    history.save_robots(site, stored_robots(policy, now))
    if not found.readable or found.entries.empty:
        _log.warning("plan: %s: no sitemap read, planning on the stored walk", site)
        return Walked(None, policy)
    history.save_plan_walk(site, now, found.files, found.entries)
    resolve_walk(history, site, now, found.entries)  # the fetches made before it judged
    return Walked(found.entries, policy)


def walk_target(site: str, files: Sequence[SitemapFile]) -> str:
    """Where the stored walk started: the one sitemap URL its audit was given (a root
    file neither robots.txt named nor the ``/sitemap.xml`` fallback), else the site,
    walked from its robots.txt. A site audited from ``/docs/sitemap.xml`` is not found
    from its origin: the plan would keep planning on its stale walk."""
    roots = [f for f in files if f.parent is None]
    if len(roots) == 1 and not roots[0].via_robots and roots[0].url != site + "/sitemap.xml":
        return roots[0].url
    return site
