"""A plan as a crawler consults it while it crawls: for each URL it meets, is it due,
with what meta; for each sitemap file, does anything in it need a fetch.

A crawler that reads sitemaps itself (Scrapy's ``SitemapSpider``) sees every entry of
every file. :class:`Frontier` answers its questions from one plan of its sites:

- a URL the plan lists is due, with its :class:`~auditor.planner.make.PlannedFetch`
  and its rank (0 first) within its host's share of the plan;
- a URL the sites' freshest walk lists but the plan does not is not due;
- a URL of a planned site that the walk does not list (new since, or found by
  following links) is the crawler's business: not the plan's to drop;
- a sitemap file is worth reading when it, or a file it leads to, lists a due URL, or
  when the walk does not know it (a new sub-sitemap).

The walk's URLs are kept as 64-bit hashes in a sorted array (8 bytes a URL), so a
frontier over a million listed URLs costs some 8 MB besides its planned fetches.

Touches: the network, the database.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from auditor.crawl.record import site_origin

if TYPE_CHECKING:
    from auditor.history import History
    from auditor.planner.make import PlannedFetch
    from auditor.walker import WalkOptions

__all__ = ["Frontier", "UrlSet"]


class UrlSet:
    """A set of URLs as sorted 64-bit hashes: membership in ``log n``, 8 bytes a URL.

    Python's string hash is salted per process: a UrlSet is built and read in one."""

    def __init__(self, *parts: Iterable[str]) -> None:
        hashes = [np.fromiter((hash(u) for u in urls), dtype=np.int64) for urls in parts]
        self._hashes: npt.NDArray[np.int64] = np.unique(
            np.concatenate(hashes) if hashes else np.zeros(0, dtype=np.int64)
        )

    @classmethod
    def union(cls, sets: Sequence[UrlSet]) -> UrlSet:
        """One set of the URLs of ``sets``."""
        joined = cls()
        if sets:
            joined._hashes = np.unique(np.concatenate([s._hashes for s in sets]))
        return joined

    def __contains__(self, url: object) -> bool:
        if not isinstance(url, str):
            return False
        h = hash(url)
        i = int(np.searchsorted(self._hashes, h))
        return i < len(self._hashes) and int(self._hashes[i]) == h

    def __len__(self) -> int:
        return len(self._hashes)


@dataclass(frozen=True)
class Frontier:
    """One plan of ``sites`` (origins) as a crawler asks it (module docstring).

    ``fetches`` the planned fetches by URL; ``ranks`` each one's place within its host's
    share of the plan (0 first); ``listed`` the URLs of the sites' freshest walks;
    ``parents`` each sitemap file of those walks with the index that listed it (None: a
    root); ``due_files`` the files that list a due URL, with their ancestors;
    ``disallowed`` the sites whose robots.txt kept listed URLs out of the plan, with how
    many (those URLs are listed, so not due).
    """

    sites: frozenset[str]
    fetches: Mapping[str, PlannedFetch]
    ranks: Mapping[str, int]
    listed: UrlSet
    parents: Mapping[str, str | None]
    due_files: frozenset[str]
    disallowed: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        fetches: Iterable[PlannedFetch],
        walks: Iterable[tuple[str, Sequence[Mapping[str, Any]], Iterable[str]]],
        disallowed: Mapping[str, int] | None = None,
    ) -> Frontier:
        """A frontier from a plan's ``fetches`` (in plan order: by host, highest
        priority first) and the sites' freshest ``walks``: ``(site, files as dicts with
        ``url`` and ``parent``, listed URLs)``; ``disallowed``: the URLs robots.txt kept
        out of the plan, by site."""
        planned: dict[str, PlannedFetch] = {}
        ranks: dict[str, int] = {}
        per_host: dict[str, int] = {}
        for fetch in fetches:
            if fetch.url in planned:
                continue  # the same URL later in a longer horizon: its first fetch counts
            host = _host(fetch.site)
            ranks[fetch.url] = per_host.get(host, 0)
            per_host[host] = ranks[fetch.url] + 1
            planned[fetch.url] = fetch
        sites: set[str] = set()
        parents: dict[str, str | None] = {}
        listed: list[UrlSet] = []
        for site, files, locs in walks:  # one site's walk in memory at a time
            sites.add(site)
            parents.update({str(f["url"]): f.get("parent") for f in files})
            listed.append(UrlSet(locs))
        due = _with_ancestors({f.sitemap for f in planned.values()}, parents)
        left_out = {site: n for site, n in (disallowed or {}).items() if n}
        return cls(frozenset(sites), planned, ranks, UrlSet.union(listed), parents, due, left_out)

    @classmethod
    def load(
        cls,
        history: History,
        sites: Sequence[str] | None = None,
        *,
        now: datetime | None = None,
        budget: int | None = None,
        horizon_days: float = 1.0,
        walk: bool = True,
        walk_options: WalkOptions | None = None,
    ) -> Frontier:
        """Plan ``sites`` (None: every site in the history; sites not in it are left
        out) as :func:`~auditor.planner.make.plan` does, walking their sitemaps first
        unless ``walk`` is false, and read the walks the plan was made on."""
        from auditor.planner.make import plan

        known = {record.origin for record in history.sites()}
        chosen = sorted(known) if sites is None else [s for s in sites if s in known]
        disallowed: dict[str, int] = {}
        fetches = list(
            plan(
                history,
                chosen,
                now=now,
                budget=budget,
                horizon_days=horizon_days,
                walk=walk,
                walk_options=walk_options,
                on_robots=lambda found: disallowed.__setitem__(found.site, found.urls),
            )
        )
        return cls.of(fetches, _walks(history, chosen), disallowed)

    def covers(self, url: str) -> bool:
        """True when ``url`` belongs to one of the planned sites."""
        return site_origin(url) in self.sites

    def fetch(self, url: str) -> PlannedFetch | None:
        """The planned fetch of ``url``, if any."""
        return self.fetches.get(url)

    def is_sitemap(self, url: str) -> bool:
        """True when ``url`` is a sitemap file of the walks."""
        return url in self.parents

    def is_due(self, url: str) -> bool:
        """False only for a URL the walks list and the plan does not (module docstring)."""
        return url in self.fetches or url not in self.listed or not self.covers(url)

    def keeps_sitemap(self, url: str) -> bool:
        """True when the sitemap file ``url`` is worth reading: it leads to a due URL, or
        the walks do not know it."""
        return url in self.due_files or url not in self.parents

    def meta(self, url: str) -> dict[str, Any] | None:
        """What a crawler's request for ``url`` carries: the plan's figures, as JSON."""
        fetch = self.fetches.get(url)
        if fetch is None:
            return None
        return {**fetch.to_dict(), "rank": self.ranks[url]}

    def __len__(self) -> int:
        return len(self.fetches)


def _host(site: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(site).hostname or site


def _with_ancestors(files: Iterable[str], parents: Mapping[str, str | None]) -> frozenset[str]:
    """``files`` and every index above them (a loop in the parents stops the climb)."""
    found: set[str] = set()
    for file in files:
        current: str | None = file
        while current is not None and current not in found:
            found.add(current)
            current = parents.get(current)
    return frozenset(found)


def _walks(
    history: History, sites: Sequence[str]
) -> Iterable[tuple[str, Sequence[Mapping[str, Any]], Iterable[str]]]:
    for site in sites:
        current = history.current_inventory(site)
        if current is not None:
            _, files, entries = current
            yield site, files, (str(loc) for loc in entries["loc"])
